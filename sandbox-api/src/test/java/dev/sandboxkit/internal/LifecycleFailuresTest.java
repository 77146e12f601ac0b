package dev.sandboxkit.internal;

import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import dev.sandboxkit.testkit.ForwardingSandboxDriver;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.SandboxLabels;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the engine records when removals fail or race (issue 13): nothing is recorded done before it is done, a
 * failed step is retried, and a destroy and an acquire of one id are serialized. Fake driver, manual time.
 */
class LifecycleFailuresTest {
    private static final Duration TTL = Duration.ofMinutes(30);
    private static final Duration RECONCILE = Duration.ofMinutes(1);
    private static final SandboxSpec SPEC = SandboxSpec.builder().image("img:1").build();

    private ManualClock clock;
    private ManualScheduler scheduler;
    private FakeDriver driver;
    private SandboxManager manager;

    @BeforeEach
    void setUp() {
        clock = new ManualClock();
        scheduler = new ManualScheduler(clock);
        driver = new FakeDriver(clock);
        manager = build(driver);
    }

    private SandboxManager build(dev.sandboxkit.spi.SandboxDriver d) {
        return SandboxManager.builder().driver(d).clock(clock).scheduler(scheduler).idleTimeout(TTL)
                .reaperInterval(Duration.ofSeconds(10)).reconcileInterval(RECONCILE).instanceId("mgr-1").build();
    }

    @AfterEach
    void tearDown() {
        manager.close();
    }

    private SessionState state(String sessionId) {
        return manager.session(sessionId).orElseThrow().state();
    }

    @Test
    @DisplayName("a reap during an engine outage keeps the session ACTIVE on its container; it is reaped once the engine is back")
    void reapDuringEngineOutage() {
        String first = manager.acquire("s", SPEC).info().sandboxId();
        driver.setUnavailable(true);
        scheduler.advance(TTL.plusSeconds(20));

        assertThat(state("s")).isEqualTo(SessionState.ACTIVE);        // never SUSPENDED beside a live container
        assertThat(manager.session("s").orElseThrow().sandboxId()).isEqualTo(first);

        driver.setUnavailable(false);
        assertThat(manager.exec("s", ExecRequest.of("true")).exitCode()).isZero();
        assertThat(driver.createCount()).isEqualTo(1);                 // served by the container it still had
        assertThat(driver.liveSandboxes()).containsExactly(first);

        scheduler.advance(TTL.plusSeconds(40));
        assertThat(driver.liveSandboxes()).isEmpty();
        assertThat(state("s")).isEqualTo(SessionState.SUSPENDED);
        assertThat(manager.stats().idleReaped()).isEqualTo(1);
    }

    @Test
    @DisplayName("after a failed reap the next attempt backs off instead of retrying every reaper tick")
    void failedReapBacksOff() {
        CountingDriver counting = new CountingDriver(driver);
        manager.close();
        manager = build(counting);
        manager.acquire("s", SPEC);
        driver.setUnavailable(true);
        scheduler.advance(TTL);
        assertThat(counting.removes).isEqualTo(1);
        // 60 reaper ticks of 10 s; the back-off grows 1, 2, 4 ... 30 s, so about one attempt in three ticks.
        scheduler.advance(Duration.ofMinutes(10));
        assertThat(counting.removes).isBetween(15, 30);
        driver.setUnavailable(false);
        scheduler.advance(Duration.ofSeconds(40));
        assertThat(driver.liveSandboxes()).isEmpty();
        assertThat(state("s")).isEqualTo(SessionState.SUSPENDED);
    }

    @Test
    @DisplayName("a container whose PID 1 died is removed when the session resumes, and nothing is left after destroy and close")
    void exitedContainerIsRemoved() {
        String dead = manager.acquire("s", SPEC).info().sandboxId();
        driver.exit(dead);

        assertThat(manager.exec("s", ExecRequest.of("true")).exitCode()).isZero(); // resumed transparently
        assertThat(driver.liveSandboxes()).doesNotContain(dead).hasSize(1);

        manager.destroy("s");
        manager.close();
        assertThat(driver.liveSandboxes()).isEmpty();
    }

    @Test
    @DisplayName("a destroy whose container removal fails stays DESTROYING, unusable, and the janitor finishes it")
    void destroyDuringEngineOutage() {
        Sandbox sandbox = manager.acquire("s", SPEC);
        String workspace = sandbox.info().workspace();
        driver.setUnavailable(true);

        assertThatThrownBy(sandbox::destroy).isInstanceOf(SandboxUnavailableException.class);
        assertThat(state("s")).isEqualTo(SessionState.DESTROYING);
        assertThatThrownBy(() -> manager.exec("s", ExecRequest.of("true"))).isInstanceOf(SandboxNotFoundException.class);
        assertThatThrownBy(() -> manager.files("s").list("")).isInstanceOf(SandboxNotFoundException.class);
        assertThatThrownBy(() -> manager.keepAlive("s")).isInstanceOf(SandboxNotFoundException.class);
        assertThatThrownBy(() -> manager.acquire("s", SPEC)).isInstanceOf(SandboxAcquireException.class)
                .hasMessageContaining("still being destroyed")
                .satisfies(e -> assertThat(((SandboxException) e).isRetryable()).isTrue());

        driver.setUnavailable(false);
        scheduler.advance(RECONCILE.plusSeconds(1));
        assertThat(state("s")).isEqualTo(SessionState.DESTROYED);
        assertThat(driver.liveSandboxes()).isEmpty();
        assertThat(driver.workspaceExists(workspace)).isFalse();
        assertThat(manager.stats().destroyed()).isEqualTo(1);
    }

