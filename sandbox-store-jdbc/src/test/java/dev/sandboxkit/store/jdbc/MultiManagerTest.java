package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SandboxDescriptor;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.testsupport.Await;
import dev.sandboxkit.testsupport.HousekeepingScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue #4's scenarios: the real lifecycle engine, the real Docker driver and real databases, with several
 * managers (in this JVM and in forked ones) sharing one JDBC store. (d) is issue 29's: managers with their own
 * workspace roots stand in for two hosts, without an archive tier; a session's workdir stays on the host that
 * created it, the other refuses to destroy, resume or open its files before it writes anything, and a destroy
 * another manager claimed but could not finish is finished where the workdir is.
 */
@Tag("postgres")
@DisplayName("Several managers on one JDBC store, on the real Docker engine")
@Timeout(120)
class MultiManagerTest {
    private static final Duration FORK_TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path tmp;
    private Path root;
    private String fleet;
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final List<String> schemas = new ArrayList<>();
    private CountingDriver cleaner;
    /** Every manager's housekeeping, counted: a test asserting that a pass did nothing first waits for passes. */
    private final HousekeepingScheduler housekeeping = new HousekeepingScheduler("jdbc-housekeeping");

    @BeforeEach
    void setUp() throws Exception {
        Docker.require();
        root = tmp.resolve("workspaces");
        Files.createDirectories(root);
        fleet = "jdbc-" + UUID.randomUUID().toString().substring(0, 8);
        cleaner = new CountingDriver(Docker.driver("cleaner", root));
    }

