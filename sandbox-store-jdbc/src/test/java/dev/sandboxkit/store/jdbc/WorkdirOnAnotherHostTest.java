package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
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
import java.util.List;
import java.util.UUID;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue 29 (D2.1): two managers with their own workspace roots (two hosts) on one JDBC store, no archive tier,
 * on the real engine. A session's workdir lives on the host that created it: the other manager refuses to
 * destroy, resume or open its files before it writes anything, with an error that says where the workdir is, and
 * a destroy that another manager claimed but could not finish is finished by the one that holds the workdir.
 */
@DisplayName("A session whose workdir is on another host: refused before any write, destroyed where it lives")
@Timeout(180)
class WorkdirOnAnotherHostTest {
    private static final Duration IDLE = Duration.ofSeconds(1);

    @TempDir
    Path tmp;
    private Path rootA;
    private Path rootB;
    private String fleet;
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final List<String> schemas = new ArrayList<>();
    private CountingDriver cleaner;

    @BeforeEach
    void setUp() throws Exception {
        Docker.require();
        rootA = Files.createDirectories(tmp.resolve("host-a"));
        rootB = Files.createDirectories(tmp.resolve("host-b"));
        fleet = "elsewhere-" + UUID.randomUUID().toString().substring(0, 8);
        cleaner = new CountingDriver(Docker.driver("cleaner", rootA));
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
        Docker.removeFleet(cleaner, fleet);
        cleaner.close();
        schemas.forEach(Postgres::dropSchema);
    }

    private <T extends AutoCloseable> T closeLater(T c) {
        toClose.add(c);
        return c;
    }

    /** One store for both managers: an H2 file, or a PostgreSQL schema. */
    private JdbcSessionStore store(String kind) {
        if (kind.equals("h2")) {
            return closeLater(JdbcSessionStore.h2(tmp.resolve("db/sessions")));
        }
        Postgres.require();
        String schema = Postgres.createSchema("elsewhere");
        schemas.add(schema);
        TestPool pool = closeLater(new TestPool(Postgres.dataSource(schema), 6));
        return closeLater(JdbcSessionStore.create(pool));
    }

    private CountingDriver driver(String instanceId, Path root) {
        return closeLater(new CountingDriver(Docker.driver(instanceId, root)));
    }

