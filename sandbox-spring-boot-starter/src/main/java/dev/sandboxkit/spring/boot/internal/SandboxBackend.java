package dev.sandboxkit.spring.boot.internal;

import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SandboxDriverProvider;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Set;
import java.util.UUID;

/**
 * The driver the auto-configured manager runs on, with the identity it was created for. The starter creates the
 * driver itself, rather than letting the manager pick one by name, so that the health indicator can ping the
 * engine even while the manager is not started ({@code sandboxkit.fail-fast=false}). Closed after the manager.
 */
public final class SandboxBackend implements AutoCloseable {
    private static final String DRIVER = SandboxConfig.PREFIX + "driver";

    private final SandboxDriver driver;
    private final boolean ownsDriver;
    private final String instanceId;
    private final Path workspaceRoot;

    private SandboxBackend(SandboxDriver driver, boolean ownsDriver, String instanceId, Path workspaceRoot) {
        this.driver = driver;
        this.ownsDriver = ownsDriver;
        this.instanceId = instanceId;
        this.workspaceRoot = workspaceRoot;
    }

    /**
     * Resolves the instance id and workspace root from the configuration, and the driver: the application's, or the
     * core's resolution ({@link SandboxDriverProvider#find}) of {@code sandboxkit.driver}, else detection.
     *
     * @param config       the bound configuration
     * @param legacyKeys   the driver settings given as {@code sandboxkit.driver-properties.<key>}, named so in messages
     * @param failFast     {@code sandboxkit.fail-fast}, for the message when detection fails
     * @param ownDriver    the application's driver bean, or {@code null}
     * @param classLoader  where driver providers are looked up
     * @return the backend
     * @throws SandboxConfigurationException naming the property, if no driver fits
     */
    public static SandboxBackend create(SandboxConfig config, Set<String> legacyKeys, boolean failFast,
                                        SandboxDriver ownDriver, ClassLoader classLoader) {
        String instanceId = config.getInstanceId() != null ? config.getInstanceId()
                : "m-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12); // as the manager would
        Path root = config.getWorkspaceRoot().toAbsolutePath().normalize();
        if (ownDriver != null) {
            return new SandboxBackend(ownDriver, false, instanceId, root);
        }
        DriverContext context = new DriverContext(instanceId, root, Clock.systemUTC(), config.getDriverSettings(),
                key -> SandboxConfig.PREFIX + (legacyKeys.contains(key)
                        ? SandboxConfigBinder.LEGACY_DRIVER_SETTINGS + "." : "") + key);
        return new SandboxBackend(resolve(config.getDriver(), failFast, context, classLoader), true, instanceId, root);
    }

    /** The core's resolution, with Boot's names for the settings; a failed detection also says what fail-fast needs. */
    private static SandboxDriver resolve(String name, boolean failFast, DriverContext context, ClassLoader classLoader) {
        SandboxDriverProvider provider;
        try {
            provider = SandboxDriverProvider.find(name, DRIVER, context, classLoader);
        } catch (SandboxConfigurationException e) {
            if (name != null && !name.isBlank()) {
                throw e;
            }
            // Detection needs the engine's socket; only a named driver can start without it.
            throw new SandboxConfigurationException(e.getMessage() + (failFast
                    ? " To start without the engine, set " + DRIVER + "=docker and sandboxkit.fail-fast=false (the "
                    + "health indicator reports DOWN until it answers)."
                    : " sandboxkit.fail-fast=false starts without the engine only with the driver named: set " + DRIVER
                    + "=docker."), e);
        }
        try {
            return provider.create(context);
        } catch (SandboxConfigurationException e) {
            throw new SandboxConfigurationException("Invalid sandboxkit.* settings for the '" + provider.name()
                    + "' driver: " + e.getMessage(), e);
        }
    }

    /**
     * The driver.
     *
     * @return the driver
     */
    public SandboxDriver driver() {
        return driver;
    }

    /**
     * The manager's instance id, also the driver's.
     *
     * @return the instance id
     */
    public String instanceId() {
        return instanceId;
    }

    /**
     * Where workdirs are created.
     *
     * @return an absolute path
     */
    public Path workspaceRoot() {
        return workspaceRoot;
    }

    /** Closes the driver if the starter created it (an application's driver bean is closed by its own context). */
    @Override
    public void close() {
        if (ownsDriver) {
            driver.close();
        }
    }
}
