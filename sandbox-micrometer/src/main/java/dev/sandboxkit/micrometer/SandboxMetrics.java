package dev.sandboxkit.micrometer;

import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxListener;
import dev.sandboxkit.SandboxManager;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Turns lifecycle events into Micrometer meters.
 *
 * <pre>{@code
 * SandboxMetrics metrics = new SandboxMetrics(registry);
 * SandboxManager manager = SandboxManager.builder().listener(metrics).build();
 * metrics.bindGauges(manager);
 * }</pre>
 *
 * <ul>
 *   <li>{@code sandboxkit.events} counter, tag {@code event}: created, resumed, exec.started, exec.finished,
 *       idle.reaped, lifetime.killed, orphan.removed, destroyed</li>
 *   <li>{@code sandboxkit.phase} timer, tag {@code phase}: image-check, create, start, post-create, first-exec,
 *       pool-checkout</li>
 *   <li>{@code sandboxkit.start} timer, tag {@code kind} (created, resumed, pool): the whole start step</li>
 *   <li>{@code sandboxkit.exec} timer, tag {@code termination}: every exec's duration</li>
 *   <li>gauges {@code sandboxkit.sandboxes.active}, {@code sandboxkit.sessions.suspended},
 *       {@code sandboxkit.pool.size}</li>
 * </ul>
 *
 * <p>Called on the threads that deliver events (see {@link SandboxListener}); meters are thread-safe and
 * cached, so an event costs a map lookup and an increment.
 */
public final class SandboxMetrics implements SandboxListener {
    private final MeterRegistry registry;
    private final Tags tags;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();

    /**
     * Creates the listener.
     *
     * @param registry where meters are registered
     */
    public SandboxMetrics(MeterRegistry registry) {
        this(registry, Tags.empty());
    }

    /**
     * Creates the listener with common tags (for example the manager or fleet name).
     *
     * @param registry where meters are registered
     * @param tags     tags added to every meter
     */
    public SandboxMetrics(MeterRegistry registry, Iterable<Tag> tags) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.tags = Tags.of(tags);
    }

    /**
     * Registers the gauges, read from {@link SandboxManager#stats()} when the registry is scraped.
     *
     * @param manager the manager built with this listener
     */
    public void bindGauges(SandboxManager manager) {
        Objects.requireNonNull(manager, "manager");
        Gauge.builder("sandboxkit.sandboxes.active", manager, m -> m.stats().active()).tags(tags)
                .description("containers the manager holds").register(registry);
        Gauge.builder("sandboxkit.sessions.suspended", manager, m -> m.stats().suspended()).tags(tags)
                .description("sessions suspended by the manager and not resumed since").register(registry);
        Gauge.builder("sandboxkit.pool.size", manager, m -> m.stats().poolSize()).tags(tags)
                .description("pre-started sandboxes waiting in warm pools").register(registry);
    }

    @Override
    public void onEvent(SandboxEvent event) {
        if (event instanceof SandboxEvent.Created e) {
            count("created");
            phases(e.phases());
            timer("sandboxkit.start", "kind", e.fromPool() ? "pool" : "created").record(e.total());
        } else if (event instanceof SandboxEvent.Resumed e) {
            count("resumed");
            phases(e.phases());
            timer("sandboxkit.start", "kind", "resumed").record(e.total());
        } else if (event instanceof SandboxEvent.ExecStarted) {
            count("exec.started");
        } else if (event instanceof SandboxEvent.ExecFinished e) {
            count("exec.finished");
            timer("sandboxkit.exec", "termination", e.result().termination().name().toLowerCase()).record(e.result().duration());
            if (e.firstExec()) {
                timer("sandboxkit.phase", "phase", SandboxEvent.PHASE_FIRST_EXEC).record(e.result().duration());
            }
        } else if (event instanceof SandboxEvent.IdleReaped) {
            count("idle.reaped");
        } else if (event instanceof SandboxEvent.LifetimeKilled) {
            count("lifetime.killed");
        } else if (event instanceof SandboxEvent.OrphanRemoved) {
            count("orphan.removed");
        } else if (event instanceof SandboxEvent.Destroyed) {
            count("destroyed");
        }
    }

    private void phases(Map<String, Duration> phases) {
        phases.forEach((phase, took) -> timer("sandboxkit.phase", "phase", phase).record(took));
    }

    private void count(String event) {
        counters.computeIfAbsent(event, e -> Counter.builder("sandboxkit.events").tags(tags).tag("event", e)
                .description("sandbox lifecycle events").register(registry)).increment();
    }

    private Timer timer(String name, String tagKey, String tagValue) {
        return timers.computeIfAbsent(name + '|' + tagKey + '|' + tagValue, k -> Timer.builder(name).tags(tags)
                .tag(tagKey, tagValue).register(registry));
    }
}
