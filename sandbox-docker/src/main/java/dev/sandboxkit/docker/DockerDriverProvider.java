package dev.sandboxkit.docker;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.docker.internal.engine.EngineDiscovery;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SandboxDriverProvider;
import dev.sandboxkit.spi.SettingKey;

import java.util.List;
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
     * Usable when the configured engine is a TCP address or an existing unix socket, or, with nothing configured,
     * when one of the sockets discovery would probe exists. Does not connect.
     *
     * @param context the manager's settings
     * @return empty if usable, otherwise why not
     * @throws SandboxConfigurationException if a {@code docker.*} setting is unknown or invalid (so that a typo is
     *                                       not passed over in favour of another driver)
     */
    @Override
    public Optional<String> unavailableReason(DriverContext context) {
        return EngineDiscovery.system().unavailableReason(context);
    }

    /**
     * The driver's settings.
     *
     * @return {@link DockerSettings#keys()}
     */
    @Override
    public List<SettingKey> settingKeys() {
        return DockerSettings.keys();
    }

    /**
     * Creates the driver. Finds the engine ({@code docker.host}, {@code DOCKER_HOST}, the Docker context, else the
     * first local socket that answers a ping); a configured engine is not contacted: the first call does.
     *
     * @param context the manager's settings
     * @return a new driver
     * @throws SandboxConfigurationException if a setting is invalid or unknown ({@link DockerSettings}), the engine is remote (workdirs are host
     *                                       directories), or plain TCP goes beyond loopback
     * @throws DockerTlsException            if the TLS files cannot be used
     * @throws dev.sandboxkit.SandboxUnavailableException if nothing is configured and no local socket answers
     */
    @Override
    public SandboxDriver create(DriverContext context) {
        return new DockerSandboxDriver(context);
    }
}
