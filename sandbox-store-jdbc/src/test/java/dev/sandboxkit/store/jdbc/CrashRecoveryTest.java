package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SandboxDescriptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue #6's crash scenario on the real engine and a real PostgreSQL: a forked JVM acquires 20 sessions,
 * writes a file in each and is killed with SIGKILL. A new manager on the same store leaves none of the dead
 * JVM's containers after one reconcile pass; every workdir file is intact and every session resumes.
 */
@Tag("postgres")
@DisplayName("Crash recovery through the orphan sweep")
@Timeout(180)
class CrashRecoveryTest {
    private static final int SESSIONS = 20;
    private static final Duration LEASE = Duration.ofSeconds(2);

    @TempDir
    Path tmp;
    private Path root;
    private String fleet;
    private String schema;
    private CountingDriver cleaner;
    private TestPool pool;

    @BeforeEach
    void setUp() throws Exception {
        Docker.require();
        root = Files.createDirectories(tmp.resolve("workspaces"));
        fleet = "crash-" + UUID.randomUUID().toString().substring(0, 8);
        schema = Postgres.createSchema("crash");
        cleaner = new CountingDriver(Docker.driver("cleaner", root));
        pool = new TestPool(Postgres.dataSource(schema), 6);
    }

    @AfterEach
    void tearDown() {
        Docker.removeFleet(cleaner, fleet);
        cleaner.close();
        pool.close();
        Postgres.dropSchema(schema);
    }

    @Test
    @DisplayName("kill -9 of a manager holding 20 sessions: one sweep removes all 20 containers, files intact, all resume")
    void sweepAfterKill() throws Exception {
        Map<String, String> containers = new LinkedHashMap<>();
        try (Fork doomed = Fork.start(ManagerWorker.class, "pg", schema, root.toString(), "doomed", fleet,
                Long.toString(LEASE.toMillis()), "hold", "crash-", Integer.toString(SESSIONS))) {
            doomed.awaitLine("READY", Duration.ofSeconds(120));
            for (String line : doomed.output().split("\n")) {
                if (line.startsWith("HELD ")) {
                    String[] parts = line.split(" ");
                    containers.put(parts[1], parts[3]);
                }
            }
            doomed.kill(); // SIGKILL: no close(), no lease release, containers left running
        }
        assertThat(containers).hasSize(SESSIONS);
        assertThat(ownedBy("doomed")).hasSize(SESSIONS);
        Thread.sleep(LEASE.plusMillis(500).toMillis()); // the dead manager's lease lapses

        try (JdbcSessionStore store = JdbcSessionStore.create(pool);
             SandboxManager survivor = SandboxManager.builder().driver(cleaner).store(store).instanceId("survivor")
                     .fleet(fleet).idleTimeout(Duration.ofMinutes(5)).reconcileInterval(Duration.ofHours(1)).build()) {
            // The sweep that runs at build may already have done the work (passes never overlap); after this
            // pass, exactly the 20 containers are gone, each counted once.
            survivor.reconcile();
            assertThat(survivor.stats().orphansRemoved()).isEqualTo(SESSIONS);
            assertThat(ownedBy("doomed")).isEmpty();

            for (Map.Entry<String, String> e : containers.entrySet()) {
                SessionInfo info = survivor.session(e.getKey()).orElseThrow();
                assertThat(info.state()).isEqualTo(SessionState.SUSPENDED);
                assertThat(Files.readString(Path.of(info.workspace(), "note.txt"))).isEqualTo("from-" + e.getKey() + "\n");
                assertThat(survivor.exec(e.getKey(), ExecRequest.of("cat", "note.txt")).stdout())
                        .isEqualTo("from-" + e.getKey() + "\n");
                assertThat(survivor.session(e.getKey()).orElseThrow().sandboxId()).isNotEqualTo(e.getValue());
            }
            assertThat(ownedBy("survivor")).hasSize(SESSIONS);
        }
    }

    private java.util.List<SandboxDescriptor> ownedBy(String owner) {
        return Docker.containers(cleaner, fleet).stream().filter(c -> owner.equals(c.owner())).toList();
    }
}
