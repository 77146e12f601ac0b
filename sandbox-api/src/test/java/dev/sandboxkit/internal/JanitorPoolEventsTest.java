package dev.sandboxkit.internal;

import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.testkit.FakeExec;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ManagerStats;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.WarmPool;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.spi.SessionStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Lifetime janitor, orphan sweep, warm pool, statistics and events, with a fake driver and manual time. */
class JanitorPoolEventsTest {
    private static final Duration TTL = Duration.ofMinutes(30);
    private static final SandboxSpec SPEC = SandboxSpec.builder().image("img:1").build();

    private final ManualClock clock = new ManualClock();
    private final ManualScheduler scheduler = new ManualScheduler(clock);
    private final FakeDriver driver = new FakeDriver(clock);
    private final SessionStore store = SessionStore.inMemory();
    private final List<SandboxEvent> events = new CopyOnWriteArrayList<>();
    private final List<SandboxManager> managers = new ArrayList<>();

    private SandboxManager manager(String id, SandboxManager.Builder extra) {
        SandboxManager m = extra.driver(driver).clock(clock).scheduler(scheduler).store(store).idleTimeout(TTL)
                .reaperInterval(Duration.ofSeconds(1)).leaseDuration(Duration.ofSeconds(30)).instanceId(id)
                .listener(events::add).build();
        managers.add(m);
        return m;
    }

    private SandboxManager manager(String id) {
        return manager(id, SandboxManager.builder());
    }

    @AfterEach
    void closeAll() {
        managers.forEach(SandboxManager::close);
    }

    @Nested
    @DisplayName("max lifetime")
    class Lifetime {
        @Test
        @DisplayName("kills a busy sandbox at its limit, even mid-exec; the exec says 'lifetime exceeded'; the session resumes")
        void killsMidExec() throws Exception {
            SandboxManager m = manager("m1");
            CountDownLatch running = new CountDownLatch(1);
            driver.when(e -> e.commandLine().equals("sleep 600"), e -> {
                running.countDown();
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (driver.liveSandboxes().contains(e.sandboxId()) && System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                return FakeDriver.result(-1, "partial", "");
            });
            Sandbox sandbox = m.acquire("s", SPEC.toBuilder().maxLifetime(Duration.ofMinutes(5)).build());
            ExecutorService caller = Executors.newSingleThreadExecutor();
            try {
                Future<ExecResult> exec = caller.submit(() -> sandbox.exec("sleep", "600"));
                assertThat(running.await(5, TimeUnit.SECONDS)).isTrue();

                scheduler.advance(Duration.ofMinutes(4));
                assertThat(driver.liveSandboxes()).hasSize(1);
                scheduler.advance(Duration.ofMinutes(1).plusSeconds(1));

                ExecResult r = exec.get(10, TimeUnit.SECONDS);
                assertThat(r.lifetimeExceeded()).isTrue();
                assertThat(driver.liveSandboxes()).isEmpty();
                assertThat(sandbox.info().state()).isEqualTo(SessionState.SUSPENDED);
                assertThat(m.stats().lifetimeKilled()).isEqualTo(1);
                assertThat(events).filteredOn(SandboxEvent.LifetimeKilled.class::isInstance).hasSize(1);
            } finally {
                caller.shutdownNow();
            }
            assertThat(sandbox.exec("true").exitCode()).isZero(); // resumed, workdir kept
        }

        @Test
        @DisplayName("an ephemeral sandbox at its limit is purged, not resumable")
        void ephemeralPurged() {
            SandboxManager m = manager("m1");
            Sandbox sandbox = m.acquire("task", SPEC.toBuilder().ephemeral().maxLifetime(Duration.ofMinutes(1)).build());
            String workspace = sandbox.info().workspace();
            scheduler.advance(Duration.ofMinutes(1).plusSeconds(1));

            assertThat(driver.liveSandboxes()).isEmpty();
            assertThat(driver.workspaceExists(workspace)).isFalse();
            assertThat(m.session("task").orElseThrow().state()).isEqualTo(SessionState.DESTROYED);
        }
    }

