package dev.sandboxkit.docker;

import com.github.dockerjava.api.DockerClient;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ManagerStats;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SnapshotId;
import dev.sandboxkit.SnapshotInfo;
import dev.sandboxkit.docker.internal.files.FilesTestSupport;
import dev.sandboxkit.spi.SessionStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Workdir snapshots, restores and forks through the public API on the real engine (issue 20, host-directory
 * backend): what a snapshot keeps (content, modes, links as links) and leaves out (FIFOs, setuid), that nothing a
 * sandbox planted is followed, a fork while the source keeps writing, and the snapshots' life with their session.
 */
@Tag("slow")
@DisplayName("Workdir snapshots on the real Docker engine")
class SnapshotsOnDockerTest {
    private static final Duration TIMEOUT = Duration.ofMinutes(2);
    /** A listing of the workdir that shows types, modes, link targets and content hashes, sorted. */
    private static final String FINGERPRINT = "cd /workspace && find . -mindepth 1 | sort | while read -r p; do "
            + "if [ -L \"$p\" ]; then echo \"L $p -> $(readlink \"$p\")\"; "
            + "elif [ -d \"$p\" ]; then echo \"D $p $(stat -c %a \"$p\")\"; "
            + "elif [ -f \"$p\" ]; then echo \"F $p $(stat -c %a \"$p\") $(md5sum < \"$p\" | cut -c1-32)\"; "
            + "else echo \"? $p\"; fi; done";

    @TempDir
    Path tmp;
    private Path root;
    private SandboxManager manager;
    private DockerClient docker;

    @BeforeEach
    void start() {
        docker = ManagerOnDockerTest.EngineCheck.requireEngine();
        root = tmp.resolve("ws");
        manager = SandboxManager.builder().driver("docker").workspaceRoot(root).build();
    }

    @AfterEach
    void stop() {
        DockerTestSupport.closeAndCheckNothingLeft(manager, docker);
    }

    private static SandboxSpec spec() {
        return FilesTestSupport.spec().build();
    }

    private static String run(Sandbox sandbox, String script) {
        ExecResult r = sandbox.exec(ExecRequest.shell(script).withTimeout(TIMEOUT));
        assertThat(r.exitCode()).as("`%s` failed: %s%s", script, r.stdout(), r.stderr()).isZero();
        return r.stdout();
    }

    @Test
    @DisplayName("a restore brings back content, modes and links exactly; FIFOs and setuid bits are left out")
    void restoreBringsBackTheTree() {
        Sandbox s = manager.acquire("snap-roundtrip", spec());
        run(s, "cd /workspace && mkdir -p src/deep/er ro && echo hello > src/a.txt && printf 'x%.0s' $(seq 1 5000)"
                + " > src/deep/er/big && echo '#!/bin/sh' > run.sh && chmod 755 run.sh && echo secret > private"
                + " && chmod 600 private && echo in-ro > ro/f && chmod 555 ro && ln -s src/a.txt rel-link"
                + " && ln -s /etc/passwd abs-link && ln -s ../../.. up-link && mkfifo pipe && echo s > suid"
                + " && chmod 4755 suid && ln src/a.txt hard");
        String before = run(s, FINGERPRINT);
        String sandboxBefore = s.info().sandboxId();

        SnapshotId id = manager.snapshot("snap-roundtrip");
        run(s, "cd /workspace && chmod 755 ro && rm -rf src ro run.sh && echo junk > junk && rm rel-link");

        manager.restore("snap-roundtrip", id);

        // The restore removed the container; the next exec resumes on the restored workdir.
        String after = run(s, FINGERPRINT);
        assertThat(s.info().sandboxId()).isNotEqualTo(sandboxBefore);
        String expected = before.lines().filter(l -> !l.startsWith("? ./pipe"))
                .map(l -> l.startsWith("F ./suid 4755") ? l.replace("4755", "755") : l)
                .reduce("", (a, l) -> a + l + "\n");
        assertThat(after).isEqualTo(expected);
        assertThat(after).contains("L ./abs-link -> /etc/passwd", "L ./up-link -> ../../..", "D ./ro 555",
                "F ./private 600", "F ./hard ");
        assertThat(after).doesNotContain("pipe", "junk");
        // Owned by the sandbox user: it can write where the modes allow.
        run(s, "cd /workspace && echo more >> src/a.txt && test \"$(stat -c %u src/a.txt)\" = \"$(id -u)\"");
    }

