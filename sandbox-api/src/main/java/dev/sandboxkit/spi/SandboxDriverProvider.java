package dev.sandboxkit.spi;

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
     * Creates the driver. The manager closes it.
     *
     * @param context the manager's settings
     * @return a new driver
     */
    SandboxDriver create(DriverContext context);
}