    @Test
    @DisplayName("a workdir that cannot be deleted keeps the session DESTROYING; a new session never inherits its files")
    void undeletableWorkdir() {
        scriptFiles();
        manager.acquire("s", SPEC).exec("write");
        driver.failWorkspaceDeletes(new SandboxException("cannot delete workdir fake:s: injected"));

        assertThatThrownBy(() -> manager.destroy("s")).hasMessageContaining("injected");
        assertThat(state("s")).isEqualTo(SessionState.DESTROYING);
        assertThat(driver.liveSandboxes()).isEmpty();                   // the container went; the workdir did not
        assertThat(driver.workspaceExists("fake:s")).isTrue();
        assertThatThrownBy(() -> manager.destroy("s")).hasMessageContaining("injected"); // not quietly "done"
        assertThatThrownBy(() -> manager.acquire("s", SPEC)).isInstanceOf(SandboxAcquireException.class)
                .satisfies(e -> assertThat(((SandboxException) e).isRetryable()).isTrue());
        assertThat(manager.reconcile()).isZero();
        assertThat(state("s")).isEqualTo(SessionState.DESTROYING);      // the janitor tried and failed too

        driver.failWorkspaceDeletes(null);
        manager.reconcile();
        assertThat(state("s")).isEqualTo(SessionState.DESTROYED);
        assertThat(driver.workspaceExists("fake:s")).isFalse();
        assertThat(manager.acquire("s", SPEC).exec("ls").stdout()).isEmpty();
    }

    @Test
    @DisplayName("an acquire of a DESTROYING id finishes the destroy first once it can, then starts empty")
    void acquireFinishesPendingDestroy() {
        scriptFiles();
        manager.acquire("s", SPEC).exec("write");
        driver.failWorkspaceDeletes(new SandboxException("injected"));
        assertThatThrownBy(() -> manager.destroy("s")).hasMessageContaining("injected");
        driver.failWorkspaceDeletes(null);

        assertThat(manager.acquire("s", SPEC).exec("ls").stdout()).isEmpty();
        assertThat(state("s")).isEqualTo(SessionState.ACTIVE);
    }

    @Test
    @DisplayName("an ephemeral release whose purge fails is visible as DESTROYING, retried by the janitor, and never reused")
    void ephemeralPurgeFailure() {
        SandboxSpec once = SPEC.toBuilder().ephemeral().build();
        Sandbox task = manager.acquire("task", once);
        String workspace = task.info().workspace();
        driver.failWorkspaceDeletes(new SandboxException("injected"));

        assertThatThrownBy(task::close).hasMessageContaining("injected");
        assertThat(state("task")).isEqualTo(SessionState.DESTROYING);
        assertThat(driver.workspaceExists(workspace)).isTrue();

        driver.failWorkspaceDeletes(null);
        scheduler.advance(RECONCILE.plusSeconds(1));
        assertThat(state("task")).isEqualTo(SessionState.DESTROYED);
        assertThat(driver.workspaceExists(workspace)).isFalse();
        assertThatThrownBy(() -> manager.acquire("task", once)).isInstanceOf(SandboxAcquireException.class)
                .hasMessageContaining("single-use");
    }

    @Test
    @DisplayName("an acquire racing a destroy waits for it and starts a new, empty session on a fresh workdir")
    void destroyRacingAcquire() throws Exception {
        CountDownLatch deleting = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        BlockingDeletes blocking = new BlockingDeletes(driver, deleting, proceed);
        manager.close();
        manager = build(blocking);
        scriptFiles();
        manager.acquire("s", SPEC).exec("write");

        CompletableFuture<Void> destroy = CompletableFuture.runAsync(() -> manager.destroy("s"));
        assertThat(deleting.await(10, TimeUnit.SECONDS)).isTrue();     // the destroy is deleting the workdir now
        Thread[] acquirer = new Thread[1];
        CompletableFuture<String> acquire = CompletableFuture.supplyAsync(() -> {
            acquirer[0] = Thread.currentThread();
            return manager.acquire("s", SPEC).exec("ls").stdout();
        });
        awaitBlocked(acquirer);
        assertThat(driver.createCount()).isEqualTo(1);                  // no container while the workdir goes

        proceed.countDown();
        destroy.get(10, TimeUnit.SECONDS);
        assertThat(acquire.get(10, TimeUnit.SECONDS)).isEmpty();        // a new, empty session
        assertThat(driver.liveSandboxes()).hasSize(1);
        assertThat(state("s")).isEqualTo(SessionState.ACTIVE);
    }