    @Test
    @DisplayName("links into the host are copied as links: the snapshot never reads what they point at")
    void plantedLinksAreNeverFollowed() throws IOException {
        Sandbox s = manager.acquire("snap-hostile", spec());
        run(s, "cd /workspace && ln -s / root && ln -s /etc etc && ln -s /proc/self/root self && echo small > f");

        SnapshotId id = manager.snapshot("snap-hostile");

        SnapshotInfo info = manager.snapshots("snap-hostile").get(0);
        assertThat(info.id()).isEqualTo(id);
        assertThat(info.sizeBytes()).isEqualTo(6); // "small\n" only
        Path tree = root.resolve(".snapshots").resolve(id.value()).resolve("tree");
        for (String link : List.of("root", "etc", "self")) {
            assertThat(Files.isSymbolicLink(tree.resolve(link))).as(link).isTrue();
        }
        try (Stream<Path> all = Files.walk(tree)) { // walk does not follow links
            assertThat(all.count()).isEqualTo(5);
        }
        assertThat(Files.readString(tree.resolve("f"))).isEqualTo("small\n");
        assertThat(Files.getPosixFilePermissions(root.resolve(".snapshots"), LinkOption.NOFOLLOW_LINKS))
                .hasSize(3); // rwx------
    }

    @Test
    @DisplayName("a fork while the source keeps writing gets complete files and its own workdir")
    void forkWhileTheSourceWrites() {
        Sandbox source = manager.acquire("fork-source", spec());
        run(source, "cd /workspace && echo before > before.txt && mkdir out && (setsid sh -c 'i=0; while [ $i -lt 3000 ];"
                + " do echo $i > out/.t$i && mv out/.t$i out/f$i; i=$((i+1)); done; echo done > finished'"
                + " </dev/null >/dev/null 2>&1 &)");

        Sandbox fork = manager.fork("fork-source", "fork-copy");

        assertThat(run(fork, "cat /workspace/before.txt")).isEqualTo("before\n");
        // Every complete file in the copy holds its own number: renamed files are never torn.
        String bad = run(fork, "cd /workspace/out && for f in f*; do [ -e \"$f\" ] || continue;"
                + " [ \"$(cat \"$f\")\" = \"${f#f}\" ] || echo \"$f\"; done");
        assertThat(bad).isEmpty();
        // Separate workdirs: the fork's writes do not reach the source.
        run(fork, "echo mine > /workspace/fork-only");
        assertThat(run(source, "ls /workspace")).doesNotContain("fork-only");
        assertThat(fork.info().workspace()).isNotEqualTo(source.info().workspace());
        // The writer in the source went on to the end, and its last file is not in the fork unless it finished.
        run(source, "i=0; while [ ! -f /workspace/finished ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done;"
                + " test -f /workspace/finished && test -f /workspace/out/f2999");
        assertThatThrownBy(() -> manager.fork("fork-source", "fork-copy"))
                .isInstanceOf(SandboxAcquireException.class).hasMessageContaining("exists already");
        assertThatThrownBy(() -> manager.fork("no-such-session", "fork-other"))
                .isInstanceOf(SandboxNotFoundException.class);
    }

    @Test
    @DisplayName("snapshots are listed with sizes, deleted with their session unless kept, and counted in the stats")
    void snapshotsLiveAndDieWithTheirSession() {
        Sandbox s = manager.acquire("snap-life", spec());
        run(s, "printf '%01000d' 0 > /workspace/k");
        SnapshotId first = manager.snapshot("snap-life");
        run(s, "printf '%02000d' 0 > /workspace/k");
        SnapshotId second = manager.snapshot("snap-life");

        List<SnapshotInfo> listed = manager.snapshots("snap-life");
        assertThat(listed).extracting(SnapshotInfo::id).containsExactly(first, second);
        assertThat(listed).extracting(SnapshotInfo::sizeBytes).containsExactly(1000L, 2000L);
        assertThat(listed).extracting(SnapshotInfo::kept).containsExactly(false, false);
        ManagerStats stats = manager.stats();
        assertThat(stats.snapshots()).isEqualTo(2);
        assertThat(stats.snapshotBytes()).isEqualTo(3000);

        manager.keepSnapshot(first, true);
        manager.destroy("snap-life");

        assertThat(manager.snapshots("snap-life")).extracting(SnapshotInfo::id).containsExactly(first);
        assertThat(manager.snapshots("snap-life").get(0).kept()).isTrue();
        assertThat(root.resolve(".snapshots").resolve(second.value())).doesNotExist();

        // A kept snapshot seeds a new session through restore, even after its own session was destroyed.
        Sandbox other = manager.acquire("snap-heir", spec());
        manager.restore("snap-heir", first);
        assertThat(run(other, "wc -c < /workspace/k").trim()).isEqualTo("1000");

        manager.deleteSnapshot(first);
        manager.deleteSnapshot(first); // idempotent
        assertThat(manager.snapshots("snap-life")).isEmpty();
        assertThat(manager.stats().snapshots()).isZero();
        assertThatThrownBy(() -> manager.restore("snap-heir", first)).isInstanceOf(SandboxNotFoundException.class);
        assertThatThrownBy(() -> manager.keepSnapshot(first, true)).isInstanceOf(SandboxNotFoundException.class);
        assertThatThrownBy(() -> manager.snapshot("snap-life")).isInstanceOf(SandboxNotFoundException.class);
    }