    @Nested
    @DisplayName("orphan sweep")
    class Orphans {
        @Test
        @DisplayName("removes containers of a crashed manager after its lease expires, never those of a live one")
        void crashedVersusLive() {
            // The crashed manager runs on a scheduler nobody advances: it never renews nor cleans up again.
            SandboxManager crashed = SandboxManager.builder().driver(driver).clock(clock)
                    .scheduler(new ManualScheduler(clock)).store(store).idleTimeout(TTL).instanceId("crashed")
                    .leaseDuration(Duration.ofSeconds(30)).build();
            SandboxManager live = manager("live");
            for (int i = 0; i < 3; i++) {
                crashed.acquire("c" + i, SPEC);
            }
            live.acquire("l0", SPEC);

            SandboxManager survivor = manager("survivor");
            assertThat(survivor.reconcile()).as("the crashed manager's lease has not expired yet").isZero();

            scheduler.advance(Duration.ofSeconds(31)); // the live manager keeps renewing on this scheduler
            assertThat(survivor.reconcile()).isEqualTo(3);
            assertThat(driver.list(Map.of(SandboxLabels.OWNER, "crashed"))).isEmpty();
            assertThat(driver.list(Map.of(SandboxLabels.OWNER, "live"))).hasSize(1);
            for (int i = 0; i < 3; i++) {
                assertThat(survivor.session("c" + i).orElseThrow().state()).isEqualTo(SessionState.SUSPENDED);
                assertThat(survivor.acquire("c" + i, SPEC).exec("true").exitCode()).isZero(); // resumes
            }
            assertThat(survivor.stats().orphansRemoved()).isEqualTo(3);
            assertThat(events).filteredOn(SandboxEvent.OrphanRemoved.class::isInstance).hasSize(3);
        }

        @Test
        @DisplayName("removes a container of this store whose session is unknown or suspended once its owner, who left no presence, is past the grace")
        void strayContainers() {
            SandboxManager m = manager("m1", SandboxManager.builder().reconcileInterval(Duration.ofDays(1)));
            m.acquire("sus", SPEC);
            scheduler.advance(TTL.plusSeconds(2)); // "sus" is reaped: SUSPENDED
            String unknown = ghost("nobody", "default", storeId());
            String stray = ghost("sus", "default", storeId());
            String otherFleet = ghost("elsewhere", "other-app", storeId());

            assertThat(m.reconcile()).as("owner without presence in this store, containers young").isZero();
            clock.advance(Duration.ofMinutes(11));
            assertThat(m.reconcile()).isEqualTo(2);
            assertThat(driver.liveSandboxes()).doesNotContain(unknown, stray).contains(otherFleet);
        }

        @Test
        @DisplayName("the grace is configurable")
        void graceConfigurable() {
            SandboxManager m = manager("m1", SandboxManager.builder().orphanGrace(Duration.ofSeconds(5))
                    .reconcileInterval(Duration.ofDays(1)));
            String stray = ghost("nobody", "default", storeId());
            clock.advance(Duration.ofSeconds(4));
            assertThat(m.reconcile()).isZero();
            clock.advance(Duration.ofSeconds(2));
            assertThat(m.reconcile()).isEqualTo(1);
            assertThat(driver.liveSandboxes()).doesNotContain(stray);
        }

        @Test
        @DisplayName("an ACTIVE session whose container is gone becomes SUSPENDED and resumes")
        void activeWithoutContainer() {
            SandboxManager m = manager("m1");
            Sandbox sandbox = m.acquire("s", SPEC);
            driver.vanish(sandbox.info().sandboxId());

            m.reconcile();

            assertThat(sandbox.info().state()).isEqualTo(SessionState.SUSPENDED);
            assertThat(sandbox.exec("true").exitCode()).isZero();
        }

        @Test
        @DisplayName("runs by itself when the manager is built")
        void onBuild() {
            String old = ghost("x", "default", storeId());
            clock.advance(Duration.ofMinutes(11));
            manager("m1");
            scheduler.runDueTasks();
            assertThat(driver.liveSandboxes()).doesNotContain(old);
        }

        @Test
        @DisplayName("containers of another store are never touched, whatever the fleet and however old (issue 29 A)")
        void otherStoresNeverTouched() {
            // Another application on the same engine: its own store, an owner unknown here, the same fleet name
            // (every Boot app used to name fleet "default"). Also one from before store labels existed.
            String otherApp = ghost("x", "default", "st-00000000000000aa");
            String legacy = ghost("y", "default", null);
            clock.advance(Duration.ofDays(1));
            SandboxManager m = manager("m1", SandboxManager.builder().fleet("default").orphanGrace(Duration.ofSeconds(1)));
            scheduler.runDueTasks();
            assertThat(m.reconcile()).isZero();
            assertThat(driver.liveSandboxes()).contains(otherApp, legacy);
        }