    @Test
    @DisplayName("close removes a container of this manager that an earlier failed removal left behind")
    void closeRemovesLeftovers() {
        manager.acquire("s", SPEC);
        String stray = driver.create(new CreateRequest("stray", SPEC, "fake:stray", Map.of(SandboxLabels.MANAGED, "true",
                SandboxLabels.SESSION, "stray", SandboxLabels.OWNER, "mgr-1", SandboxLabels.FLEET, "default"), (p, d) -> { }));
        assertThat(driver.liveSandboxes()).contains(stray);

        manager.close();
        assertThat(driver.liveSandboxes()).isEmpty();
    }

    /** {@code write} puts a file in the fake workdir; {@code ls} lists it. */
    private void scriptFiles() {
        driver.when(e -> e.commandLine().equals("write"), e -> {
            e.files().put("old.txt", "old".getBytes());
            return FakeDriver.result(0, "", "");
        });
        driver.when(e -> e.commandLine().equals("ls"),
                e -> FakeDriver.result(0, String.join("\n", e.files().keySet()), ""));
    }

    private static void awaitBlocked(Thread[] holder) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            Thread t = holder[0];
            if (t != null && (t.getState() == Thread.State.WAITING || t.getState() == Thread.State.TIMED_WAITING)) {
                return;
            }
            Thread.sleep(1);
        }
        throw new AssertionError("the acquire never blocked on the destroy");
    }

    /** Counts removals. */
    private static final class CountingDriver extends ForwardingSandboxDriver {
        volatile int removes;

        CountingDriver(FakeDriver delegate) {
            super(delegate);
        }

        @Override
        public void remove(String sandboxId) {
            removes++;
            super.remove(sandboxId);
        }
    }

    @Test
    @DisplayName("the orphan sweep never removes a container whose start finished while the sweep was deciding")
    void sweepRacingAStart() throws Exception {
        CountDownLatch created = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        FakeDriver fake = new FakeDriver(clock);
        ForwardingSandboxDriver slowStart = new ForwardingSandboxDriver(fake) {
            @Override
            public String create(CreateRequest request) {
                String id = super.create(request);
                if (request.sessionId().equals("s")) {
                    created.countDown();
                    await(finish);
                }
                return id;
            }

            @Override
            public java.util.List<dev.sandboxkit.spi.SandboxDescriptor> list(Map<String, String> labels) {
                // Another manager's container comes first: deciding about it asks the store whether its owner lives.
                java.util.List<dev.sandboxkit.spi.SandboxDescriptor> out = new java.util.ArrayList<>();
                out.add(new dev.sandboxkit.spi.SandboxDescriptor("other-1", Map.of(SandboxLabels.MANAGED, "true",
                        SandboxLabels.SESSION, "x", SandboxLabels.OWNER, "mgr-other", SandboxLabels.FLEET, "default"),
                        clock.instant(), true));
                out.addAll(super.list(labels));
                return out;
            }
        };
        java.util.concurrent.atomic.AtomicReference<CompletableFuture<Sandbox>> acquiring =
                new java.util.concurrent.atomic.AtomicReference<>();
        dev.sandboxkit.spi.SessionStore inner = dev.sandboxkit.spi.SessionStore.inMemory();
        dev.sandboxkit.spi.SessionStore store = new ForwardingStore(inner) {
            @Override
            public java.util.Optional<dev.sandboxkit.spi.SessionRecord> find(String id) {
                CompletableFuture<Sandbox> pending = acquiring.get();
                if (id.equals("_manager.mgr-other") && pending != null && acquiring.compareAndSet(pending, null)) {
                    finish.countDown(); // the start completes while the sweep is between its listing and its verdicts
                    pending.join();
                }
                return super.find(id);
            }
        };
        try (SandboxManager m = SandboxManager.builder().driver(slowStart).store(store).clock(clock).scheduler(scheduler)
                .idleTimeout(TTL).reconcileInterval(RECONCILE).instanceId("mgr-1").build()) {
            CompletableFuture<Sandbox> pending = CompletableFuture.supplyAsync(() -> m.acquire("s", SPEC));
            assertThat(created.await(10, TimeUnit.SECONDS)).isTrue();
            acquiring.set(pending);
            m.reconcile();
            String container = pending.get(10, TimeUnit.SECONDS).info().sandboxId();
            assertThat(fake.liveSandboxes()).as("the session's container after the sweep").contains(container);
            assertThat(m.exec("s", ExecRequest.of("true")).exitCode()).isZero();
            assertThat(fake.createCount()).as("no resume was needed").isEqualTo(1);
            assertThat(m.stats().orphansRemoved()).isZero();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Holds the first workdir deletion until told to go on. */
    private static final class BlockingDeletes extends ForwardingSandboxDriver {
        private final CountDownLatch deleting;
        private final CountDownLatch proceed;

        BlockingDeletes(FakeDriver delegate, CountDownLatch deleting, CountDownLatch proceed) {
            super(delegate);
            this.deleting = deleting;
            this.proceed = proceed;
        }

        @Override
        public void deleteWorkspace(String workspace) {
            deleting.countDown();
            try {
                proceed.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            super.deleteWorkspace(workspace);
        }
    }
}
