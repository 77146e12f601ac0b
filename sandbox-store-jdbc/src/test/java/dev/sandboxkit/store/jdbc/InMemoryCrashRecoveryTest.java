package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.spi.SandboxDescriptor;
import dev.sandboxkit.spi.SandboxLabels;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 29 A on the real engine, across processes: an application with an in-memory store (the default) and no fleet
 * named. While it lives, no other manager removes its containers, even one on the same workspace root that names the
 * same fleet, with a 1 s grace. Once it is killed (SIGKILL), a manager restarted on the same workspace root proves its
 * store gone (nobody holds its lock file any more) and removes its containers at once; a manager on another root
 * cannot prove it and leaves them.
 */
@DisplayName("Crash recovery of an in-memory store")
@Timeout(180)
class InMemoryCrashRecoveryTest {
    private static final int SESSIONS = 3;

    @TempDir
    Path tmp;
    private Path root;
    private CountingDriver cleaner;
    private String store;

    @BeforeEach
    void setUp() throws Exception {
        Docker.require();
        root = Files.createDirectories(tmp.resolve("workspaces"));
        cleaner = new CountingDriver(Docker.driver("cleaner", root));
    }

    @AfterEach
    void tearDown() {
        if (store != null) {
            for (SandboxDescriptor c : containers()) {
                cleaner.remove(c.id());
            }
        }
        cleaner.close();
    }

    @Test
    @DisplayName("kill -9 of an in-memory app: left alone while it lives, removed by a manager on the same root once dead")
    void sweptOnlyOnceProvenDead() throws Exception {
        try (Fork app = Fork.start(ManagerWorker.class, "memory", "-", root.toString(), "app", "-", "30000", "hold",
                "mem-", Integer.toString(SESSIONS))) {
            app.awaitLine("READY", Duration.ofSeconds(120));
            String anyContainer = app.output().lines().filter(l -> l.startsWith("HELD ")).findFirst().orElseThrow()
                    .split(" ")[3];
            store = cleaner.list(Map.of(SandboxLabels.MANAGED, "true")).stream()
                    .filter(c -> c.id().equals(anyContainer)).findFirst().orElseThrow().labels().get(SandboxLabels.STORE);
            assertThat(store).isNotNull();
            assertThat(containers()).hasSize(SESSIONS);

            try (SandboxManager neighbour = manager(root, "neighbour")) {
                Thread.sleep(1_500); // past the 1 s grace
                assertThat(neighbour.reconcile()).as("the app is alive: it holds its store's lock").isZero();
                assertThat(containers()).hasSize(SESSIONS);
            }
            app.kill(); // SIGKILL: no close(), its containers keep running
        }
        assertThat(containers()).hasSize(SESSIONS);

        try (SandboxManager elsewhere = manager(tmp.resolve("other-root"), "elsewhere")) {
            assertThat(elsewhere.reconcile()).as("no proof under another root").isZero();
            assertThat(containers()).hasSize(SESSIONS);
        }
        try (SandboxManager restarted = manager(root, "restarted")) {
            restarted.reconcile(); // the sweep at build may have done it already
            assertThat(restarted.stats().orphansRemoved()).isEqualTo(SESSIONS);
            assertThat(containers()).isEmpty();
            assertThat(root.resolve(".sandboxkit/stores/" + store + ".lock")).as("forgotten").doesNotExist();
            // The workdirs are durable: the restarted app resumes the sessions on them.
            assertThat(restarted.acquire("mem-0", Docker.SPEC).exec(ExecRequest.of("cat", "note.txt")).stdout()).isEqualTo("from-mem-0\n");
        }
    }

    /** A manager with its own in-memory store that names fleet "default", with a 1 s grace. */
    private SandboxManager manager(Path workspaceRoot, String id) {
        return SandboxManager.builder().driver("docker").workspaceRoot(workspaceRoot).instanceId(id).fleet("default")
                .orphanGrace(Duration.ofSeconds(1)).reconcileInterval(Duration.ofHours(1)).build();
    }

    private List<SandboxDescriptor> containers() {
        return cleaner.list(Map.of(SandboxLabels.MANAGED, "true", SandboxLabels.STORE, store));
    }
}
