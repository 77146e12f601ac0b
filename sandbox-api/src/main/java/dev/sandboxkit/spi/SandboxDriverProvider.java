package dev.sandboxkit.spi;

import dev.sandboxkit.internal.DriverResolver;
import org.jspecify.annotations.Nullable;

import java.util.List;
import java.util.Optional;

/**
 * Creates a {@link SandboxDriver}; found with {@link java.util.ServiceLoader}. Register an
 * implementation in {@code META-INF/services/dev.sandboxkit.spi.SandboxDriverProvider}.
 *
 * <p>Discovery order: a driver instance given to the builder wins, then a name given to the builder,
 * then the system property {@code sandboxkit.driver}, then the available provider with the highest
 * {@link #priority()}.
 */
public interface SandboxDriverProvider {

    /**
     * The name users select the driver by.
     *
     * @return name, for example {@code docker}
     */
    String name();

    /**
     * Ordering among available providers when none is named; higher wins.
     *
     * @return priority
     */
    default int priority() {
        return 0;
    }

    /**
     * Cheaply tells whether this driver could work here (a socket exists, a kubeconfig is found),
     * without connecting.
     *
     * @param context the manager's settings
     * @return empty if usable, otherwise why not (shown when no provider fits)
     */
    default Optional<String> unavailableReason(DriverContext context) {
        return Optional.empty();
    }

    /**
     * The settings this driver reads from {@link DriverContext#properties()}, for documentation and tools (the
     * drivers' tables in docs/configuration.md are checked against them).
     *
     * @return the driver's keys with their types, defaults and descriptions; empty by default
     */
    default List<SettingKey> settingKeys() {
        return List.of();
    }

    /**
     * Creates the driver. The manager closes it.
     *
     * @param context the manager's settings
     * @return a new driver
     */
    SandboxDriver create(DriverContext context);

    /**
     * Finds a provider as {@code SandboxManager.builder()} does, for an entry point that creates the driver itself
     * (to ping the engine while its manager is not started) and names the settings its own way: the provider named
     * {@code name}, or, without a name, the available one with the highest {@link #priority()}. Failures name the
     * settings: the driver's name by {@code nameSetting}, driver settings by
     * {@link DriverContext#settingName(String)}.
     *
     * @param name        the driver's name, or {@code null} (or blank) to detect one
     * @param nameSetting how the user names the driver at this entry point, for example {@code sandboxkit.driver}
     * @param context     the settings the providers are checked with
     * @param loader      where providers are looked up ({@link java.util.ServiceLoader})
     * @return the provider; its {@link #create(DriverContext)} makes the driver
     * @throws dev.sandboxkit.SandboxConfigurationException if no provider has the name (the message suggests the
     *                                                      nearest), or none is available (with each one's reason)
     */
    static SandboxDriverProvider find(@Nullable String name, String nameSetting, DriverContext context,
                                      ClassLoader loader) {
        return DriverResolver.find(name, nameSetting, context, loader);
    }
}
