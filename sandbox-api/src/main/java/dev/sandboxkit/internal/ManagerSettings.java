package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxListener;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.WarmPool;
import dev.sandboxkit.spi.ArchiveStore;
import dev.sandboxkit.spi.ComputeDriver;
import dev.sandboxkit.spi.EgressResolver;
import dev.sandboxkit.spi.WorkspaceBackend;
import dev.sandboxkit.spi.SessionStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The builder's choices: the settings, and the objects no setting can name ({@code null}: the manager makes its own).
 * The one public type of this package, so that {@link dev.sandboxkit.SandboxManager.Builder} can hand its choices to
 * the engine; not an API (the package is not exported).
 *
 * @param config       the settings (a copy of the builder's)
 * @param compute      the driver's compute half, or {@code null} to create a driver from {@code config}
 * @param workspaces   the driver's workspace half; {@code null} exactly when {@code compute} is
 * @param store        the session store, or {@code null} for an in-memory one of the manager's own
 * @param clock        the clock, or {@code null} for the system's
 * @param scheduler    the housekeeping scheduler, or {@code null} for the manager's own
 * @param listeners    event listeners
 * @param warmPools    warm pools
 * @param ioExecutor   the executor of port forwards and packing, or {@code null} for the manager's own
 * @param archiveStore the archive tier's store, or {@code null} for none
 * @param egressResolver how the egress proxy resolves names, or {@code null} for the system's DNS
 */
public record ManagerSettings(
        SandboxConfig config,
        ComputeDriver compute,
        WorkspaceBackend workspaces,
        SessionStore store,
        Clock clock,
        ScheduledExecutorService scheduler,
        List<SandboxListener> listeners,
        List<WarmPool> warmPools,
        Executor ioExecutor,
        ArchiveStore archiveStore,
        EgressResolver egressResolver) {
    private static final Logger log = LoggerFactory.getLogger(ManagerSettings.class);

    /** Copies. */
    public ManagerSettings {
        warmPools = List.copyOf(warmPools);
        listeners = List.copyOf(listeners);
    }

    /**
     * The starting point of {@code SandboxManager.builder()}: the defaults, then the {@code sandboxkit.*} system
     * properties. The driver's name and settings are left to the driver resolution and the driver, which read them
     * (and name them as system properties in their messages); a property that names no setting is logged and skipped, since other code may share the prefix.
     *
     * @return the settings
     * @throws SandboxConfigurationException naming a property whose value is invalid
     */
    public static SandboxConfig systemProperties() {
        SandboxConfig config = new SandboxConfig();
        Map<String, String> ordered = new TreeMap<>();
        System.getProperties().stringPropertyNames().stream().filter(n -> n.startsWith(SandboxConfig.PREFIX))
                .forEach(n -> ordered.put(n, System.getProperty(n)));
        for (Map.Entry<String, String> e : ordered.entrySet()) {
            String key = e.getKey().substring(SandboxConfig.PREFIX.length());
            if (key.equals("driver")) {
                continue; // DriverResolver reads it, so that its messages name it as the system property
            }
            if (SandboxConfig.keys().stream().noneMatch(k -> k.name().equals(key) || matches(k.name(), key))) {
                if (!key.contains(".") || key.startsWith("spec.") || key.startsWith("warm-pool.")
                        || key.startsWith("tools.")) {
                    if (!key.equals("workspaceRoot")) {
                        log.debug("System property {} names no sandboxkit setting; ignored", e.getKey());
                        continue;
                    }
                } else {
                    continue; // a driver setting: the driver reads it
                }
            }
            config.set(key, e.getValue());
        }
        return config;
    }

    private static boolean matches(String pattern, String key) {
        return pattern.endsWith(".*") && key.startsWith(pattern.substring(0, pattern.length() - 1));
    }

    /**
     * Resolves what is left to resolve and starts a manager on these settings.
     *
     * @return the running manager
     */
    public SandboxManager start() {
        return ManagerFacade.start(this);
    }
}