        @Test
        @DisplayName("containers of an in-memory store whose process is gone are removed at once, under the same workspace root")
        void goneInMemoryStore(@org.junit.jupiter.api.io.TempDir java.nio.file.Path root) throws Exception {
            String dead = "st-00000000000000cc";
            String alive = "st-00000000000000dd";
            java.nio.file.Path stores = root.resolve(".sandboxkit/stores");
            java.nio.file.Files.createDirectories(stores);
            java.nio.file.Files.createFile(stores.resolve(dead + ".lock")); // its process died: nobody holds it
            Process holder = StoreIdentityTest.holdLock(stores.resolve(alive + ".lock"));
            try {
                String orphan = ghost("a", "default", dead);
                String live = ghost("b", "default", alive);
                String unprovable = ghost("c", "default", "st-00000000000000ee"); // no lock file under this root
                SandboxManager m = manager("m1", SandboxManager.builder().workspaceRoot(root)
                        .reconcileInterval(Duration.ofDays(1)));
                scheduler.runDueTasks(); // the sweep on build
                assertThat(driver.liveSandboxes()).doesNotContain(orphan).contains(live, unprovable);
                assertThat(m.stats().orphansRemoved()).isEqualTo(1);
                assertThat(stores.resolve(dead + ".lock")).as("forgotten once its containers are gone").doesNotExist();
                assertThat(stores.resolve(alive + ".lock")).exists();
            } finally {
                holder.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }

        @Test
        @DisplayName("manager-scoped sessions end with their manager's close, reaped ones too; others are suspended")
        void scopedSessionsEndWithClose() {
            SandboxSpec scoped = SPEC.toBuilder().managerScoped(true).build();
            SandboxManager m = manager("m1");
            String held = m.acquire("held", scoped).info().workspace();
            m.acquire("reaped", scoped);
            String reaped = m.session("reaped").orElseThrow().workspace();
            m.acquire("durable", SPEC);
            scheduler.advance(TTL.plusSeconds(2)); // all three reaped
            m.acquire("held", scoped);

            m.close();
            assertThat(store.find("held").orElseThrow().state()).isEqualTo(SessionState.DESTROYED);
            assertThat(store.find("reaped").orElseThrow().state()).isEqualTo(SessionState.DESTROYED);
            assertThat(driver.workspaceExists(held)).isFalse();
            assertThat(driver.workspaceExists(reaped)).isFalse();
            assertThat(store.find("durable").orElseThrow().state()).isEqualTo(SessionState.SUSPENDED);
            assertThat(driver.liveSandboxes()).isEmpty();
        }

        @Test
        @DisplayName("a crashed manager's scoped sessions, live or reaped, are destroyed by a manager sharing the store once its lease expires")
        void scopedSessionsOfACrashedManager() {
            SandboxSpec scoped = SPEC.toBuilder().managerScoped(true).build();
            ManualScheduler crashedScheduler = new ManualScheduler(clock);
            SandboxManager crashed = SandboxManager.builder().driver(driver).clock(clock).scheduler(crashedScheduler)
                    .store(store).idleTimeout(TTL).instanceId("crashed").leaseDuration(Duration.ofSeconds(30)).build();
            String live = crashed.acquire("live", scoped).info().workspace();
            crashed.acquire("reaped", scoped);
            String reaped = crashed.session("reaped").orElseThrow().workspace();
            crashed.acquire("durable", SPEC);
            clock.advance(TTL.minusSeconds(10));
            crashed.exec("live", ExecRequest.of("true"));
            crashedScheduler.advance(Duration.ofSeconds(12)); // "reaped" and "durable" are reaped; then it "dies"

            SandboxManager survivor = manager("survivor", SandboxManager.builder().orphanGrace(Duration.ofMinutes(1)));
            scheduler.runDueTasks();
            assertThat(store.find("live").orElseThrow().state()).as("lease still running").isEqualTo(SessionState.ACTIVE);

            clock.advance(Duration.ofMinutes(1)); // past the lease, and one grace since the last scoped pass
            survivor.reconcile();
            assertThat(store.find("live").orElseThrow().state()).isEqualTo(SessionState.DESTROYED);
            assertThat(store.find("reaped").orElseThrow().state()).isEqualTo(SessionState.DESTROYED);
            assertThat(driver.workspaceExists(live)).isFalse();
            assertThat(driver.workspaceExists(reaped)).isFalse();
            assertThat(driver.liveSandboxes()).isEmpty();
            assertThat(store.find("durable").orElseThrow().state()).as("not scoped: kept").isEqualTo(SessionState.SUSPENDED);
        }

        /** The store's id, as the first manager on it would write it. */
        private String storeId() {
            try (StoreIdentity id = StoreIdentity.open(store, java.nio.file.Path.of("target"), "fake", clock.instant())) {
                return id.id();
            }
        }

        private String ghost(String sessionId, String fleet, String storeId) {
            Map<String, String> labels = new java.util.HashMap<>(Map.of(SandboxLabels.MANAGED, "true",
                    SandboxLabels.SESSION, sessionId, SandboxLabels.OWNER, "ghost", SandboxLabels.FLEET, fleet));
            if (storeId != null) {
                labels.put(SandboxLabels.STORE, storeId);
            }
            return driver.create(new CreateRequest(sessionId, SPEC, "fake:" + sessionId, labels));
        }
    }

