package dev.sandboxkit.docker;

import com.github.dockerjava.api.DockerClient;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.docker.internal.files.FilesTestSupport;
import dev.sandboxkit.spi.ArchiveStore;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.testkit.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The archive tier on the real engine (issue 20), with a directory as the object store: two managers on one
 * session store, each with its own workspace root, stand in for two hosts. A session idles on A, is archived
 * and resumed on B byte for byte, and archived again from B; a corrupt archive and an unreachable store fail
 * with a retryable error and lose nothing. The S3 module runs the same hand-off against a real S3 server.
 */
@Tag("slow")
@DisplayName("Workdir archive tier on the real Docker engine")
class ArchiveOnDockerTest {
    private static final Duration TTL = Duration.ofMinutes(1);
    private static final Duration AGE = Duration.ofHours(1);
    private static final Duration TIMEOUT = Duration.ofMinutes(2);
    /** Types, modes, link targets and content hashes of the whole workdir, sorted. */
    static final String FINGERPRINT = "cd /workspace && find . -mindepth 1 | sort | while read -r p; do "
            + "if [ -L \"$p\" ]; then echo \"L $p -> $(readlink \"$p\")\"; "
            + "elif [ -d \"$p\" ]; then echo \"D $p $(stat -c %a \"$p\")\"; "
            + "elif [ -f \"$p\" ]; then echo \"F $p $(stat -c %a \"$p\") $(md5sum < \"$p\" | cut -c1-32)\"; "
            + "else echo \"? $p\"; fi; done";
    /** A tree with what a real workdir holds: nested files, modes, empty and read-only dirs, links of every kind. */
    static final String TREE = "cd /workspace && mkdir -p src/deep/er empty ro && echo hello > src/a.txt"
            + " && dd if=/dev/urandom of=src/deep/er/blob bs=1024 count=3000 2>/dev/null"
            + " && i=0; while [ $i -lt 300 ]; do echo \"line $i\" > src/f$i; i=$((i+1)); done"
            + " && echo '#!/bin/sh' > run.sh && chmod 755 run.sh && echo secret > private && chmod 600 private"
            + " && echo in-ro > ro/f && chmod 555 ro && ln -s src/a.txt rel-link && ln -s /usr/bin/python3 abs-link"
            + " && ln -s ../../.. up-link && touch 'odd name \u00e9'";

    @TempDir
    Path tmp;
    private final ManualClock clock = new ManualClock();
    private final SessionStore store = SessionStore.inMemory();
    private final List<SandboxEvent> events = new CopyOnWriteArrayList<>();
    private Path objects;
    private ArchiveStore archive;
    private Switchable switchable;
    private SandboxManager a;
    private SandboxManager b;
    private DockerClient docker;

    @BeforeEach
    void start() {
        docker = ManagerOnDockerTest.EngineCheck.requireEngine();
        objects = tmp.resolve("objects");
        archive = ArchiveStore.directory(objects);
        switchable = new Switchable(archive);
        a = manager("a", archive);
        b = manager("b", switchable);
    }

    private SandboxManager manager(String host, ArchiveStore tier) {
        return builder(host, tier).build();
    }

    private SandboxManager.Builder builder(String host, ArchiveStore tier) {
        return SandboxManager.builder().driver("docker").workspaceRoot(tmp.resolve("root-" + host)).store(store)
                .clock(clock).idleTimeout(TTL).reaperInterval(Duration.ofMillis(50))
                .reconcileInterval(Duration.ofMinutes(30)) // the periodic pass stays out of the way
                .archive(tier, AGE).listener(events::add);
    }

    @AfterEach
    void stop() throws IOException {
        try {
            for (SandboxManager m : List.of(a, b)) {
                m.close();
                var left = docker.listContainersCmd().withShowAll(true)
                        .withLabelFilter(Map.of(SandboxLabels.OWNER, m.instanceId())).exec();
                left.forEach(c -> docker.removeContainerCmd(c.getId()).withForce(true).exec());
                assertThat(left).as("containers left").isEmpty();
            }
        } finally {
            docker.close();
        }
    }

    private static SandboxSpec spec() {
        return FilesTestSupport.spec().build();
    }

    private static String run(Sandbox sandbox, String script) {
        ExecResult r = sandbox.exec(ExecRequest.shell(script).withTimeout(TIMEOUT));
        assertThat(r.exitCode()).as("`%s` failed: %s%s", script, r.stdout(), r.stderr()).isZero();
        return r.stdout();
    }

    /** Moves time past the TTL until the manager's reaper has suspended the session. */
    private void suspend(SandboxManager m, String sessionId) throws InterruptedException {
        suspend(clock, TTL, m, sessionId);
    }

