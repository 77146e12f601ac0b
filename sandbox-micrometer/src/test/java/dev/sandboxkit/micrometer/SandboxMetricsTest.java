package dev.sandboxkit.micrometer;

import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.WarmPool;
import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

class SandboxMetricsTest {
    private static final SandboxSpec SPEC = SandboxSpec.builder().image("img:1").build();

    @Test
    void countsEventsTimesPhasesAndReadsGauges() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ManualClock clock = new ManualClock();
        ManualScheduler scheduler = new ManualScheduler(clock);
        SandboxMetrics metrics = new SandboxMetrics();
        metrics.bindTo(registry); // before the manager: as a framework binds MeterBinder beans
        try (SandboxManager manager = SandboxManager.builder().driver(new FakeDriver(clock)).clock(clock)
                .scheduler(scheduler).idleTimeout(Duration.ofMinutes(1)).reaperInterval(Duration.ofSeconds(1))
                .listener(metrics).warmPool(WarmPool.of(SPEC.toBuilder().image("pooled").build(), 1)).build()) {
            assertThat(registry.get("sandboxkit.sandboxes.active").gauge().value()).isNaN();
            metrics.monitor(manager);

            manager.acquire("a", SPEC).exec("true");
            manager.acquire("b", SPEC);
            assertThat(registry.get("sandboxkit.sandboxes.active").gauge().value()).isEqualTo(2);
            assertThat(registry.get("sandboxkit.pool.size").gauge().value()).isEqualTo(1);

            scheduler.advance(Duration.ofMinutes(2));
            manager.exec("a", dev.sandboxkit.ExecRequest.of("true"));
            manager.destroy("b");
            manager.acquire("p", SPEC.toBuilder().image("pooled").build());

            assertThat(registry.get("sandboxkit.events").tag("event", "created").counter().count()).isEqualTo(3);
            assertThat(registry.get("sandboxkit.events").tag("event", "idle.reaped").counter().count()).isEqualTo(2);
            assertThat(registry.get("sandboxkit.events").tag("event", "resumed").counter().count()).isEqualTo(1);
            assertThat(registry.get("sandboxkit.events").tag("event", "destroyed").counter().count()).isEqualTo(1);
            assertThat(registry.get("sandboxkit.events").tag("event", "exec.finished").counter().count()).isEqualTo(2);
            assertThat(registry.get("sandboxkit.exec").tag("termination", "exited").timer().count()).isEqualTo(2);
            assertThat(registry.get("sandboxkit.phase").tag("phase", "first-exec").timer().count()).isEqualTo(2);
            assertThat(registry.get("sandboxkit.start").tag("kind", "pool").timer().count()).isEqualTo(1);
            assertThat(registry.get("sandboxkit.start").tag("kind", "resumed").timer().count()).isEqualTo(1);
            assertThat(registry.get("sandboxkit.sessions.suspended").gauge().value()).isEqualTo(0);
        }
    }

    @Test
    void everyBoundRegistryCountsAndAnApplicationListenerStillHearsEverything() {
        SimpleMeterRegistry one = new SimpleMeterRegistry();
        SimpleMeterRegistry two = new SimpleMeterRegistry();
        SandboxMetrics metrics = new SandboxMetrics(io.micrometer.core.instrument.Tags.of("fleet", "agents"));
        java.util.List<dev.sandboxkit.SandboxEvent> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        metrics.bindTo(one);
        try (SandboxManager manager = SandboxManager.builder().driver(new FakeDriver()).listener(metrics)
                .listener(heard::add).build()) {
            manager.acquire("a", SPEC);
            metrics.bindTo(two);
            metrics.bindTo(two); // idempotent
            manager.acquire("b", SPEC);
            assertThat(one.get("sandboxkit.events").tag("event", "created").tag("fleet", "agents").counter().count())
                    .isEqualTo(2);
            assertThat(two.get("sandboxkit.events").tag("event", "created").counter().count()).isEqualTo(1);
            assertThat(heard).filteredOn(dev.sandboxkit.SandboxEvent.Created.class::isInstance).hasSize(2);
            metrics.monitor(manager);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> metrics.monitor(manager))
                    .isInstanceOf(IllegalStateException.class);
        }
    }
}
