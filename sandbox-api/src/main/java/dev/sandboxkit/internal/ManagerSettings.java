package dev.sandboxkit.internal;

import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SessionStore;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The builder's choices, unresolved: {@code null} means "use the default". Internal.
 */
public record ManagerSettings(
        String driverName,
        SandboxDriver driver,
        Path workspaceRoot,
        Duration idleTimeout,
        Duration reaperInterval,
        Duration leaseDuration,
        SessionStore store,
        Clock clock,
        ScheduledExecutorService scheduler,
        String instanceId,
        Map<String, String> driverProperties) {

    /** Copies. */
    public ManagerSettings {
        driverProperties = Map.copyOf(driverProperties);
    }
}
