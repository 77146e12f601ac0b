package dev.sandboxkit.docker;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.docker.internal.engine.DockerHost;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SandboxDriverProvider;

import java.nio.file.Files;
import java.util.Optional;

/**
 * Provides the {@code docker} driver, found with {@link java.util.ServiceLoader}. Preferred over other
 * drivers (priority 100) whenever a Docker engine is configured or its socket exists.
 */
public final class DockerDriverProvider implements SandboxDriverProvider {
    static final String NAME = "docker";

    /** Creates the provider; {@link java.util.ServiceLoader} calls this. */
    public DockerDriverProvider() {
    }

    /**
     * The driver's name.
     *
     * @return {@code docker}
     */
    @Override
    public String name() {
        return NAME;
    }

    /**
     * Ordering among available providers.
     *
     * @return 100
     */
    @Override
    public int priority() {
        return 100;
    }

    /**
     * Usable when the configured host is a TCP address, or its unix socket file exists. Does not connect.
     *
     * @param context the manager's settings
     * @return empty if usable, otherwise why not
     */
    @Override
    public Optional<String> unavailableReason(DriverContext context) {
        DockerHost host;
        try {
            host = DockerHost.resolve(context);
        } catch (SandboxConfigurationException e) {
            return Optional.of(e.getMessage());
        }
        if (!host.unix() || Files.exists(host.socketPath())) {
            return Optional.empty();
        }
        return Optional.of("no Docker socket at " + host.socketPath()
                + " (start the engine, or set DOCKER_HOST or -Dsandboxkit." + DockerHost.PROPERTY + ")");
    }

    /**
     * Creates the driver. Does not connect: the first call does.
     *
     * @param context the manager's settings
     * @return a new driver
     * @throws SandboxConfigurationException if a setting is invalid or the host needs TLS
     */
    @Override
    public SandboxDriver create(DriverContext context) {
        return new DockerSandboxDriver(context);
    }
}