    /** Moves {@code clock} past {@code ttl} until the manager's reaper has suspended the session. */
    static void suspend(ManualClock clock, Duration ttl, SandboxManager m, String sessionId)
            throws InterruptedException {
        clock.advance(ttl.plusSeconds(1));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (m.session(sessionId).orElseThrow().state() != SessionState.SUSPENDED) {
            assertThat(System.nanoTime() - until).as("reaped in time").isNegative();
            Thread.sleep(20);
        }
    }

    /** Writes the tree, suspends the session and archives it; returns the tree's fingerprint. */
    private String archivedTree(SandboxManager m, String sessionId) throws InterruptedException {
        Sandbox s = m.acquire(sessionId, spec());
        run(s, TREE);
        String fingerprint = run(s, FINGERPRINT);
        suspend(m, sessionId);
        clock.advance(AGE);
        assertThat(m.archiveIdle()).isEqualTo(1);
        return fingerprint;
    }

    private SessionRecord record(String sessionId) {
        return store.find(sessionId).orElseThrow();
    }

    private List<Path> archived() throws IOException {
        if (!Files.exists(objects)) {
            return List.of();
        }
        try (Stream<Path> s = Files.walk(objects)) {
            return s.filter(Files::isRegularFile).toList();
        }
    }

    @Test
    @DisplayName("a session archived on A resumes on B byte for byte, and is archived again from B")
    void handOffBetweenHosts() throws Exception {
        Sandbox onA = a.acquire("arch-move", spec());
        run(onA, TREE);
        String before = run(onA, FINGERPRINT);
        suspend(a, "arch-move");

        assertThat(a.archiveIdle()).as("not old enough yet").isZero();
        clock.advance(AGE);
        assertThat(b.archiveIdle()).as("B does not hold the workdir").isZero();
        assertThat(a.archiveIdle()).isEqualTo(1);
        assertThat(tmp.resolve("root-a").resolve("arch-move")).doesNotExist();
        assertThat(archived()).hasSize(1);
        SessionRecord rec = record("arch-move");
        assertThat(rec.state()).isEqualTo(SessionState.SUSPENDED);
        assertThat(rec.attributes()).containsEntry("archive.state", "archived")
                .containsKey("archive.sha256");
        assertThat(a.archiveIdle()).as("archived once").isZero();

        events.clear();
        Sandbox onB = b.acquire("arch-move", spec());
        assertThat(run(onB, FINGERPRINT)).isEqualTo(before);
        assertThat(record("arch-move").workspace()).startsWith(tmp.resolve("root-b").toString());
        assertThat(record("arch-move").attributes()).doesNotContainKey("archive.state");
        assertThat(archived()).as("the object goes once the record names the restored workdir").isEmpty();
        SandboxEvent.Resumed resumed = events.stream().filter(SandboxEvent.Resumed.class::isInstance)
                .map(SandboxEvent.Resumed.class::cast).findFirst().orElseThrow();
        assertThat(resumed.phases()).containsKey("archive-restore");
        // The sandbox user owns the restored tree and can write where the modes allow.
        run(onB, "cd /workspace && echo more >> src/a.txt && test \"$(stat -c %u src/a.txt)\" = \"$(id -u)\"");
        String changed = run(onB, FINGERPRINT);

        suspend(b, "arch-move");
        clock.advance(AGE);
        assertThat(b.archiveIdle()).isEqualTo(1);
        assertThat(tmp.resolve("root-b").resolve("arch-move")).doesNotExist();
        Sandbox back = a.acquire("arch-move", spec());
        assertThat(run(back, FINGERPRINT)).isEqualTo(changed);
        a.destroy("arch-move");
    }