    @AfterEach
    void tearDown() {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            try {
                toClose.get(i).close();
            } catch (Exception e) {
                // best effort
            }
        }
        housekeeping.close();
        Docker.removeFleet(cleaner, fleet);
        cleaner.close();
        schemas.forEach(Postgres::dropSchema);
    }

    private <T extends AutoCloseable> T closeLater(T c) {
        toClose.add(c);
        return c;
    }

    private JdbcSessionStore postgresStore(String schema) {
        TestPool pool = closeLater(new TestPool(Postgres.dataSource(schema), 6));
        return closeLater(JdbcSessionStore.create(pool));
    }

    private String newSchema() {
        String schema = Postgres.createSchema("mm");
        schemas.add(schema);
        return schema;
    }

    private SandboxManager manager(String instanceId, CountingDriver driver, JdbcSessionStore store,
                                   Duration idle, Duration lease) {
        return closeLater(SandboxManager.builder().driver(driver).store(store).instanceId(instanceId).fleet(fleet)
                .idleTimeout(idle).reaperInterval(Duration.ofMillis(200)).leaseDuration(lease)
                .reconcileInterval(Duration.ofMillis(300)).scheduler(housekeeping).build());
    }

    /**
     * Waits until the reaper (every 200 ms) and the orphan sweep with the janitor (every 300 ms) of every manager of
     * the test have run three more whole passes: what a test asserting that they did nothing must wait for.
     */
    private void threeMorePasses() {
        HousekeepingScheduler.Mark mark = housekeeping.mark();
        Await.until(Duration.ofSeconds(60), () -> housekeeping.ranSince(mark, 3, Duration.ofMillis(200))
                && housekeeping.ranSince(mark, 3, Duration.ofMillis(300)), () -> housekeeping.progress(mark));
    }

    private CountingDriver driver(String instanceId) {
        return closeLater(new CountingDriver(Docker.driver(instanceId, root)));
    }

    private static String run(SandboxManager m, String session, String script) {
        ExecResult r = m.exec(session, ExecRequest.shell(script));
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        return r.stdout().strip();
    }

    private static void await(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout + " waiting for: " + what);
            }
            Thread.sleep(50);
        }
    }

    private static <T> T retryWhileHeld(Duration timeout, Callable<T> call) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                return call.call();
            } catch (SandboxAcquireException e) {
                if (!e.isRetryable() || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    private List<String> liveContainers() {
        return Docker.containers(cleaner, fleet).stream().map(SandboxDescriptor::id).toList();
    }

    @Test
    @DisplayName("(a) restart: a new JVM on the same H2 file sees the session, and its exec resumes with the file intact")
    void restartOnH2() throws Exception {
        Path file = tmp.resolve("db/sessions");
        String workspace;
        try (JdbcSessionStore store = JdbcSessionStore.h2(file)) {
            CountingDriver driver = driver("first");
            SandboxManager first = manager("first", driver, store, Duration.ofMinutes(5), Duration.ofSeconds(30));
            first.acquire("chat", Docker.SPEC);
            run(first, "chat", "echo kept-across-restarts > /workspace/note.txt");
            workspace = first.session("chat").orElseThrow().workspace();
            first.close(); // suspends: container removed, workdir kept
            assertThat(driver.totalRemovals()).isEqualTo(1);
        }
        assertThat(liveContainers()).isEmpty();

        try (Fork second = Fork.start(ManagerWorker.class, "h2", file.toString(), root.toString(), "second", fleet,
                "30000", "exec", "chat", "cat /workspace/note.txt")) {
            assertThat(second.awaitLine("INFO", FORK_TIMEOUT)).isEqualTo("INFO SUSPENDED " + workspace);
            assertThat(second.awaitLine("OUT", FORK_TIMEOUT)).isEqualTo("OUT kept-across-restarts");
            assertThat(second.awaitLine("EXIT", FORK_TIMEOUT)).isEqualTo("EXIT 0");
            second.awaitSuccess(FORK_TIMEOUT);
        }
        try (JdbcSessionStore store = JdbcSessionStore.h2(file)) {
            SessionRecord after = store.find("chat").orElseThrow();
            assertThat(after.state()).isEqualTo(SessionState.SUSPENDED); // the second JVM closed its manager
            assertThat(after.owner()).as("a suspended session belongs to no manager").isNull();
            assertThat(after.workspace()).isEqualTo(workspace);
        }
        assertThat(liveContainers()).isEmpty();
    }

    @Test
    @DisplayName("(b) two managers on PostgreSQL: a session created via A and reaped is resumed via B; each container"
            + " is removed exactly once")
    void resumeOnAnotherManager() throws Exception {
        String schema = newSchema();
        CountingDriver driverA = driver("mgr-a");
        CountingDriver driverB = driver("mgr-b");
        SandboxManager a = manager("mgr-a", driverA, postgresStore(schema), Duration.ofSeconds(1), Duration.ofSeconds(2));
        SandboxManager b = manager("mgr-b", driverB, postgresStore(schema), Duration.ofSeconds(1), Duration.ofSeconds(2));
        JdbcSessionStore observer = postgresStore(schema);

        a.acquire("chat", Docker.SPEC);
        run(a, "chat", "echo written-via-a > /workspace/note.txt");
        String first = a.session("chat").orElseThrow().sandboxId();
        assertThatThrownBy(() -> b.acquire("chat", Docker.SPEC)).isInstanceOf(SandboxAcquireException.class)
                .hasMessageContaining("held by live manager mgr-a");

        await("A reaps the idle session", Duration.ofSeconds(10),
                () -> observer.find("chat").orElseThrow().state() == SessionState.SUSPENDED);
        threeMorePasses();
        assertThat(driverA.removalsOf(first)).as("removed by A").isEqualTo(1);
        assertThat(driverB.removalsOf(first)).as("removed by B").isZero();
        assertThat(liveContainers()).doesNotContain(first);

        assertThat(run(b, "chat", "cat /workspace/note.txt")).isEqualTo("written-via-a");
        SessionInfo onB = b.session("chat").orElseThrow();
        assertThat(onB.state()).isEqualTo(SessionState.ACTIVE);
        assertThat(onB.owner()).isEqualTo("mgr-b");
        String second = onB.sandboxId();
        assertThat(second).isNotEqualTo(first);
        assertThat(liveContainers()).containsExactly(second);

        await("B reaps the idle session", Duration.ofSeconds(10),
                () -> observer.find("chat").orElseThrow().state() == SessionState.SUSPENDED);
        threeMorePasses();
        assertThat(driverB.removalsOf(second)).as("removed by B").isEqualTo(1);
        assertThat(driverA.removalsOf(second)).as("removed by A").isZero();
        assertThat(driverA.removalsOf(first) + driverB.removalsOf(first)).isEqualTo(1);
        assertThat(liveContainers()).isEmpty();
        assertThat(driverA.created).containsExactly(first);
        assertThat(driverB.created).containsExactly(second);
    }

    @Test
    @DisplayName("(b) an idle session is reaped exactly once, even while an orphan sweep is working from an older"
            + " container listing")
    void reapedOnceDuringSweep() throws Exception {
        String schema = newSchema();
        CountingDriver driverA = driver("mgr-a");
        // Periodic sweeps effectively off: this test runs one sweep itself, on another thread.
        SandboxManager a = closeLater(SandboxManager.builder().driver(driverA).store(postgresStore(schema))
                .instanceId("mgr-a").fleet(fleet).idleTimeout(Duration.ofSeconds(1)).reaperInterval(Duration.ofMillis(100))
                .leaseDuration(Duration.ofSeconds(2)).reconcileInterval(Duration.ofHours(1)).scheduler(housekeeping)
                .build());
        JdbcSessionStore observer = postgresStore(schema);
        a.acquire("chat", Docker.SPEC);
        String container = a.session("chat").orElseThrow().sandboxId();

        // The sweep lists the containers (the live one included) and is held there while the reaper does its
        // job: what a slow engine, or a sweep busy with many other containers, does.
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        CountingDriver.HeldListing held = driverA.holdNextList(release);
        java.util.concurrent.ExecutorService sweeper = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            java.util.concurrent.Future<Integer> sweep = sweeper.submit(a::reconcile);
            assertThat(held.taken.await(10, java.util.concurrent.TimeUnit.SECONDS)).as("the sweep listed").isTrue();
            assertThat(held.listing).extracting(SandboxDescriptor::id).contains(container);
            await("A reaps the idle session", Duration.ofSeconds(10),
                    () -> observer.find("chat").orElseThrow().state() == SessionState.SUSPENDED
                            && driverA.removalsOf(container) == 1 && a.stats().idleReaped() == 1);
            // The reap's last step, the manager forgetting the session: done once a whole reaper pass ran since.
            housekeeping.awaitPasses(1, Duration.ofMillis(100), Duration.ofSeconds(60));
            release.countDown();
            int removedBySweep = sweep.get(30, java.util.concurrent.TimeUnit.SECONDS);

            assertThat(a.stats().idleReaped()).isEqualTo(1);
            assertThat(removedBySweep).as("containers the sweep removed as orphans").isZero();
            assertThat(a.stats().orphansRemoved()).as("orphans counted").isZero();
            assertThat(driverA.removalsOf(container)).as("removals of the reaped container").isEqualTo(1);
        } finally {
            release.countDown();
            sweeper.shutdownNow();
        }
    }

    @Test
    @DisplayName("(c) a manager JVM killed with kill -9: after its lease expires another manager takes its sessions"
            + " over, with the files intact")
    void takeoverAfterKill() throws Exception {
        String schema = newSchema();
        int sessions = 3;
        Map<String, String> oldContainers = new HashMap<>();
        JdbcSessionStore store = postgresStore(schema);
        try (Fork doomed = Fork.start(ManagerWorker.class, "pg", schema, root.toString(), "doomed", fleet, "2000",
                "hold", "s-", Integer.toString(sessions))) {
            doomed.awaitLine("READY", FORK_TIMEOUT);
            for (String line : doomed.output().split("\n")) {
                if (line.startsWith("HELD ")) {
                    String[] parts = line.split(" ");
                    assertThat(parts[2]).as(line).isEqualTo("0");
                    oldContainers.put(parts[1], parts[3]);
                }
            }
            assertThat(oldContainers).hasSize(sessions);
            doomed.kill(); // SIGKILL: no close, no lease release, containers left running
        }
        Instant killedAt = Instant.now();
        assertThat(liveContainers()).containsAll(oldContainers.values());

        CountingDriver driver = driver("heir");
        SandboxManager heir = manager("heir", driver, store, Duration.ofMinutes(5), Duration.ofSeconds(2));
        SessionRecord held = store.find("s-0").orElseThrow();
        if (held.leaseExpiry().isAfter(Instant.now().plusMillis(300)) && held.state() == SessionState.ACTIVE) {
            assertThatThrownBy(() -> heir.acquire("s-0", Docker.SPEC)).isInstanceOf(SandboxAcquireException.class)
                    .hasMessageContaining("held by live manager doomed");
        }

        for (int i = 0; i < sessions; i++) {
            String id = "s-" + i;
            retryWhileHeld(Duration.ofSeconds(15), () -> heir.acquire(id, Docker.SPEC));
            assertThat(run(heir, id, "cat /workspace/note.txt")).isEqualTo("from-" + id);
            SessionInfo info = heir.session(id).orElseThrow();
            assertThat(info.owner()).isEqualTo("heir");
            assertThat(info.sandboxId()).isNotEqualTo(oldContainers.get(id));
        }
        assertThat(Duration.between(killedAt, Instant.now())).as("took over only after the lease")
                .isGreaterThan(Duration.ofMillis(0));
        await("the dead manager's containers are removed", Duration.ofSeconds(10),
                () -> liveContainers().stream().noneMatch(oldContainers::containsValue));
        for (String old : oldContainers.values()) {
            // Exactly once: the takeover and the orphan sweep both claim the session by compare-and-set first,
            // and the sweep skips containers the engine removed itself (see reapedOnceDuringSweep).
            assertThat(driver.removalsOf(old)).as("removals of " + old).isEqualTo(1);
        }
        assertThat(liveContainers()).hasSize(sessions);
        for (SandboxDescriptor c : Docker.containers(cleaner, fleet)) {
            assertThat(c.owner()).isEqualTo("heir");
        }
    }

    // ---------------------------------------------------------------- (d) issue 29: a workdir on another host

    /** One store for two hosts: an H2 file, or a PostgreSQL schema. */
    private JdbcSessionStore sharedStore(String kind) {
        return kind.equals("h2") ? closeLater(JdbcSessionStore.h2(tmp.resolve("db/shared"))) : postgresStore(newSchema());
    }

    private CountingDriver driver(String instanceId, Path workspaceRoot) {
        return closeLater(new CountingDriver(Docker.driver(instanceId, workspaceRoot)));
    }

    /** A manager standing in for one host: its own workspace root, idle after 1 s. */
    private SandboxManager hostManager(String instanceId, CountingDriver driver, SessionStore store, Path workspaceRoot) {
        return closeLater(SandboxManager.builder().driver(driver).store(store).instanceId(instanceId).fleet(fleet)
                .workspaceRoot(workspaceRoot).idleTimeout(Duration.ofSeconds(1)).reaperInterval(Duration.ofMillis(200))
                .leaseDuration(Duration.ofSeconds(30)).reconcileInterval(Duration.ofMillis(300)).scheduler(housekeeping)
                .build());
    }

    /** Hosts A (this class's root) and B (its own root) on one store; A has created {@code sessionId} and reaped it. */
    private record TwoHosts(JdbcSessionStore store, SandboxManager a, SandboxManager b, CountingDriver driverB,
                            Path workdir) {
    }

    private TwoHosts twoHosts(String kind, String sessionId) throws Exception {
        JdbcSessionStore store = sharedStore(kind);
        Path rootB = Files.createDirectories(tmp.resolve("host-b"));
        CountingDriver driverB = driver("host-b", rootB);
        SandboxManager a = hostManager("host-a", driver("host-a", root), store, root);
        SandboxManager b = hostManager("host-b", driverB, store, rootB);
        return new TwoHosts(store, a, b, driverB, suspendedOnA(a, store, sessionId));
    }

    /** A creates the session, writes a file into it, and reaps it. Returns the workdir. */
    private Path suspendedOnA(SandboxManager a, SessionStore store, String sessionId) throws InterruptedException {
        a.acquire(sessionId, Docker.SPEC);
        a.files(sessionId).write("note.txt", "on host a".getBytes(StandardCharsets.UTF_8));
        await("A reaps the idle session", Duration.ofSeconds(20),
                () -> store.find(sessionId).orElseThrow().state() == SessionState.SUSPENDED);
        Path workdir = Path.of(store.find(sessionId).orElseThrow().workspace());
        assertThat(workdir.getParent()).isEqualTo(root.toAbsolutePath().normalize());
        return workdir;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"h2", "postgres"})
    @DisplayName("(d) two hosts (own workspace roots), no archive tier: B refuses destroy, acquire and files of A's"
            + " session before writing anything; A destroys it")
    void refusedBeforeAnyWrite(String kind) throws Exception {
        TwoHosts hosts = twoHosts(kind, "s1");
        JdbcSessionStore store = hosts.store();
        SandboxManager a = hosts.a();
        SandboxManager b = hosts.b();
        SessionRecord before = store.find("s1").orElseThrow();

        String where = "this session's workdir is on another host (root " + root.toAbsolutePath().normalize() + ")";
        assertThatThrownBy(() -> b.destroy("s1")).isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining(where).hasMessageContaining("destroy it there or archive it first");
        assertThat(store.find("s1").orElseThrow()).as("nothing written by the refused destroy").isEqualTo(before);

        assertThatThrownBy(() -> b.acquire("s1", Docker.SPEC)).isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining(where).hasMessageContaining("acquire it there or archive it first");
        assertThatThrownBy(() -> b.exec("s1", dev.sandboxkit.ExecRequest.shell("true")))
                .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining(where);
        assertThatThrownBy(() -> b.files("s1").readBytes("note.txt"))
                .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining(where)
                .hasMessageContaining("use its files there or archive it first");
        assertThat(store.find("s1").orElseThrow()).as("nothing written by the refused calls").isEqualTo(before);
        assertThat(hosts.driverB().created).as("no container started on B").isEmpty();
        threeMorePasses(); // janitor passes on both managers
        assertThat(store.find("s1").orElseThrow()).isEqualTo(before);

        a.destroy("s1");
        assertThat(store.find("s1").orElseThrow().state()).isEqualTo(SessionState.DESTROYED);
        assertThat(hosts.workdir()).doesNotExist();
        b.destroy("s1"); // idempotent from anywhere once destroyed
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"h2", "postgres"})
    @DisplayName("(d) a destroy claimed by B, which cannot finish it (what an older B left), is finished by A.destroy;"
            + " B's janitor leaves it alone")
    void destroyClaimedElsewhereIsFinishedWhereTheWorkdirIs(String kind) throws Exception {
        TwoHosts hosts = twoHosts(kind, "s2");
        JdbcSessionStore store = hosts.store();
        Path workdir = hosts.workdir();

        // The state the issue found after B's failed destroy: DESTROYING, claimed by B under a lease that B renews.
        SessionRecord rec = store.find("s2").orElseThrow();
        Instant now = Instant.now();
        SessionRecord claimed = store.update(rec.withSandbox(SessionState.DESTROYING, rec.sandboxId(),
                rec.sandboxStartedAt()).withOwner("host-b", now.plusSeconds(5)).withLastActivity(now)).orElseThrow();
        threeMorePasses(); // B's janitor passes: it cannot finish it, and must not claim it again
        assertThat(store.find("s2").orElseThrow().version()).as("B's janitor wrote nothing")
                .isEqualTo(claimed.version());
        assertThat(workdir).exists();

        hosts.a().destroy("s2"); // must not return while the session is not gone
        assertThat(store.find("s2").orElseThrow().state()).isEqualTo(SessionState.DESTROYED);
        assertThat(workdir).doesNotExist();
    }

    @Test
    @DisplayName("(d) a destroy that failed after its claim releases it (its lease ends), so whoever can finish it"
            + " need not wait; A's next destroy finishes it")
    void failedDestroyIsReleased() throws Exception {
        JdbcSessionStore store = sharedStore("h2");
        SandboxManager a = hostManager("host-a", driver("host-a", root), store, root);
        Path workdir = suspendedOnA(a, store, "s3");
        // An entry the JVM cannot delete: the destroy fails after its claim.
        Path stuck = Files.createDirectories(workdir.resolve("stuck/inner"));
        chattr("+i", stuck);
        try {
            assertThatThrownBy(() -> a.destroy("s3")).isInstanceOf(SandboxException.class);
            SessionRecord left = store.find("s3").orElseThrow();
            assertThat(left.state()).isEqualTo(SessionState.DESTROYING);
            assertThat(left.leaseExpired(Instant.now())).as("the failed claim is released").isTrue();
        } finally {
            chattr("-i", stuck);
        }
        a.destroy("s3");
        assertThat(store.find("s3").orElseThrow().state()).isEqualTo(SessionState.DESTROYED);
        assertThat(workdir).doesNotExist();
    }

    private static void chattr(String flag, Path file) throws Exception {
        Process p = new ProcessBuilder("chattr", flag, file.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("chattr %s (needs root and a file system with attributes): %s", flag, out).isZero();
    }
}
