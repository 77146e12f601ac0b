package dev.sandboxkit.micrometer;

import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxListener;
import dev.sandboxkit.SandboxManager;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToDoubleFunction;

/**
 * Turns lifecycle events into Micrometer meters: a {@link SandboxListener} for the manager and a
 * {@link MeterBinder} for the registries (a Spring Boot application declares it as a bean and Boot binds it).
 *
 * <pre>{@code
 * SandboxMetrics metrics = new SandboxMetrics();
 * SandboxManager manager = SandboxManager.builder().listener(metrics).build();
 * metrics.monitor(manager);          // the gauges read its stats()
 * metrics.bindTo(registry);          // or let the framework bind it
 * }</pre>
 *
 * <ul>
 *   <li>{@code sandboxkit.events} counter, tag {@code event}: created, resumed, exec.started, exec.finished,
 *       idle.reaped, lifetime.killed, orphan.removed, destroyed, egress.denied</li>
 *   <li>{@code sandboxkit.phase} timer, tag {@code phase}: image-check, create, start, post-create, first-exec,
 *       pool-checkout</li>
 *   <li>{@code sandboxkit.start} timer, tag {@code kind} (created, resumed, pool): the whole start step</li>
 *   <li>{@code sandboxkit.exec} timer, tag {@code termination}: every exec's duration</li>
 *   <li>function counters {@code sandboxkit.egress.connections} (tag {@code result}: allowed, denied) and
 *       {@code sandboxkit.egress.bytes} (tag {@code direction}: in, out), read from the manager's stats</li>
 *   <li>gauges {@code sandboxkit.sandboxes.active}, {@code sandboxkit.sessions.suspended},
 *       {@code sandboxkit.pool.size}: NaN until {@link #monitor(SandboxManager)} names the manager</li>
 * </ul>
 *
 * <p>Events reach every registry bound so far; those before the first {@link #bindTo} are not counted. Called
 * on the threads that deliver events (see {@link SandboxListener}); meters are cached per registry, so an event
 * costs a map lookup and an increment. Thread-safe.
 */
public final class SandboxMetrics implements SandboxListener, MeterBinder {
    private final Tags tags;
    private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();
    private final Map<MeterRegistry, Map<String, Counter>> counters = new ConcurrentHashMap<>();
    private final Map<MeterRegistry, Map<String, Timer>> timers = new ConcurrentHashMap<>();
    private final AtomicReference<SandboxManager> manager = new AtomicReference<>();

    /** Meters without common tags. */
    public SandboxMetrics() {
        this(Tags.empty());
    }

    /**
     * Meters with common tags, for example the manager or fleet name.
     *
     * @param tags tags added to every meter
     */
    public SandboxMetrics(Iterable<Tag> tags) {
        this.tags = Tags.of(tags);
    }

    /**
     * Names the manager whose {@link SandboxManager#stats()} the gauges read when a registry is scraped. It
     * should be the manager built with this listener.
     *
     * @param source the manager
     * @return this
     * @throws IllegalStateException if a manager was named already
     */
    public SandboxMetrics monitor(SandboxManager source) {
        if (!manager.compareAndSet(null, Objects.requireNonNull(source, "source"))) {
            throw new IllegalStateException("SandboxMetrics already monitors manager " + manager.get().instanceId());
        }
        return this;
    }

