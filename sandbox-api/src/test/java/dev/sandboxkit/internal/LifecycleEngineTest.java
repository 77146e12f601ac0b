package dev.sandboxkit.internal;

import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.testkit.FakeExec;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.SessionStoreException;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The lifecycle engine, driven through the public API with a fake driver and manual time: no sleeping. */
class LifecycleEngineTest {
    private static final Duration TTL = Duration.ofMinutes(30);
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
        manager = SandboxManager.builder().driver(driver).clock(clock).scheduler(scheduler)
                .idleTimeout(TTL).reaperInterval(Duration.ofSeconds(10)).instanceId("mgr-1").build();
    }

    @AfterEach
    void tearDown() {
        manager.close();
    }

    @Nested
    @DisplayName("acquire")
    class Acquire {
        @Test
        @DisplayName("creates one labelled sandbox and returns the same one while it lives")
        void createsThenReuses() {
            Sandbox first = manager.acquire("chat-42", SPEC);
            Sandbox second = manager.acquire("chat-42", SPEC);

            assertThat(driver.createCount()).isEqualTo(1);
            assertThat(first.info().sandboxId()).isEqualTo(second.info().sandboxId());
            assertThat(driver.list(Map.of(SandboxLabels.MANAGED, "true", SandboxLabels.SESSION, "chat-42",
                    SandboxLabels.OWNER, "mgr-1"))).hasSize(1);
            SessionInfo info = manager.session("chat-42").orElseThrow();
            assertThat(info.state()).isEqualTo(SessionState.ACTIVE);
            assertThat(info.workspace()).isEqualTo("fake:chat-42");
            assertThat(info.owner()).isEqualTo("mgr-1");
        }

        @Test
        @DisplayName("never creates two sandboxes for one session under concurrent acquires")
        void concurrentAcquires() throws Exception {
            int threads = 16;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            CyclicBarrier start = new CyclicBarrier(threads);
            try {
                List<Future<String>> ids = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    ids.add(pool.submit(() -> {
                        start.await();
                        return manager.acquire("shared", SPEC).info().sandboxId();
                    }));
                }
                Set<String> distinct = new HashSet<>();
                for (Future<String> f : ids) {
                    distinct.add(f.get(10, TimeUnit.SECONDS));
                }
                assertThat(distinct).hasSize(1);
                assertThat(driver.createCount()).isEqualTo(1);
            } finally {
                pool.shutdownNow();
            }
        }

        @Test
        @DisplayName("replaces the container, keeping the workdir, when the spec changes")
        void specChange() {
            String before = manager.acquire("s", SPEC).info().sandboxId();
            Sandbox after = manager.acquire("s", SPEC.toBuilder().memoryBytes(1L << 30).build());

            assertThat(after.info().sandboxId()).isNotEqualTo(before);
            assertThat(driver.liveSandboxes()).containsExactly(after.info().sandboxId());
            assertThat(after.info().workspace()).isEqualTo("fake:s");
            assertThat(after.info().spec().memoryBytes()).isEqualTo(1L << 30);
        }

        @ParameterizedTest
        @ValueSource(strings = {"..", "../etc", "a/b", "/abs", "nul\0byte", "", ".hidden", "white space"})
        @DisplayName("rejects session ids that could escape the workspace root")
        void rejectsBadIds(String id) {
            assertThatThrownBy(() -> manager.acquire(id, SPEC)).isInstanceOf(IllegalArgumentException.class);
            assertThat(driver.createCount()).isZero();
        }

        @Test
        @DisplayName("rejects overlong session ids")
        void rejectsOverlong() {
            assertThatThrownBy(() -> manager.acquire("x".repeat(129), SPEC))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1-128");
        }

        @Test
        @DisplayName("a failed first start leaves no session and no workdir behind")
        void failedCreateCleansUp() {
            driver.failNextCreate(new SandboxAcquireException("image img:1 is not present locally"));

            assertThatThrownBy(() -> manager.acquire("s", SPEC)).isInstanceOf(SandboxAcquireException.class)
                    .hasMessageContaining("img:1");
            assertThat(manager.session("s")).isEmpty();
            assertThat(driver.workspaceExists("fake:s")).isFalse();
            assertThat(manager.acquire("s", SPEC).info().state()).isEqualTo(SessionState.ACTIVE);
        }
    }

    @Nested
    @DisplayName("exec")
    class Exec {
        @Test
        @DisplayName("runs in the session's sandbox, through the handle or the manager")
        void runs() {
            driver.when(e -> e.commandLine().contains("echo hi"), FakeDriver.result(0, "hi\n", ""));
            Sandbox sandbox = manager.acquire("chat-42", SPEC);

            ExecResult r = sandbox.exec(ExecRequest.shell("echo hi"));
            manager.exec("chat-42", ExecRequest.of("ls", "-la"));

            assertThat(r.exitCode()).isZero();
            assertThat(r.stdout()).isEqualTo("hi\n");
            assertThat(driver.execs()).extracting(FakeExec::commandLine)
                    .containsExactly("/bin/sh -c echo hi", "ls -la");
            assertThat(driver.execs()).extracting(FakeExec::sandboxId).containsOnly(sandbox.info().sandboxId());
        }

        @Test
        @DisplayName("adds the spec's env under the exec's own env, which wins")
        void specEnv() {
            SandboxSpec spec = SPEC.toBuilder().env("A", "spec").env("B", "spec").build();
            manager.acquire("s", spec).exec(ExecRequest.of("env").withEnv("B", "exec"));

            assertThat(driver.execs().get(0).request().env()).containsEntry("A", "spec").containsEntry("B", "exec");
        }

        @Test
        @DisplayName("a non-zero exit code is data, not an exception")
        void nonZeroExit() {
            driver.when(e -> true, FakeDriver.result(3, "", "boom"));
            ExecResult r = manager.acquire("s", SPEC).exec("false");
            assertThat(r.exitCode()).isEqualTo(3);
            assertThat(r.stderr()).isEqualTo("boom");
            assertThat(r.isSuccess()).isFalse();
        }

        @Test
        @DisplayName("on an unknown session is 'not found'")
        void unknownSession() {
            assertThatThrownBy(() -> manager.exec("nobody", ExecRequest.of("true")))
                    .isInstanceOf(SandboxNotFoundException.class).hasMessageContaining("nobody");
        }

        @Test
        @DisplayName("resumes transparently when the container vanished outside the manager")
        void vanished() {
            Sandbox sandbox = manager.acquire("s", SPEC);
            String before = sandbox.info().sandboxId();
            driver.vanish(before);

            assertThat(sandbox.exec("true").exitCode()).isZero();
            assertThat(sandbox.info().sandboxId()).isNotEqualTo(before);
            assertThat(driver.createCount()).isEqualTo(2);
        }

        @Test
        @DisplayName("makes no store round trip")
        void noStoreTrips() {
            CountingStore store = new CountingStore();
            try (SandboxManager m = SandboxManager.builder().driver(driver).clock(clock).scheduler(scheduler)
                    .store(store).build()) {
                Sandbox sandbox = m.acquire("s", SPEC);
                int before = store.calls;
                for (int i = 0; i < 100; i++) {
                    sandbox.exec("true");
                }
                assertThat(store.calls).isEqualTo(before);
            }
        }
    }

    @Nested
    @DisplayName("idle reaping")
    class Reaping {
        @Test
        @DisplayName("removes the container after the TTL and keeps the workdir; the session becomes SUSPENDED")
        void reapsAfterTtl() {
            Sandbox sandbox = manager.acquire("s", SPEC);
            scheduler.advance(TTL.minusSeconds(1));
            assertThat(driver.liveSandboxes()).hasSize(1);

            scheduler.advance(Duration.ofSeconds(11)); // TTL + one reaper interval at most

            assertThat(driver.liveSandboxes()).isEmpty();
            SessionInfo info = sandbox.info();
            assertThat(info.state()).isEqualTo(SessionState.SUSPENDED);
            assertThat(info.sandboxId()).isNull();
            assertThat(driver.workspaceExists(info.workspace())).isTrue();
        }

        @Test
        @DisplayName("exec and keepAlive reset the idle clock")
        void activityResets() {
            Sandbox sandbox = manager.acquire("s", SPEC);
            scheduler.advance(Duration.ofMinutes(20));
            sandbox.exec("true");
            scheduler.advance(Duration.ofMinutes(20));
            manager.keepAlive("s");
            scheduler.advance(Duration.ofMinutes(20));
            assertThat(driver.liveSandboxes()).hasSize(1);

            scheduler.advance(Duration.ofMinutes(11));
            assertThat(driver.liveSandboxes()).isEmpty();
        }

        @Test
        @DisplayName("never reaps a sandbox while an exec is running in it")
        void runningExecIsActivity() throws Exception {
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch finish = new CountDownLatch(1);
            driver.when(e -> e.commandLine().equals("long"), e -> {
                started.countDown();
                await(finish);
                return FakeDriver.result(0, "done", "");
            });
            Sandbox sandbox = manager.acquire("s", SPEC);
            ExecutorService caller = Executors.newSingleThreadExecutor();
            try {
                Future<ExecResult> running = caller.submit(() -> sandbox.exec("long"));
                assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();

                scheduler.advance(TTL.multipliedBy(3));
                assertThat(driver.liveSandboxes()).hasSize(1);

                finish.countDown();
                assertThat(running.get(5, TimeUnit.SECONDS).stdout()).isEqualTo("done");
                scheduler.advance(TTL.minusSeconds(1));
                assertThat(driver.liveSandboxes()).hasSize(1); // the exec's end was activity too
                scheduler.advance(Duration.ofSeconds(11));
                assertThat(driver.liveSandboxes()).isEmpty();
            } finally {
                finish.countDown();
                caller.shutdownNow();
            }
        }

        @Test
        @DisplayName("keeps the container when the store cannot record the reap, and reaps once it can")
        void storeDownDuringReap() {
            FlakyStore store = new FlakyStore();
            // Its own fleet: it shares the fake engine with the test's other manager but not its store.
            try (SandboxManager m = SandboxManager.builder().driver(driver).clock(clock).scheduler(scheduler)
                    .store(store).idleTimeout(TTL).reaperInterval(Duration.ofSeconds(10)).fleet("flaky").build()) {
                Sandbox sandbox = m.acquire("flaky", SPEC);
                store.down.set(true);
                scheduler.advance(TTL.plusSeconds(20));
                assertThat(driver.liveSandboxes()).hasSize(1);
                assertThat(sandbox.exec("true").exitCode()).isZero(); // still served while the store is down

                store.down.set(false);
                scheduler.advance(TTL.plusSeconds(20));
                assertThat(driver.liveSandboxes()).isEmpty();
            }
        }
    }

    @Nested
    @DisplayName("resume")
    class Resume {
        @Test
        @DisplayName("a reconcile pass reads every page of the store: 1,200 ACTIVE sessions whose containers vanished all become SUSPENDED")
        void reconcileReadsEveryPage() {
            int n = 1_200; // more than two store pages
            for (int i = 0; i < n; i++) {
                manager.acquire(String.format("page-%04d", i), SPEC);
            }
            driver.liveSandboxes().forEach(driver::vanish);
            manager.reconcile();
            for (int i = 0; i < n; i++) {
                assertThat(manager.session(String.format("page-%04d", i)).orElseThrow().state()).as("session %d", i)
                        .isEqualTo(SessionState.SUSPENDED);
            }
        }

        @Test
        @DisplayName("the next exec after a reap starts a fresh container on the same workdir")
        void execResumes() {
            driver.when(e -> e.commandLine().equals("write"), e -> {
                e.files().put("note.txt", "hi".getBytes());
                return FakeDriver.result(0, "", "");
            });
            driver.when(e -> e.commandLine().equals("read"),
                    e -> FakeDriver.result(0, new String(e.files().get("note.txt")), ""));
            Sandbox sandbox = manager.acquire("s", SPEC);
            String first = sandbox.info().sandboxId();
            sandbox.exec("write");
            scheduler.advance(TTL.plusSeconds(11));
            assertThat(sandbox.info().state()).isEqualTo(SessionState.SUSPENDED);

            ExecResult r = sandbox.exec("read");

            assertThat(r.stdout()).isEqualTo("hi");
            SessionInfo info = sandbox.info();
            assertThat(info.state()).isEqualTo(SessionState.ACTIVE);
            assertThat(info.sandboxId()).isNotEqualTo(first);
            assertThat(driver.createCount()).isEqualTo(2);
        }

        @Test
        @DisplayName("through the manager, with the spec stored for the session")
        void managerExecResumes() {
            manager.acquire("s", SPEC.toBuilder().env("KEPT", "yes").build());
            scheduler.advance(TTL.plusSeconds(11));

            manager.exec("s", ExecRequest.of("env"));

            assertThat(driver.execs().get(0).request().env()).containsEntry("KEPT", "yes");
            assertThat(manager.session("s").orElseThrow().state()).isEqualTo(SessionState.ACTIVE);
        }

        @Test
        @DisplayName("acquire after a reap resumes on the same workdir")
        void acquireResumes() {
            String workspace = manager.acquire("s", SPEC).info().workspace();
            scheduler.advance(TTL.plusSeconds(11));
            assertThat(manager.acquire("s", SPEC).info().workspace()).isEqualTo(workspace);
        }
    }

    @Nested
    @DisplayName("release and destroy")
    class ReleaseDestroy {
        @Test
        @DisplayName("release keeps a persistent sandbox until its idle TTL")
        void releaseKeeps() {
            Sandbox sandbox = manager.acquire("s", SPEC);
            sandbox.release();
            assertThat(driver.liveSandboxes()).hasSize(1);
            assertThat(sandbox.exec("true").exitCode()).isZero();
        }

        @Test
        @DisplayName("destroy removes container and workdir; the session is then 'not found'")
        void destroy() {
            Sandbox sandbox = manager.acquire("s", SPEC);
            String workspace = sandbox.info().workspace();

            manager.destroy("s");
            manager.destroy("s"); // idempotent

            assertThat(driver.liveSandboxes()).isEmpty();
            assertThat(driver.workspaceExists(workspace)).isFalse();
            assertThat(manager.session("s").orElseThrow().state()).isEqualTo(SessionState.DESTROYED);
            assertThatThrownBy(() -> sandbox.exec("true")).isInstanceOf(SandboxNotFoundException.class);
            assertThatThrownBy(() -> manager.exec("s", ExecRequest.of("true")))
                    .isInstanceOf(SandboxNotFoundException.class);
            assertThatThrownBy(() -> manager.keepAlive("s")).isInstanceOf(SandboxNotFoundException.class);
        }

        @Test
        @DisplayName("acquire after destroy starts a new, empty session that old handles cannot reach")
        void reacquireAfterDestroy() {
            Sandbox old = manager.acquire("s", SPEC);
            old.destroy();
            clock.advance(Duration.ofSeconds(1));
            Sandbox fresh = manager.acquire("s", SPEC);

            assertThat(fresh.exec("true").exitCode()).isZero();
            assertThatThrownBy(() -> old.exec("true")).isInstanceOf(SandboxNotFoundException.class);
            assertThat(driver.liveSandboxes()).hasSize(1);
        }

        @Test
        @DisplayName("releasing an ephemeral sandbox destroys it, and it can never be acquired again")
        void ephemeral() {
            SandboxSpec once = SPEC.toBuilder().ephemeral().build();
            Sandbox sandbox = manager.acquire("task-1", once);
            String workspace = sandbox.info().workspace();

            sandbox.close();

            assertThat(driver.liveSandboxes()).isEmpty();
            assertThat(driver.workspaceExists(workspace)).isFalse();
            assertThatThrownBy(() -> sandbox.exec("true")).isInstanceOf(SandboxNotFoundException.class);
            assertThatThrownBy(() -> manager.acquire("task-1", once)).isInstanceOf(SandboxAcquireException.class)
                    .hasMessageContaining("single-use");
        }
    }

    @Nested
    @DisplayName("close")
    class Close {
        @Test
        @DisplayName("suspends every session, keeps workdirs and leaves injected services open")
        void close() {
            Sandbox a = manager.acquire("a", SPEC);
            manager.acquire("b", SPEC);
            String workspace = a.info().workspace();

            manager.close();

            assertThat(driver.liveSandboxes()).isEmpty();
            assertThat(driver.workspaceExists(workspace)).isTrue();
            assertThat(scheduler.isShutdown()).isFalse();
            assertThat(scheduler.pendingTasks()).isZero(); // the reaper was cancelled
            assertThatThrownBy(() -> manager.acquire("c", SPEC)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Nested
    @DisplayName("builder and discovery")
    class BuilderDiscovery {
        @Test
        @DisplayName("ping() asks the backend and names it when it does not answer")
        void ping() {
            manager.ping();
            driver.setUnavailable(true);
            assertThatThrownBy(manager::ping).isInstanceOf(dev.sandboxkit.SandboxUnavailableException.class);
            driver.setUnavailable(false);
            manager.ping();
        }

        @Test
        @DisplayName("options can be set only once")
        void setOnce() {
            SandboxManager.Builder b = SandboxManager.builder().idleTimeout(TTL);
            assertThatThrownBy(() -> b.idleTimeout(TTL)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("idleTimeout");
        }

        @Test
        @DisplayName("a driver name nobody provides fails and lists the candidates")
        void unknownDriver() {
            assertThatThrownBy(() -> SandboxManager.builder().driver("nope").build())
                    .isInstanceOf(SandboxConfigurationException.class)
                    .hasMessageContaining("nope").hasMessageContaining("fake");
        }

        @Test
        @DisplayName("the fake driver is used only when asked for by name")
        void fakeByName() {
            try (SandboxManager m = SandboxManager.builder().driver("fake").build()) {
                assertThat(m.driverName()).isEqualTo("fake");
            }
            String previous = System.setProperty("sandboxkit.driver", "fake");
            try (SandboxManager m = SandboxManager.builder().build()) {
                assertThat(m.driverName()).isEqualTo("fake");
            } finally {
                System.clearProperty("sandboxkit.driver");
            }
            assertThat(previous).isNull();
        }

        @Test
        @DisplayName("without any usable driver the error explains why each candidate was passed over")
        void noUsableDriver() {
            // Only the fake driver is on this module's test classpath, and it is used only when named.
            assertThatThrownBy(() -> SandboxManager.builder().build())
                    .isInstanceOf(SandboxConfigurationException.class)
                    .hasMessageContaining("fake: only used when selected by name");
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Counts every store call. */
    static class CountingStore extends DelegatingStore {
        volatile int calls;

        @Override
        void before() {
            calls++;
        }
    }

    /** Fails every call while {@link #down} is set. */
    static class FlakyStore extends DelegatingStore {
        final AtomicBoolean down = new AtomicBoolean();

        @Override
        void before() {
            if (down.get()) {
                throw new SessionStoreException("store is down", null, true);
            }
        }
    }

    abstract static class DelegatingStore implements SessionStore {
        private final SessionStore delegate = SessionStore.inMemory();

        abstract void before();

        @Override
        public Optional<SessionRecord> find(String id) {
            before();
            return delegate.find(id);
        }

        @Override
        public boolean insert(SessionRecord r) {
            before();
            return delegate.insert(r);
        }

        @Override
        public Optional<SessionRecord> update(SessionRecord r) {
            before();
            return delegate.update(r);
        }

        @Override
        public boolean delete(String id, long v) {
            before();
            return delegate.delete(id, v);
        }

        @Override
        public List<SessionRecord> findByState(dev.sandboxkit.SessionState state, String after, int limit) {
            before();
            return delegate.findByState(state, after, limit);
        }

        @Override
        public List<String> heartbeat(String owner, Map<String, Instant> activity, Instant lease) {
            before();
            return delegate.heartbeat(owner, activity, lease);
        }
    }
}
