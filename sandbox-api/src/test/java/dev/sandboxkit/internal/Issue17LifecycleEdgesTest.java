package dev.sandboxkit.internal;

import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.WarmPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Lifecycle edge cases found by reading the engine (issue 17, part 2): each fails without its fix. */
class Issue17LifecycleEdgesTest {
    private static final Duration TTL = Duration.ofMinutes(30);
    private static final SandboxSpec SPEC = SandboxSpec.builder().image("img:1").build();

    private final ManualClock clock = new ManualClock();
    private final ManualScheduler scheduler = new ManualScheduler(clock);
    private final FakeDriver driver = new FakeDriver(clock);
    private final List<SandboxManager> managers = new ArrayList<>();

    @AfterEach
    void close() {
        managers.forEach(SandboxManager::close);
    }

    private SandboxManager.Builder builder() {
        return builder(Duration.ofSeconds(10));
    }

    private SandboxManager.Builder builder(Duration reaperInterval) {
        return SandboxManager.builder().driver(driver).clock(clock).scheduler(scheduler).idleTimeout(TTL)
                .reaperInterval(reaperInterval);
    }

    private SandboxManager manager(SandboxManager.Builder b) {
        SandboxManager m = b.build();
        managers.add(m);
        return m;
    }

    @Test
    @DisplayName("a stale handle's keepAlive never keeps the new session that reuses the id alive")
    void staleKeepAlive() {
        SandboxManager m = manager(builder());
        Sandbox old = m.acquire("s", SPEC);
        m.destroy("s");
        clock.advance(Duration.ofSeconds(1)); // a new incarnation has a new creation instant
        Sandbox fresh = m.acquire("s", SPEC);
        Instant before = m.session("s").orElseThrow().lastActivity();
        clock.advance(Duration.ofMinutes(20));

        assertThatThrownBy(old::keepAlive).isInstanceOf(SandboxNotFoundException.class);
        assertThat(m.session("s").orElseThrow().lastActivity()).as("the new session's activity").isEqualTo(before);
        scheduler.advance(Duration.ofMinutes(11));
        assertThat(m.session("s").orElseThrow().state()).as("reaped on its own schedule").isEqualTo(SessionState.SUSPENDED);
        fresh.keepAlive(); // the current handle still works (a suspended session: nothing to touch)
    }

    @Test
    @DisplayName("close() finishes its work when the caller's scheduler was shut down first")
    void closeWithAShutDownScheduler() {
        ScheduledExecutorService own = Executors.newScheduledThreadPool(1);
        SandboxManager m = SandboxManager.builder().driver(driver).scheduler(own).idleTimeout(TTL).build();
        m.acquire("a", SPEC);
        m.acquire("b", SPEC);
        own.shutdownNow();

        m.close(); // must not throw
        assertThat(driver.liveSandboxes()).as("containers left by close").isEmpty();
    }

    @Test
    @DisplayName("listeners run after the lifecycle lock is released: a slow listener does not stall the session")
    void listenersOutsideLocks() throws Exception {
        CountDownLatch inListener = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        SandboxManager m = manager(builder().listener(e -> {
            if (e instanceof SandboxEvent.Created) {
                inListener.countDown();
                await(letGo);
            }
        }));
        CompletableFuture<Sandbox> first = CompletableFuture.supplyAsync(() -> m.acquire("s", SPEC));
        try {
            assertThat(inListener.await(10, TimeUnit.SECONDS)).isTrue();
            // The first acquire's thread sits in the listener; another caller's lifecycle step on the same
            // session must not wait for it.
            CompletableFuture<Sandbox> second = CompletableFuture.supplyAsync(() -> m.acquire("s", SPEC));
            assertThat(second.get(5, TimeUnit.SECONDS).info().state()).isEqualTo(SessionState.ACTIVE);
            CompletableFuture<Void> destroy = CompletableFuture.runAsync(() -> m.destroy("s"));
            destroy.get(5, TimeUnit.SECONDS);
        } finally {
            letGo.countDown();
        }
        first.get(10, TimeUnit.SECONDS);
    }