    /**
     * Registers the gauges in the registry, and counts and times every later event there.
     *
     * @param registry a registry; binding one twice changes nothing
     */
    @Override
    public void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        if (counters.putIfAbsent(registry, new ConcurrentHashMap<>()) != null) {
            return;
        }
        timers.put(registry, new ConcurrentHashMap<>());
        gauge(registry, "sandboxkit.sandboxes.active", "containers the manager holds", m -> m.stats().active());
        gauge(registry, "sandboxkit.sessions.suspended", "sessions suspended by the manager and not resumed since",
                m -> m.stats().suspended());
        gauge(registry, "sandboxkit.pool.size", "pre-started sandboxes waiting in warm pools", m -> m.stats().poolSize());
        counter(registry, "sandboxkit.egress.connections", "result", "allowed", "egress connections allowed",
                m -> m.stats().egressAllowed());
        counter(registry, "sandboxkit.egress.connections", "result", "denied", "egress connections refused",
                m -> m.stats().egressDenied());
        counter(registry, "sandboxkit.egress.bytes", "direction", "in", "bytes from upstream hosts to sandboxes",
                m -> m.stats().egressBytesIn());
        counter(registry, "sandboxkit.egress.bytes", "direction", "out", "bytes from sandboxes to upstream hosts",
                m -> m.stats().egressBytesOut());
        registries.add(registry);
    }

    private void counter(MeterRegistry registry, String name, String tagKey, String tagValue, String description,
                         ToDoubleFunction<SandboxManager> read) {
        FunctionCounter.builder(name, manager, ref -> {
            SandboxManager m = ref.get();
            return m == null ? 0 : read.applyAsDouble(m);
        }).tags(tags).tag(tagKey, tagValue).description(description).register(registry);
    }

    private void gauge(MeterRegistry registry, String name, String description, ToDoubleFunction<SandboxManager> read) {
        Gauge.builder(name, manager, ref -> {
            SandboxManager m = ref.get();
            return m == null ? Double.NaN : read.applyAsDouble(m);
        }).tags(tags).description(description).register(registry);
    }

    /**
     * Counts and times one event.
     *
     * @param event what happened
     */
    @Override
    public void onEvent(SandboxEvent event) {
        for (MeterRegistry registry : registries) {
            record(registry, event);
        }
    }

    private void record(MeterRegistry registry, SandboxEvent event) {
        if (event instanceof SandboxEvent.Created e) {
            count(registry, "created");
            phases(registry, e.phases());
            timer(registry, "sandboxkit.start", "kind", e.fromPool() ? "pool" : "created").record(e.total());
        } else if (event instanceof SandboxEvent.Resumed e) {
            count(registry, "resumed");
            phases(registry, e.phases());
            timer(registry, "sandboxkit.start", "kind", "resumed").record(e.total());
        } else if (event instanceof SandboxEvent.ExecStarted) {
            count(registry, "exec.started");
        } else if (event instanceof SandboxEvent.ExecFinished e) {
            count(registry, "exec.finished");
            timer(registry, "sandboxkit.exec", "termination", e.result().termination().name().toLowerCase(Locale.ROOT))
                    .record(e.result().duration());
            if (e.firstExec()) {
                timer(registry, "sandboxkit.phase", "phase", SandboxEvent.PHASE_FIRST_EXEC).record(e.result().duration());
            }
        } else if (event instanceof SandboxEvent.IdleReaped) {
            count(registry, "idle.reaped");
        } else if (event instanceof SandboxEvent.LifetimeKilled) {
            count(registry, "lifetime.killed");
        } else if (event instanceof SandboxEvent.OrphanRemoved) {
            count(registry, "orphan.removed");
        } else if (event instanceof SandboxEvent.Destroyed) {
            count(registry, "destroyed");
        } else if (event instanceof SandboxEvent.EgressDenied) {
            count(registry, "egress.denied");
        }
    }

    private void phases(MeterRegistry registry, Map<String, Duration> phases) {
        phases.forEach((phase, took) -> timer(registry, "sandboxkit.phase", "phase", phase).record(took));
    }

    private void count(MeterRegistry registry, String event) {
        counters.get(registry).computeIfAbsent(event, e -> Counter.builder("sandboxkit.events").tags(tags)
                .tag("event", e).description("sandbox lifecycle events").register(registry)).increment();
    }

    private Timer timer(MeterRegistry registry, String name, String tagKey, String tagValue) {
        return timers.get(registry).computeIfAbsent(name + '|' + tagKey + '|' + tagValue,
                k -> Timer.builder(name).tags(tags).tag(tagKey, tagValue).register(registry));
    }
}
