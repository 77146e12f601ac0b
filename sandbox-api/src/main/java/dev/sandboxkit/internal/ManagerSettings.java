package dev.sandboxkit.internal;

import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxListener;
import dev.sandboxkit.WarmPool;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SessionStore;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
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
        Map<String, String> driverProperties,
        SandboxListener listener,
        List<WarmPool> warmPools,
        Duration reconcileInterval,
        String fleet,
        FileLimits fileLimits) {

    /** Copies. */
    public ManagerSettings {
        driverProperties = Map.copyOf(driverProperties);
        warmPools = List.copyOf(warmPools);
    }
}