    @Test
    @DisplayName("several listeners each get every event, a session's in the order it happened")
    void severalListenersInOrder() {
        List<String> a = new CopyOnWriteArrayList<>();
        List<String> b = new CopyOnWriteArrayList<>();
        SandboxManager m = manager(builder()
                .listener(e -> a.add(e.getClass().getSimpleName()))
                .listener(e -> b.add(e.getClass().getSimpleName())));
        m.acquire("s", SPEC).exec("true");
        scheduler.advance(TTL.plusSeconds(20));
        m.exec("s", ExecRequest.of("true"));
        m.destroy("s");

        List<String> expected = List.of("Created", "ExecStarted", "ExecFinished", "IdleReaped", "Resumed",
                "ExecStarted", "ExecFinished", "Destroyed");
        assertThat(a).isEqualTo(expected);
        assertThat(b).isEqualTo(expected);
    }

    @Test
    @DisplayName("release() of a persistent session stops nothing, is not activity, and the handle stays usable")
    void releaseOfAPersistentSession() {
        SandboxManager m = manager(builder());
        String container;
        Instant activity;
        try (Sandbox s = m.acquire("p", SPEC)) {
            container = s.info().sandboxId();
            activity = s.info().lastActivity();
            clock.advance(Duration.ofMinutes(5));
        } // close() = release()
        assertThat(driver.liveSandboxes()).containsExactly(container);
        assertThat(m.session("p").orElseThrow().lastActivity()).as("release is not activity").isEqualTo(activity);
        Sandbox again = m.acquire("p", SPEC);
        assertThat(again.info().sandboxId()).as("the next acquire reuses the container at once").isEqualTo(container);
        again.release();
        assertThat(again.exec("true").exitCode()).as("a released persistent handle still runs").isZero();
        scheduler.advance(TTL.plusSeconds(20));
        assertThat(m.session("p").orElseThrow().state()).as("the idle TTL still applies").isEqualTo(SessionState.SUSPENDED);
    }

    @Test
    @DisplayName("max lifetime has a few percent of jitter: sandboxes started together are not all killed at once")
    void lifetimeJitter() {
        Duration life = Duration.ofMinutes(10);
        SandboxSpec spec = SPEC.toBuilder().maxLifetime(life).build();
        SandboxManager m = manager(builder(Duration.ofMillis(100)));
        int n = 40;
        for (int i = 0; i < n; i++) {
            m.acquire("j-" + i, spec);
        }
        scheduler.advance(Duration.ofMillis(life.toMillis() * 975 / 1000 - 1_000));
        assertThat(driver.liveSandboxes()).as("nobody before 97.5% of the lifetime").hasSize(n);
        Set<Integer> secondsOfDeath = new TreeSet<>();
        for (int second = 0; second <= 16 && !driver.liveSandboxes().isEmpty(); second++) {
            int before = driver.liveSandboxes().size();
            scheduler.advance(Duration.ofSeconds(1));
            if (driver.liveSandboxes().size() < before) {
                secondsOfDeath.add(second);
            }
        }
        assertThat(driver.liveSandboxes()).as("everybody by the lifetime").isEmpty();
        assertThat(secondsOfDeath).as("kills spread over the jitter window").hasSizeGreaterThan(3);
    }

    @Test
    @DisplayName("a warm pool filled at once does not die at once either")
    void poolLifetimeJitter() {
        SandboxSpec spec = SPEC.toBuilder().maxLifetime(Duration.ofMinutes(10)).build();
        SandboxManager m = manager(builder(Duration.ofMillis(100)).warmPool(WarmPool.of(spec, 20)));
        List<Sandbox> taken = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            taken.add(m.acquire("p-" + i, spec));
        }
        assertThat(driver.createCount()).isGreaterThanOrEqualTo(20);
        scheduler.advance(Duration.ofMinutes(9).plusSeconds(52)); // inside the 9:45-10:00 jitter window
        long killedEarly = taken.stream().filter(s -> s.info().state() == SessionState.SUSPENDED).count();
        assertThat(killedEarly).as("some, not all, of the pooled sandboxes reached their jittered lifetime")
                .isGreaterThan(0).isLessThan(20);
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