    @Test
    @DisplayName("a suspended session is snapshotted and restored without starting a container")
    void suspendedSessions() {
        manager.close();
        SessionStore store = SessionStore.inMemory();
        manager = SandboxManager.builder().driver("docker").workspaceRoot(root).store(store).build();
        Sandbox s = manager.acquire("snap-suspended", spec());
        run(s, "echo one > /workspace/v");
        manager.close(); // suspends the session: container removed, workdir kept
        manager = SandboxManager.builder().driver("docker").workspaceRoot(root).store(store).build();
        assertThat(manager.session("snap-suspended").orElseThrow().sandboxId()).isNull();

        SnapshotId id = manager.snapshot("snap-suspended");
        manager.files("snap-suspended").write("v", "two\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        manager.restore("snap-suspended", id);

        assertThat(manager.session("snap-suspended").orElseThrow().sandboxId()).isNull();
        assertThat(new String(manager.files("snap-suspended").readBytes("v"), java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("one\n");
    }

    @Test
    @DisplayName("a restore sets the old tree aside and deletes it in the background: an old entry that cannot be"
            + " deleted yet does not fail it, and goes once it can")
    void restoreDeletesTheOldTreeInTheBackground() throws Exception {
        Sandbox s = manager.acquire("snap-aside", spec());
        run(s, "echo kept > /workspace/kept.txt");
        SnapshotId id = manager.snapshot("snap-aside");
        run(s, "cd /workspace && mkdir -p old/deep && i=0; while [ $i -lt 300 ]; do echo $i > old/deep/f$i; "
                + "i=$((i+1)); done && echo new > kept.txt");
        Path stuck = Path.of(s.info().workspace(), "old/deep/f7");
        chattr("+i", stuck);
        Path trash = root.resolve(".trash");
        try {
            // Deleted inline, the old tree failed the restore ("cannot empty workdir ... EPERM").
            manager.restore("snap-aside", id);
            assertThat(run(s, "cd /workspace && find . -mindepth 1 | sort && cat kept.txt"))
                    .isEqualTo("./kept.txt\nkept\n");
            try (Stream<Path> walk = Files.walk(trash)) {
                assertThat(walk.filter(p -> p.getFileName().toString().equals("f7")).count())
                        .as("the undeletable entry waits in the trash").isEqualTo(1);
            }
        } finally {
            try (Stream<Path> walk = Files.walk(root)) { // wherever it is now: the workdir or the trash
                for (Path p : walk.filter(p -> p.getFileName().toString().equals("f7")).toList()) {
                    chattr("-i", p);
                }
            }
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            manager.reconcile(); // the orphan sweep also sweeps the trash
            try (Stream<Path> bins = Files.list(trash)) {
                if (bins.findAny().isEmpty()) {
                    break;
                }
            }
            assertThat(System.nanoTime() - deadline).as("the trash is emptied").isNegative();
            Thread.sleep(100);
        }
    }

    @Test
    @DisplayName("set-aside content a crashed driver left is deleted by the next driver on the root once an hour"
            + " old; a younger bin of another driver is left to it")
    void trashLeftByACrashIsSwept() throws Exception {
        manager.close();
        Path trash = Files.createDirectories(root.resolve(".trash"));
        Path old = Files.createDirectories(trash.resolve("left-by-a-crash/deep/er"));
        Files.writeString(old.resolve("f"), "x");
        Files.setLastModifiedTime(trash.resolve("left-by-a-crash"),
                java.nio.file.attribute.FileTime.from(java.time.Instant.now().minus(Duration.ofHours(2))));
        Path young = Files.createDirectories(trash.resolve("another-drivers"));
        Files.writeString(young.resolve("f"), "y");

        manager = SandboxManager.builder().driver("docker").workspaceRoot(root).build();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (Files.exists(trash.resolve("left-by-a-crash"))) {
            assertThat(System.nanoTime() - deadline).as("the old bin is deleted").isNegative();
            Thread.sleep(50);
        }
        manager.reconcile();
        assertThat(young.resolve("f")).hasContent("y");
    }

    private static void chattr(String flag, Path file) throws Exception {
        Process p = new ProcessBuilder("chattr", flag, file.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("chattr %s (needs root and a file system with attributes): %s", flag, out)
                .isZero();
    }
}