    @Nested
    @DisplayName("warm pool")
    class Pool {
        @Test
        @DisplayName("hands each pre-started sandbox to exactly one new session, with its own workdir, and refills")
        void checkoutAndRefill() {
            SandboxManager m = manager("m1", SandboxManager.builder().warmPool(WarmPool.of(SPEC, 2)));
            assertThat(m.stats().poolSize()).isEqualTo(2);
            Set<String> pooled = driver.liveSandboxes();

            Sandbox a = m.acquire("a", SPEC);
            Sandbox b = m.acquire("b", SPEC);

            assertThat(pooled).contains(a.info().sandboxId(), b.info().sandboxId());
            assertThat(a.info().sandboxId()).isNotEqualTo(b.info().sandboxId());
            assertThat(driver.execs()).as("one warm-up exec per pooled sandbox, while it waited")
                    .filteredOn(x -> x.sandboxId().equals(a.info().sandboxId())).extracting(FakeExec::command)
                    .containsExactly(List.of("true"));
            assertThat(a.info().workspace()).isNotEqualTo(b.info().workspace());
            ManagerStats stats = m.stats();
            assertThat(stats.poolHits()).isEqualTo(2);
            assertThat(stats.poolSize()).isEqualTo(2); // refilled (the manual scheduler runs refills inline)
            assertThat(events).filteredOn(SandboxEvent.Created.class::isInstance)
                    .extracting(ev -> ((SandboxEvent.Created) ev).fromPool()).containsExactly(true, true);
        }

        @Test
        @DisplayName("a pooled sandbox is never shared, even after its session is destroyed")
        void neverShared() {
            SandboxManager m = manager("m1", SandboxManager.builder().warmPool(WarmPool.of(SPEC, 1)));
            Set<String> seen = new HashSet<>();
            for (int i = 0; i < 5; i++) {
                Sandbox s = m.acquire("s" + i, SPEC);
                assertThat(seen.add(s.info().sandboxId())).isTrue();
                s.destroy();
            }
        }

        @Test
        @DisplayName("other specs and resumed sessions do not use the pool")
        void onlyNewSessionsOfTheSpec() {
            SandboxManager m = manager("m1", SandboxManager.builder().warmPool(WarmPool.of(SPEC, 1)));
            m.acquire("other", SPEC.toBuilder().image("img:2").build());
            assertThat(m.stats().poolHits()).isZero();
            assertThat(m.stats().poolSize()).isEqualTo(1);
        }

        @Test
        @DisplayName("when empty: cold start by default, or fail fast when asked")
        void exhausted() {
            SandboxManager cold = manager("m1", SandboxManager.builder().warmPool(WarmPool.of(SPEC, 0).maxSize(1)));
            assertThat(cold.acquire("a", SPEC).exec("true").exitCode()).isZero();
            assertThat(cold.stats().poolMisses()).isEqualTo(1);

            SandboxSpec other = SPEC.toBuilder().image("img:3").build();
            SandboxManager strict = manager("m2", SandboxManager.builder()
                    .warmPool(WarmPool.of(other, 0).maxSize(1).whenEmpty(WarmPool.Exhausted.FAIL_FAST, Duration.ZERO)));
            assertThatThrownBy(() -> strict.acquire("b", other)).isInstanceOf(SandboxAcquireException.class)
                    .hasMessageContaining("FAIL_FAST").matches(e -> ((SandboxAcquireException) e).isRetryable());
        }

        @Test
        @DisplayName("is drained when the manager closes")
        void drained() {
            SandboxManager m = manager("m1", SandboxManager.builder().warmPool(WarmPool.of(SPEC, 3)));
            assertThat(driver.liveSandboxes()).hasSize(3);
            m.close();
            assertThat(driver.liveSandboxes()).isEmpty();
        }

