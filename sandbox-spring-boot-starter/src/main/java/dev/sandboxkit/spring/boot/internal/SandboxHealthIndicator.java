package dev.sandboxkit.spring.boot.internal;

import dev.sandboxkit.ManagerStats;
import dev.sandboxkit.SandboxManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

import java.util.concurrent.atomic.AtomicReference;

/**
 * UP when the sandbox engine answers a ping ({@code SandboxDriver.ping()}: the Docker engine's {@code /_ping}),
 * DOWN with the error otherwise. The manager has no ping of its own and its stats never touch the engine, so the
 * starter keeps the driver it created for it. An application's own manager is reported from its stats only.
 *
 * <p>Health is probed often (every request to the endpoint, every Kubernetes probe), so a change of state is logged
 * once, UP to DOWN at WARN with the cause and DOWN to UP at INFO, and the probes in between at DEBUG; stack traces
 * only at DEBUG.
 */
public final class SandboxHealthIndicator implements HealthIndicator {
    private static final Logger log = LoggerFactory.getLogger(SandboxHealthIndicator.class);

    private final SandboxManager manager;
    private final SandboxBackend backend;
    private final AtomicReference<Status> last = new AtomicReference<>();

    /**
     * Creates the indicator.
     *
     * @param manager the manager
     * @param backend the starter's driver, or {@code null} when the application built the manager itself
     */
    public SandboxHealthIndicator(SandboxManager manager, SandboxBackend backend) {
        this.manager = manager;
        this.backend = backend;
    }

    @Override
    public Health health() {
        Health.Builder builder = Health.unknown()
                .withDetail("driver", manager.driverName()).withDetail("instanceId", manager.instanceId());
        boolean started = !(manager instanceof LazySandboxManager lazy) || lazy.started();
        builder.withDetail("started", started);
        if (backend != null) {
            try {
                backend.driver().ping();
            } catch (RuntimeException e) {
                // The same "error" detail as Boot's Health.Builder.down(Exception), without its log line per probe.
                changedTo(Status.DOWN, e);
                return builder.down().withDetail("error", e.getClass().getName() + ": " + e.getMessage()).build();
            }
        } else {
            builder.withDetail("engine", "not checked: the application built its own SandboxManager");
        }
        ManagerStats s = manager.stats();
        changedTo(Status.UP, null);
        return builder.up().withDetail("active", s.active()).withDetail("suspended", s.suspended())
                .withDetail("pooled", s.poolSize()).build();
    }

    private void changedTo(Status now, RuntimeException cause) {
        Status before = last.getAndSet(now);
        if (now.equals(before)) {
            if (cause != null) {
                log.debug("Sandbox engine still DOWN ({} driver): {}", manager.driverName(), cause.toString());
            } else {
                log.debug("Sandbox engine still UP ({} driver)", manager.driverName());
            }
        } else if (cause != null) {
            log.warn("Sandbox engine is DOWN ({} driver, manager {}): {}", manager.driverName(), manager.instanceId(),
                    cause.toString());
            log.debug("Sandbox engine DOWN", cause);
        } else if (before != null) {
            log.info("Sandbox engine is UP again ({} driver, manager {})", manager.driverName(), manager.instanceId());
        } else {
            log.debug("Sandbox engine is UP ({} driver)", manager.driverName());
        }
    }
}
