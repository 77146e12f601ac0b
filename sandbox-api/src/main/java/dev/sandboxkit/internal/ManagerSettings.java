package dev.sandboxkit.internal;

import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxListener;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.WarmPool;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SessionStore;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The builder's choices, unresolved: {@code null} means "use the default". The one public type of this package,
 * so that {@link dev.sandboxkit.SandboxManager.Builder} can hand its choices to the engine; not an API (the
 * package is not exported).
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
        List<SandboxListener> listeners,
        List<WarmPool> warmPools,
        Duration reconcileInterval,
        String fleet,
        FileLimits fileLimits,
        Executor ioExecutor,
        dev.sandboxkit.spi.ArchiveStore archiveStore,
        Duration archiveAfter,
        Duration orphanGrace) {

    /** Copies. */
    public ManagerSettings {
        driverProperties = Map.copyOf(driverProperties);
        warmPools = List.copyOf(warmPools);
        listeners = List.copyOf(listeners);
    }

    /**
     * Resolves the defaults and starts a manager on these settings.
     *
     * @return the running manager
     */
    public SandboxManager start() {
        return LifecycleEngine.start(this);
    }
}