    @Test
    @DisplayName("packing deflates on the caller-supplied I/O executor while the archiving thread walks the workdir")
    void packsOnTheIoExecutor() throws Exception {
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newCachedThreadPool();
        java.util.concurrent.atomic.AtomicInteger tasks = new java.util.concurrent.atomic.AtomicInteger();
        try (SandboxManager c = builder("c", archive).ioExecutor(r -> pool.execute(() -> {
                    tasks.incrementAndGet();
                    r.run();
                })).build()) {
            String before = archivedTree(c, "arch-io");
            assertThat(tasks.get()).as("deflating tasks run on the supplied executor").isEqualTo(1);
            assertThat(run(c.acquire("arch-io", spec()), FINGERPRINT)).isEqualTo(before);
            c.destroy("arch-io");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @DisplayName("two managers resuming one archived session at once: one restores it, the other is refused (retryable while it restores)")
    void concurrentResumes() throws Exception {
        run(a.acquire("arch-race", spec()), "echo once > /workspace/f");
        suspend(a, "arch-race");
        clock.advance(AGE);
        assertThat(a.archiveIdle()).isEqualTo(1);
        events.clear();

        java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(2);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            List<java.util.concurrent.Future<Sandbox>> results = new java.util.ArrayList<>();
            for (SandboxManager m : List.of(a, b)) {
                results.add(pool.submit(() -> {
                    start.await();
                    return m.acquire("arch-race", spec());
                }));
            }
            List<Sandbox> won = new java.util.ArrayList<>();
            for (var r : results) {
                try {
                    won.add(r.get(2, TimeUnit.MINUTES));
                } catch (java.util.concurrent.ExecutionException e) {
                    // While the winner restores: a retryable refusal. Once the winner has restored the workdir
                    // onto its host (a loaded machine can delay the loser that long): "on another host".
                    if (e.getCause() instanceof dev.sandboxkit.SandboxConfigurationException c) {
                        assertThat(c).hasMessageContaining("this session's workdir is on another host");
                    } else {
                        assertThat(e.getCause()).isInstanceOf(dev.sandboxkit.SandboxAcquireException.class);
                        assertThat(((dev.sandboxkit.SandboxException) e.getCause()).isRetryable()).isTrue();
                    }
                }
            }
            assertThat(won).hasSize(1);
            assertThat(run(won.get(0), "cat /workspace/f")).isEqualTo("once\n");
            assertThat(events.stream().filter(SandboxEvent.Resumed.class::isInstance)
                    .map(SandboxEvent.Resumed.class::cast)
                    .filter(e -> e.phases().containsKey("archive-restore"))).hasSize(1);
            assertThat(archived()).isEmpty();
            won.get(0).destroy(); // from the winner: the workdir is on its host now
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @DisplayName("the files API, forks and snapshots of an archived session bring its workdir back first")
    void filesOfAnArchivedSession() throws Exception {
        run(a.acquire("arch-files", spec()), "echo kept > /workspace/note");
        suspend(a, "arch-files");
        clock.advance(AGE);
        assertThat(a.archiveIdle()).isEqualTo(1);

        assertThat(new String(b.files("arch-files").readBytes("note"), StandardCharsets.UTF_8)).isEqualTo("kept\n");
        assertThat(record("arch-files").attributes()).doesNotContainKey("archive.state");
        assertThat(record("arch-files").state()).as("no container was started").isEqualTo(SessionState.SUSPENDED);

        // Archived again, then forked and snapshotted: both bring the workdir back first.
        clock.advance(AGE);
        assertThat(b.archiveIdle()).isEqualTo(1);
        Sandbox fork = b.fork("arch-files", "arch-files-fork");
        assertThat(run(fork, "cat /workspace/note")).isEqualTo("kept\n");
        fork.destroy();
        clock.advance(AGE);
        assertThat(b.archiveIdle()).isEqualTo(1);
        assertThat(b.snapshot("arch-files")).isNotNull();
        assertThat(record("arch-files").attributes()).doesNotContainKey("archive.state");
        b.destroy("arch-files");
    }

    @Test
    @DisplayName("destroying an archived session deletes its archive")
    void destroyDeletesTheArchive() throws Exception {
        run(a.acquire("arch-destroy", spec()), "echo x > /workspace/x");
        suspend(a, "arch-destroy");
        clock.advance(AGE);
        assertThat(a.archiveIdle()).isEqualTo(1);
        assertThat(archived()).hasSize(1);

        b.destroy("arch-destroy");
        assertThat(record("arch-destroy").state()).isEqualTo(SessionState.DESTROYED);
        assertThat(archived()).isEmpty();
    }

    @Test
    @DisplayName("a corrupt archive is refused with a retryable error and stays; the session resumes once it is whole")
    void corruptArchive() throws Exception {
        String before = archivedTree(a, "arch-corrupt");
        Path object = archived().get(0);
        byte[] good = Files.readAllBytes(object);
        byte[] bad = good.clone();
        bad[bad.length / 2] ^= 0x5a;
        Files.write(object, bad);

        for (int i = 0; i < 2; i++) {
            assertThatThrownBy(() -> b.acquire("arch-corrupt", spec()))
                    .isInstanceOf(SandboxUnavailableException.class)
                    .hasMessageContaining("SHA-256")
                    .satisfies(e -> assertThat(((SandboxUnavailableException) e).isRetryable()).isTrue());
            assertThat(record("arch-corrupt").attributes()).containsEntry("archive.state", "archived");
            assertThat(tmp.resolve("root-b").resolve("arch-corrupt")).as("nothing half unpacked").doesNotExist();
        }

        Files.write(object, good);
        assertThat(run(b.acquire("arch-corrupt", spec()), FINGERPRINT)).isEqualTo(before);
        b.destroy("arch-corrupt");
    }

    @Test
    @DisplayName("an unreachable store fails the resume with a retryable error; the archive and record stay")
    void storeDownDuringRestore() throws Exception {
        run(a.acquire("arch-down", spec()), "echo survives > /workspace/f");
        suspend(a, "arch-down");
        clock.advance(AGE);
        assertThat(a.archiveIdle()).isEqualTo(1);

        switchable.down = true;
        for (int i = 0; i < 2; i++) {
            assertThatThrownBy(() -> b.acquire("arch-down", spec()))
                    .isInstanceOf(SandboxUnavailableException.class)
                    .satisfies(e -> assertThat(((SandboxUnavailableException) e).isRetryable()).isTrue());
            assertThat(record("arch-down").attributes()).containsEntry("archive.state", "archived");
            assertThat(record("arch-down").owner()).as("released for any manager to retry").isNull();
            assertThat(archived()).hasSize(1);
        }
        switchable.down = false;
        Sandbox s = b.acquire("arch-down", spec());
        assertThat(run(s, "cat /workspace/f")).isEqualTo("survives\n");
        b.destroy("arch-down");
    }

    @Test
    @DisplayName("the periodic pass archives on its own once a session is old enough")
    void periodicPass() throws Exception {
        try (SandboxManager c = SandboxManager.builder().driver("docker").workspaceRoot(tmp.resolve("root-c"))
                .store(store).clock(clock).idleTimeout(TTL).reaperInterval(Duration.ofMillis(50))
                .reconcileInterval(Duration.ofMillis(100)).archive(archive, AGE).build()) {
            run(c.acquire("arch-periodic", spec()), "echo p > /workspace/p");
            suspend(c, "arch-periodic");
            clock.advance(AGE);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!"archived".equals(record("arch-periodic").attributes().get("archive.state"))) {
                assertThat(System.nanoTime() - until).as("archived by the periodic pass").isNegative();
                Thread.sleep(50);
            }
            // The local copy goes after the record says archived (nothing is recorded before it is done).
            Path local = tmp.resolve("root-c").resolve("arch-periodic");
            while (Files.exists(local, LinkOption.NOFOLLOW_LINKS)) {
                assertThat(System.nanoTime() - until).as("the local copy deleted after archiving").isNegative();
                Thread.sleep(50);
            }
            c.destroy("arch-periodic");
        }
    }

    @Test
    @DisplayName("a record moved on during the upload: the archive is not recorded, its object is deleted, the local copy stays")
    void recordChangedDuringUpload() throws Exception {
        ArchiveStore racing = new Switchable(archive) {
            @Override
            public void put(String key, Path file, String sha256) {
                // Another manager found our lease lapsed and took the session back while the bytes were in flight.
                SessionRecord r = record("arch-race");
                assertThat(r.attributes()).containsEntry("archive.state", "uploading");
                Map<String, String> plain = new java.util.HashMap<>(r.attributes());
                plain.keySet().removeIf(k -> k.startsWith("archive."));
                assertThat(store.update(r.withOwner(null, null).withAttributes(plain))).isPresent();
                super.put(key, file, sha256);
            }
        };
        try (SandboxManager c = manager("c", racing)) {
            run(c.acquire("arch-race", spec()), "echo kept > /workspace/f");
            suspend(c, "arch-race");
            clock.advance(AGE);
            assertThat(c.archiveIdle()).isZero();
            assertThat(archived()).as("the unrecorded upload's object").isEmpty();
            assertThat(record("arch-race").attributes()).doesNotContainKey("archive.state");
            assertThat(tmp.resolve("root-c").resolve("arch-race").resolve("f")).hasContent("kept");
            assertThat(run(c.acquire("arch-race", spec()), "cat /workspace/f")).isEqualTo("kept\n");
            c.destroy("arch-race");
        }
    }

    /** The store as seen through a network that can fail: down, every call is a retryable error. */
    private static class Switchable implements ArchiveStore {
        private final ArchiveStore delegate;
        volatile boolean down;

        Switchable(ArchiveStore delegate) {
            this.delegate = delegate;
        }

        private void check() {
            if (down) {
                throw new SandboxUnavailableException("archive store unreachable (test)", null);
            }
        }

        @Override
        public void put(String key, Path file, String sha256) {
            check();
            delegate.put(key, file, sha256);
        }

        @Override
        public void get(String key, Path file) {
            check();
            delegate.get(key, file);
        }

        @Override
        public void delete(String key) {
            check();
            delegate.delete(key);
        }

        @Override
        public String describe() {
            return delegate.describe();
        }
    }
}