    private SandboxManager manager(String instanceId, CountingDriver driver, SessionStore store, Path root) {
        return closeLater(SandboxManager.builder().driver(driver).store(store).instanceId(instanceId).fleet(fleet)
                .workspaceRoot(root).idleTimeout(IDLE).reaperInterval(Duration.ofMillis(200))
                .leaseDuration(Duration.ofSeconds(30)).reconcileInterval(Duration.ofMillis(300)).build());
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

    /** A creates the session, writes a file into it, and reaps it. Returns the workdir. */
    private Path suspendedOnA(SandboxManager a, SessionStore store, String sessionId) throws InterruptedException {
        a.acquire(sessionId, Docker.SPEC);
        a.files(sessionId).write("note.txt", "on host a".getBytes(StandardCharsets.UTF_8));
        await("A reaps the idle session", Duration.ofSeconds(20),
                () -> store.find(sessionId).orElseThrow().state() == SessionState.SUSPENDED);
        Path workdir = Path.of(store.find(sessionId).orElseThrow().workspace());
        assertThat(workdir.getParent()).isEqualTo(rootA.toAbsolutePath().normalize());
        return workdir;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"h2", "postgres"})
    @DisplayName("B refuses destroy, acquire and files of A's session before writing anything; A destroys it")
    void refusedBeforeAnyWrite(String kind) throws Exception {
        JdbcSessionStore store = store(kind);
        CountingDriver driverB = driver("host-b", rootB);
        SandboxManager a = manager("host-a", driver("host-a", rootA), store, rootA);
        SandboxManager b = manager("host-b", driverB, store, rootB);
        Path workdir = suspendedOnA(a, store, "s1");
        SessionRecord before = store.find("s1").orElseThrow();

        String where = "this session's workdir is on another host (root " + rootA.toAbsolutePath().normalize() + ")";
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
        assertThat(driverB.created).as("no container started on B").isEmpty();
        Thread.sleep(900); // a few janitor passes on both managers
        assertThat(store.find("s1").orElseThrow()).isEqualTo(before);

        a.destroy("s1");
        assertThat(store.find("s1").orElseThrow().state()).isEqualTo(SessionState.DESTROYED);
        assertThat(workdir).doesNotExist();
        b.destroy("s1"); // idempotent from anywhere once destroyed
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"h2", "postgres"})
    @DisplayName("a destroy claimed by B, which cannot finish it (what an older B left), is finished by A.destroy;"
            + " B's janitor leaves it alone")
    void destroyClaimedElsewhereIsFinishedWhereTheWorkdirIs(String kind) throws Exception {
        JdbcSessionStore store = store(kind);
        CountingDriver driverB = driver("host-b", rootB);
        SandboxManager a = manager("host-a", driver("host-a", rootA), store, rootA);
        SandboxManager b = manager("host-b", driverB, store, rootB);
        Path workdir = suspendedOnA(a, store, "s2");

        // The state the issue found after B's failed destroy: DESTROYING, claimed by B under a lease that B renews.
        SessionRecord rec = store.find("s2").orElseThrow();
        Instant now = Instant.now();
        SessionRecord claimed = store.update(rec.withSandbox(SessionState.DESTROYING, rec.sandboxId(),
                rec.sandboxStartedAt()).withOwner("host-b", now.plusSeconds(5)).withLastActivity(now)).orElseThrow();
        Thread.sleep(900); // B's janitor passes: it cannot finish it, and must not claim it again
        assertThat(store.find("s2").orElseThrow().version()).as("B's janitor wrote nothing")
                .isEqualTo(claimed.version());
        assertThat(workdir).exists();

        a.destroy("s2"); // must not return while the session is not gone
        assertThat(store.find("s2").orElseThrow().state()).isEqualTo(SessionState.DESTROYED);
        assertThat(workdir).doesNotExist();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"h2"})
    @DisplayName("a destroy that failed after its claim is everyone's to finish at once: A's next destroy finishes"
            + " what A's own failed destroy left, without waiting for a lease")
    void failedDestroyIsReleased(String kind) throws Exception {
        JdbcSessionStore store = store(kind);
        CountingDriver driverA = driver("host-a", rootA);
        SandboxManager a = manager("host-a", driverA, store, rootA);
        Path workdir = suspendedOnA(a, store, "s3");
        // An entry the JVM cannot delete: the destroy fails after its claim (immutable as root, no write
        // permission on its directory otherwise).
        Path stuck = Files.createDirectories(workdir.resolve("stuck/inner"));
        resist(stuck, true);
        try {
            assertThatThrownBy(() -> a.destroy("s3")).isInstanceOf(SandboxException.class);
            SessionRecord left = store.find("s3").orElseThrow();
            assertThat(left.state()).isEqualTo(SessionState.DESTROYING);
            assertThat(left.leaseExpired(Instant.now())).as("the failed claim is released").isTrue();
        } finally {
            resist(stuck, false);
        }
        a.destroy("s3");
        assertThat(store.find("s3").orElseThrow().state()).isEqualTo(SessionState.DESTROYED);
        assertThat(workdir).doesNotExist();
    }

    /** Makes {@code entry} resist deletion, or stop resisting. */
    private static void resist(Path entry, boolean on) throws Exception {
        if ("root".equals(System.getProperty("user.name"))) {
            Process p = new ProcessBuilder("chattr", on ? "+i" : "-i", entry.toString()).inheritIO().start();
            assertThat(p.waitFor()).as("chattr").isZero();
        } else {
            Files.setPosixFilePermissions(entry.getParent(),
                    java.nio.file.attribute.PosixFilePermissions.fromString(on ? "r-x------" : "rwx------"));
        }
    }
}
