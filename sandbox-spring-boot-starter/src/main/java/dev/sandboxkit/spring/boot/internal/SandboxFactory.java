package dev.sandboxkit.spring.boot.internal;

import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxListener;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.WarmPool;
import dev.sandboxkit.spi.ArchiveStore;
import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.tools.SandboxTools;
import dev.sandboxkit.tools.SessionResolver;

import java.util.List;

/**
 * Builds the manager and the tool set from the bound {@link SandboxConfig} with the library's own builders
 * ({@link SandboxManager#builder(SandboxConfig)}, {@link SandboxTools.Builder#config(SandboxConfig)}), which check
 * every value and name its key; the starter adds only the objects it owns (driver, store, listeners, the spec bean).
 */
public final class SandboxFactory {
    private SandboxFactory() {
    }

    /**
     * The manager: built and started now, or, with {@code sandboxkit.fail-fast=false} and the backend down, a
     * manager that starts on first use.
     *
     * @param config      the bound configuration
     * @param failFast    {@code sandboxkit.fail-fast}
     * @param backend     the driver and identity
     * @param store       the session store, or {@code null} for the manager's in-memory one
     * @param defaultSpec the default spec bean (the configuration's, or the application's), or {@code null}
     * @param listeners   the application's listeners, possibly none
     * @param archive     the application's archive store, or {@code null}: with {@code sandboxkit.archive-after} it
     *                    turns the archive tier on
     * @return the manager
     * @throws SandboxConfigurationException naming the property, if a value is invalid
     * @throws SandboxUnavailableException   if the backend cannot be reached and {@code sandboxkit.fail-fast} is on
     */
    public static SandboxManager manager(SandboxConfig config, boolean failFast, SandboxBackend backend,
                                         SessionStore store, SandboxSpec defaultSpec, List<SandboxListener> listeners,
                                         ArchiveStore archive) {
        SandboxConfig c = config.copy();
        // The backend's identity (a generated instance id included), so that manager and driver agree.
        c.setInstanceId(backend.instanceId());
        c.setWorkspaceRoot(backend.workspaceRoot());
        // The warm pool is for the spec bean, which may be the application's own rather than the configuration's.
        WarmPool pool = c.getWarmPoolSize() == 0 ? null : warmPool(c, defaultSpec);
        c.setWarmPoolSize(0);
        SandboxManager.Builder b = SandboxManager.builder(c).driver(backend.driver());
        if (store != null) {
            b.store(store);
        }
        listeners.forEach(b::listener);
        if (archive != null && c.getArchiveAfter() != null) {
            b.archive(archive, c.getArchiveAfter());
        }
        if (pool != null) {
            b.warmPool(pool);
        }
        if (!failFast) {
            LazySandboxManager lazy = new LazySandboxManager(b::build, backend.instanceId(), backend.driver().name(),
                    c.getIdleTimeout());
            lazy.tryStart();
            return lazy;
        }
        try {
            return b.build();
        } catch (SandboxUnavailableException e) {
            throw new SandboxUnavailableException("The sandbox backend cannot be reached (sandboxkit.driver="
                    + backend.driver().name() + "): " + e.getMessage() + " Start it, point the driver at it with "
                    + "its sandboxkit.* settings (for Docker: sandboxkit.docker.host), or set "
                    + "sandboxkit.fail-fast=false to start without it (the health indicator then reports DOWN).", e);
        }
    }

    private static WarmPool warmPool(SandboxConfig c, SandboxSpec spec) {
        if (spec == null) {
            throw new SandboxConfigurationException(SandboxConfig.PREFIX + "warm-pool.size: a warm pool needs the "
                    + "default spec: set sandboxkit.spec.image or define a SandboxSpec bean");
        }
        try {
            return c.warmPool(spec);
        } catch (IllegalArgumentException e) {
            throw new SandboxConfigurationException(SandboxConfig.PREFIX + "warm-pool: " + e.getMessage(), e);
        }
    }

    /**
     * The tool set: the configuration's {@code tools.*} through the library's builder, on the spec bean.
     *
     * @param config   the bound configuration
     * @param manager  the manager
     * @param spec     the default spec bean
     * @param resolver the application's resolver, or {@code null} for the configuration's prefix
     * @return the tool set
     * @throws SandboxConfigurationException naming the property, if a value is invalid
     */
    public static SandboxTools tools(SandboxConfig config, SandboxManager manager, SandboxSpec spec,
                                     SessionResolver resolver) {
        SandboxTools.Builder b = SandboxTools.builder(manager).config(config).spec(spec);
        if (resolver != null) {
            b.resolver(resolver);
        }
        return b.build();
    }
}
