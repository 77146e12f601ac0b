package dev.sandboxkit.spring.boot.internal;

import dev.sandboxkit.ManagerStats;
import dev.sandboxkit.SandboxManager;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * UP when the sandbox engine answers a ping ({@code SandboxDriver.ping()}: the Docker engine's {@code /_ping}),
 * DOWN with the error otherwise. The manager has no ping of its own and its stats never touch the engine, so the
 * starter keeps the driver it created for it. An application's own manager is reported from its stats only.
 */
public final class SandboxHealthIndicator extends AbstractHealthIndicator {
    private final SandboxManager manager;
    private final SandboxBackend backend;

    /**
     * Creates the indicator.
     *
     * @param manager the manager
     * @param backend the starter's driver, or {@code null} when the application built the manager itself
     */
    public SandboxHealthIndicator(SandboxManager manager, SandboxBackend backend) {
        super("Sandbox health check failed");
        this.manager = manager;
        this.backend = backend;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("driver", manager.driverName()).withDetail("instanceId", manager.instanceId());
        boolean started = !(manager instanceof LazySandboxManager lazy) || lazy.started();
        builder.withDetail("started", started);
        if (backend != null) {
            backend.driver().ping(); // throws when the engine cannot be reached: DOWN with the error
        } else {
            builder.withDetail("engine", "not checked: the application built its own SandboxManager");
        }
        ManagerStats s = manager.stats();
        builder.up().withDetail("active", s.active()).withDetail("suspended", s.suspended())
                .withDetail("pooled", s.poolSize());
    }
}