        @Test
        @DisplayName("close waits for a sandbox the pool is still starting, and removes it")
        void closeWaitsForAStartingSlot() throws Exception {
            CountDownLatch warming = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            // The warm-up exec of a slot hangs, as a slow engine call would, and ignores interrupts as one does.
            driver.when(e -> e.command().equals(List.of("true")), e -> {
                warming.countDown();
                while (true) {
                    try {
                        release.await();
                        return FakeDriver.result(0, "", "");
                    } catch (InterruptedException ignored) {
                        // keep waiting
                    }
                }
            });
            ScheduledExecutorService threads = Executors.newScheduledThreadPool(4);
            try {
                SandboxManager m = SandboxManager.builder().driver(driver).clock(clock).scheduler(threads).store(store)
                        .instanceId("m1").warmPool(WarmPool.of(SPEC, 1)).build();
                assertThat(warming.await(10, TimeUnit.SECONDS)).isTrue();

                java.util.concurrent.FutureTask<Void> closing = new java.util.concurrent.FutureTask<>(m::close, null);
                new Thread(closing, "test-close").start();

                assertThatThrownBy(() -> closing.get(300, TimeUnit.MILLISECONDS))
                        .as("close returned while a slot was still starting").isInstanceOf(TimeoutException.class);
                release.countDown();
                closing.get(10, TimeUnit.SECONDS);
                assertThat(driver.liveSandboxes()).isEmpty();
            } finally {
                release.countDown();
                threads.shutdownNow();
            }
        }
    }

    @Nested
    @DisplayName("statistics and events")
    class StatsEvents {
        @Test
        @DisplayName("count every transition, and events carry the session and the container")
        void countsAndEvents() {
            SandboxManager m = manager("m1");
            Sandbox s = m.acquire("s", SPEC);
            String first = s.info().sandboxId();
            s.exec("true");
            scheduler.advance(TTL.plusSeconds(2));
            s.exec("true");
            m.destroy("s");

            ManagerStats stats = m.stats();
            assertThat(stats.created()).isEqualTo(1);
            assertThat(stats.idleReaped()).isEqualTo(1);
            assertThat(stats.resumed()).isEqualTo(1);
            assertThat(stats.destroyed()).isEqualTo(1);
            assertThat(stats.active()).isZero();
            assertThat(stats.suspended()).isZero();
            assertThat(events).extracting(e -> e.getClass().getSimpleName()).containsExactly(
                    "Created", "ExecStarted", "ExecFinished", "IdleReaped", "Resumed", "ExecStarted", "ExecFinished",
                    "Destroyed");
            assertThat(events).allMatch(e -> e.sessionId().equals("s"));
            assertThat(((SandboxEvent.IdleReaped) events.get(3)).sandboxId()).isEqualTo(first);
            assertThat(((SandboxEvent.ExecFinished) events.get(2)).firstExec()).isTrue();
            assertThat(((SandboxEvent.IdleReaped) events.get(3)).idleFor()).isGreaterThanOrEqualTo(TTL);
        }

        @Test
        @DisplayName("lifecycle steps run with the session id in the SLF4J MDC")
        void mdc() {
            List<String> seen = new CopyOnWriteArrayList<>();
            SandboxManager m = SandboxManager.builder().driver(driver).clock(clock).scheduler(scheduler)
                    .idleTimeout(TTL).reaperInterval(Duration.ofSeconds(1)).listener(e -> {
                        if (!(e instanceof SandboxEvent.ExecStarted) && !(e instanceof SandboxEvent.ExecFinished)) {
                            seen.add(e.getClass().getSimpleName() + "=" + org.slf4j.MDC.get("sandboxkit.session"));
                        }
                    }).build();
            managers.add(m);
            m.acquire("mdc-1", SPEC).exec("true");
            scheduler.advance(TTL.plusSeconds(2));
            m.exec("mdc-1", ExecRequest.of("true"));
            m.destroy("mdc-1");

            assertThat(seen).containsExactly("Created=mdc-1", "IdleReaped=mdc-1", "Resumed=mdc-1", "Destroyed=mdc-1");
            assertThat(org.slf4j.MDC.get("sandboxkit.session")).isNull();
        }

        @Test
        @DisplayName("a listener that throws does not break the lifecycle")
        void throwingListener() {
            SandboxManager m = SandboxManager.builder().driver(driver).clock(clock).scheduler(scheduler)
                    .listener(e -> {
                        throw new IllegalStateException("listener bug");
                    }).build();
            managers.add(m);
            assertThat(m.acquire("s", SPEC).exec(ExecRequest.of("true")).exitCode()).isZero();
        }
    }
}
