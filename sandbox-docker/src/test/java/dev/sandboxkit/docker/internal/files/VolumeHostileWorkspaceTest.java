package dev.sandboxkit.docker.internal.files;

import com.github.dockerjava.api.DockerClient;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.FileInfo;
import dev.sandboxkit.FileType;
import dev.sandboxkit.ProcessStatus;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxFileException.Reason;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxProcess;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.docker.ManagerOnDockerTest;
import dev.sandboxkit.docker.internal.files.FilesTestSupport.Entry;
import dev.sandboxkit.docker.internal.files.FilesTestSupport.Read;
import dev.sandboxkit.testsupport.Await;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.sandboxkit.docker.internal.files.FilesTestSupport.plant;
import static dev.sandboxkit.docker.internal.files.FilesTestSupport.snapshot;
import static dev.sandboxkit.docker.internal.files.FilesTestSupport.tarStream;
import static dev.sandboxkit.docker.internal.files.FilesTestSupport.untar;
import static dev.sandboxkit.docker.internal.files.FilesTestSupport.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * {@link HostileWorkspaceTest}'s attacks against a session whose workdir is a named volume
 * ({@code docker.workdirs=volume}, {@link VolumeFiles} through the engine's archive API). There is no host
 * directory to inspect, so results are checked from inside the sandbox; after every test the host's
 * {@code /etc/passwd}, a canary directory (whose host path the planted links name) and the whole temporary tree
 * are checked unchanged. Links also aim at paths that exist in the helper container's image ({@code /},
 * {@code /bin}), which the engine would resolve there if a component were not checked. The swap races include
 * FIFOs, which only the freeze around each files call keeps from wedging the engine's open (and the destroy, which
 * is bounded here), and the driver's execs must never collide with such a freeze.
 */
@Tag("volume")
@DisplayName("Files API on a named-volume workdir against a hostile container (real Docker)")
class VolumeHostileWorkspaceTest {
    private static final Duration NEVER_BLOCKS = Duration.ofSeconds(60);
    private static DockerClient docker;
    private static SandboxManager manager;
    @TempDir
    static Path tmp;
    private static Path canary;
    private static byte[] passwd;

    private String sessionId;
    private Sandbox sandbox;
    private SandboxFiles files;
    private Map<String, String> outsideBefore;

    @BeforeAll
    static void start() throws IOException {
        docker = ManagerOnDockerTest.EngineCheck.requireEngine();
        canary = tmp.resolve("canary");
        Files.createDirectories(canary.resolve("sub"));
        Files.writeString(canary.resolve("secret.txt"), "CANARY-SECRET\n");
        passwd = Files.readAllBytes(Path.of("/etc/passwd"));
        manager = SandboxManager.builder().driver("docker").driverProperty("docker.workdirs", "volume")
                .workspaceRoot(tmp.resolve("ws")).build();
    }

    @AfterAll
    static void stop() throws Exception {
        if (manager != null) {
            manager.close();
        }
        if (docker != null) {
            docker.close();
        }
    }

    SandboxSpec.Builder spec() {
        return FilesTestSupport.spec();
    }

    @BeforeEach
    void acquire() {
        sessionId = "vhostile-" + UUID.randomUUID().toString().substring(0, 8);
        sandbox = manager.acquire(sessionId, spec().build());
        assertThat(sandbox.info().workspace()).startsWith("volume:");
        files = sandbox.files();
        outsideBefore = snapshot(tmp);
    }

    @AfterEach
    void nothingOutsideChanged() throws IOException {
        try {
            assertThat(Files.readAllBytes(Path.of("/etc/passwd"))).as("host /etc/passwd").isEqualTo(passwd);
            assertThat(snapshot(tmp)).as("everything in the temporary tree, canary included").isEqualTo(outsideBefore);
            assertThat(Files.readString(canary.resolve("secret.txt"))).isEqualTo("CANARY-SECRET\n");
        } finally {
            // A wedged archive call holds the helper: its removal, and so the destroy, would never end.
            assertTimeoutPreemptively(NEVER_BLOCKS, () -> manager.destroy(sessionId), "destroy");
        }
    }

    private static void refused(Reason reason, ThrowingCallable call) {
        HostileRequests.refused(reason, call);
    }

    /** What the sandbox sees, for checks a host directory would have allowed. */
    private String inside(String script) {
        return plant(sandbox, script).strip();
    }

    // ------------------------------------------------------------------ symbolic link to a file

    @Test
    @DisplayName("symlink -> /etc/passwd: read and stream refuse it, stat reports the link without following")
    void fileSymlinkRead() {
        plant(sandbox, "ln -s /etc/passwd pw");
        refused(Reason.SYMLINK, () -> files.readBytes("pw"));
        refused(Reason.SYMLINK, () -> files.newInputStream("pw"));
        FileInfo info = files.stat("pw");
        assertThat(info.type()).isEqualTo(FileType.SYMLINK);
        assertThat(info.linkTarget()).isEqualTo("/etc/passwd");
        assertThat(info.size()).isEqualTo("/etc/passwd".length());
    }

    @Test
    @DisplayName("symlink -> /etc/passwd: write replaces the link itself, owned by the sandbox user")
    void fileSymlinkWrite() {
        plant(sandbox, "ln -s /etc/passwd pw");
        files.write("pw", utf8("mine\n"));
        assertThat(inside("test -L pw && echo link || echo file")).isEqualTo("file");
        assertThat(inside("cat pw")).isEqualTo("mine");
        assertThat(inside("stat -c %u:%a pw")).isEqualTo("10001:644");
    }

    @Test
    @DisplayName("symlink: delete removes the link, never the target")
    void fileSymlinkDelete() {
        plant(sandbox, "echo keep > target && ln -s target pw && ln -s " + canary.resolve("secret.txt") + " c");
        files.delete("pw");
        assertThat(files.deleteRecursively("c")).isTrue();
        assertThat(files.exists("pw")).isFalse();
        assertThat(files.exists("c")).isFalse();
        assertThat(inside("cat target")).isEqualTo("keep");
    }

    @Test
    @DisplayName("symlink: a tree download leaves it out; downloading it directly is refused")
    void fileSymlinkDownload() {
        plant(sandbox, "echo ok > real.txt && ln -s /etc/passwd pw && ln -s " + canary.resolve("secret.txt") + " c");
        Map<String, Read> tar = untar(files.downloadTar(""));
        assertThat(tar.keySet()).containsExactly("real.txt");
        assertThat(tar.get("real.txt").text()).isEqualTo("ok\n");
        refused(Reason.SYMLINK, () -> files.downloadTar("pw"));
    }

    // ------------------------------------------------------------------ directory symlinks at each position

    @Test
    @DisplayName("directory symlink -> / as the FIRST component: every call refuses to go through it")
    void dirSymlinkFirst() {
        plant(sandbox, "ln -s / root && ln -s /bin bin");
        refused(Reason.SYMLINK, () -> files.readBytes("root/etc/passwd"));
        refused(Reason.SYMLINK, () -> files.readBytes("bin/busybox"));
        refused(Reason.SYMLINK, () -> files.stat("bin/busybox"));
        refused(Reason.SYMLINK, () -> files.stat("root/etc/passwd"));
        refused(Reason.SYMLINK, () -> files.list("root"));
        refused(Reason.SYMLINK, () -> files.list("root/etc"));
        refused(Reason.SYMLINK, () -> files.write("root/tmp/evil", utf8("x")));
        refused(Reason.SYMLINK, () -> files.write("bin/evil", utf8("x")));
        refused(Reason.SYMLINK, () -> files.mkdirs("root/tmp/evil"));
        refused(Reason.SYMLINK, () -> files.delete("root/etc/passwd"));
        refused(Reason.SYMLINK, () -> files.deleteRecursively("root/etc"));
        refused(Reason.SYMLINK, () -> files.downloadTar("root"));
        refused(Reason.SYMLINK, () -> files.downloadTar("bin/busybox"));
        refused(Reason.SYMLINK, () -> files.uploadTar("root/tmp", tarStream(Entry.file("evil", "x"))));
        refused(Reason.SYMLINK, () -> files.uploadTar("", tarStream(Entry.file("bin/evil", "x"))));
        assertThat(files.stat("root").type()).isEqualTo(FileType.SYMLINK);
        assertThat(Path.of("/tmp/evil")).doesNotExist();
    }

    @Test
    @DisplayName("directory symlink as a MIDDLE component: refused, nothing written there")
    void dirSymlinkMiddle() {
        plant(sandbox, "mkdir -p a real/sub && echo s > real/secret.txt && ln -s /workspace/real a/m && ln -s / a/r");
        for (String m : new String[] {"a/m", "a/r"}) {
            refused(Reason.SYMLINK, () -> files.readBytes(m + "/secret.txt"));
            refused(Reason.SYMLINK, () -> files.newInputStream(m + "/secret.txt"));
            refused(Reason.SYMLINK, () -> files.stat(m + "/secret.txt"));
            refused(Reason.SYMLINK, () -> files.write(m + "/new.txt", utf8("x")));
            refused(Reason.SYMLINK, () -> files.write(m + "/secret.txt", utf8("overwritten")));
            refused(Reason.SYMLINK, () -> files.mkdirs(m + "/sub/deeper"));
            refused(Reason.SYMLINK, () -> files.delete(m + "/secret.txt"));
            refused(Reason.SYMLINK, () -> files.deleteRecursively(m + "/sub"));
            refused(Reason.SYMLINK, () -> files.uploadTar(m, tarStream(Entry.file("new.txt", "x"))));
            refused(Reason.SYMLINK, () -> files.downloadTar(m + "/sub"));
        }
        assertThat(inside("cat real/secret.txt && ls real")).isEqualTo("s\nsecret.txt\nsub");
    }

    @Test
    @DisplayName("directory symlink as the LAST component: not listed, written, tarred; delete drops the link only")
    void dirSymlinkLast() {
        plant(sandbox, "mkdir -p a/b real && echo s > real/f && ln -s /workspace/real a/b/last");
        refused(Reason.SYMLINK, () -> files.list("a/b/last"));
        refused(Reason.SYMLINK, () -> files.mkdirs("a/b/last"));
        refused(Reason.SYMLINK, () -> files.downloadTar("a/b/last"));
        refused(Reason.SYMLINK, () -> files.uploadTar("a/b/last", tarStream(Entry.file("new.txt", "x"))));
        refused(Reason.IS_A_DIRECTORY, () -> files.write("a/b", utf8("x")));
        assertThat(files.stat("a/b/last").type()).isEqualTo(FileType.SYMLINK);
        assertThat(files.list("a/b")).extracting(FileInfo::type).containsExactly(FileType.SYMLINK);
        assertThat(files.deleteRecursively("a/b/last")).isTrue();
        assertThat(files.list("a/b")).isEmpty();
        assertThat(inside("cat real/f")).isEqualTo("s");
    }

    // ------------------------------------------------------------------ .. and absolute paths

    @Test
    @DisplayName("'..' and absolute paths outside /workspace are refused before anything is touched")
    void dotDotAndAbsolute() {
        HostileRequests.badPaths(files);
    }

    // ------------------------------------------------------------------ hard links

    @Test
    @DisplayName("hard link inside the volume cannot carry a write; downloads give it as a plain file")
    void hardlinks() {
        plant(sandbox, "echo original > a && ln a b");
        files.write("b", utf8("replaced\n"));
        assertThat(files.readBytes("a")).isEqualTo(utf8("original\n"));
        assertThat(files.readBytes("b")).isEqualTo(utf8("replaced\n"));
        assertThat(inside("stat -c %h a")).isEqualTo("1");
        plant(sandbox, "ln a c");
        Map<String, Read> tar = untar(files.downloadTar(""));
        assertThat(tar.get("a").text()).isEqualTo("original\n");
        assertThat(tar.get("c").text()).isEqualTo("original\n");
        assertThat(tar.get("c").type()).isEqualTo(TarFormat.REGULAR);
        assertThat(files.stat("c").type()).isEqualTo(FileType.FILE);
    }

    // ------------------------------------------------------------------ FIFOs and devices

    @Test
    @DisplayName("FIFO: read, stream, stat, list and download never block and never open it; write replaces it")
    void fifo() {
        plant(sandbox, "mkfifo f && mkdir d && mkfifo d/inner && echo ok > d/ok.txt");
        assertTimeoutPreemptively(NEVER_BLOCKS, () -> {
            refused(Reason.NOT_A_REGULAR_FILE, () -> files.readBytes("f"));
            refused(Reason.NOT_A_REGULAR_FILE, () -> files.newInputStream("f"));
            refused(Reason.NOT_A_REGULAR_FILE, () -> files.downloadTar("f"));
            assertThat(files.stat("f").type()).isEqualTo(FileType.FIFO);
            assertThat(files.list("d")).extracting(FileInfo::name).containsExactly("inner", "ok.txt");
            assertThat(untar(files.downloadTar("d")).keySet()).containsExactly("ok.txt");
            assertThat(untar(files.downloadTar("")).keySet()).containsExactly("d/", "d/ok.txt");
            files.write("f", utf8("now a file\n"));
            assertThat(files.stat("f").type()).isEqualTo(FileType.FILE);
            files.delete("d/inner");
            assertThat(files.exists("d/inner")).isFalse();
        });
    }

    @Test
    @DisplayName("device node planted by a root container granted CAP_MKNOD: reported, never opened, left out of downloads")
    void deviceNodeWithCapability() {
        String id = sessionId + "-root";
        Sandbox rootBox = manager.acquire(id, spec().user("0:0").addCapability("MKNOD").build());
        try {
            plant(rootBox, "mknod null c 1 3 && mknod disk b 8 0 && echo ok > ok.txt");
            SandboxFiles rf = rootBox.files();
            assertTimeoutPreemptively(NEVER_BLOCKS, () -> {
                assertThat(rf.stat("null").type()).isEqualTo(FileType.DEVICE);
                assertThat(rf.stat("disk").type()).isEqualTo(FileType.DEVICE);
                refused(Reason.NOT_A_REGULAR_FILE, () -> rf.readBytes("disk"));
                refused(Reason.NOT_A_REGULAR_FILE, () -> rf.newInputStream("null"));
                refused(Reason.NOT_A_REGULAR_FILE, () -> rf.downloadTar("disk"));
                assertThat(untar(rf.downloadTar("")).keySet()).containsExactly("ok.txt");
                rf.write("disk", utf8("replaced"));
                assertThat(rf.stat("disk").type()).isEqualTo(FileType.FILE);
                rf.delete("null");
                assertThat(rf.exists("null")).isFalse();
            });
        } finally {
            manager.destroy(id);
        }
    }

    // ------------------------------------------------------------------ setuid / setgid

    @Test
    @DisplayName("setuid/setgid/sticky: stat reports them, downloads strip them")
    void setuidDownload() {
        plant(sandbox, "cp /bin/busybox su && chmod 4755 su && echo x > sg && chmod 2750 sg && mkdir st && chmod 1777 st"
                + " && echo y > st/f && chmod 6777 st/f");
        assertThat(files.stat("su").permissions()).isEqualTo(04755);
        assertThat(files.stat("sg").permissions() & 02000).isEqualTo(02000);
        assertThat(files.list("")).filteredOn(f -> f.name().equals("su")).extracting(FileInfo::permissions)
                .containsExactly(04755);
        Map<String, Read> tar = untar(files.downloadTar(""));
        assertThat(tar.get("su").mode()).isEqualTo(0755);
        assertThat(tar.get("sg").mode()).isEqualTo(0750);
        assertThat(tar.get("st/").mode()).isEqualTo(0777);
        assertThat(tar.get("st/f").mode()).isEqualTo(0777);
        assertThat(untar(files.downloadTar("su")).get("su").mode()).isEqualTo(0755);
    }

    @Test
    @DisplayName("setuid/setgid/sticky in an upload: never created; everything owned by the sandbox user")
    void setuidUpload() {
        files.uploadTar("up", tarStream(Entry.file("su", 04755, "a"), Entry.file("sg", 02644, "b"),
                Entry.dir("st", 01777), Entry.file("st/x", 06777, "c")));
        assertThat(inside("stat -c '%n %a %u' up/su up/sg up/st up/st/x"))
                .isEqualTo("up/su 755 10001\nup/sg 644 10001\nup/st 755 10001\nup/st/x 755 10001");
        assertThat(plant(sandbox, "find up -perm -1000 -o -perm -2000 -o -perm -4000")).isEmpty();
    }

    // ------------------------------------------------------------------ a link at the write target

    @Test
    @DisplayName("symlink planted at a write target (existing and dangling targets): the link is replaced")
    void symlinkAtWriteTarget() {
        plant(sandbox, "echo keep > real && ln -s /workspace/real t1 && ln -s /workspace/created-by-write t2"
                + " && mkdir d && ln -s /workspace/real d/t3");
        files.write("t1", utf8("one"));
        files.write("t2", new java.io.ByteArrayInputStream(utf8("two")));
        files.uploadTar("", tarStream(Entry.file("d/t3", "three")));
        assertThat(inside("cat t1; echo; cat t2; echo; cat d/t3; echo; cat real")).isEqualTo("one\ntwo\nthree\nkeep");
        assertThat(inside("test -L t1 || test -L t2 || test -L d/t3 || echo none")).isEqualTo("none");
        assertThat(files.exists("created-by-write")).isFalse();
    }

    // ------------------------------------------------------------------ the swap race

    @Test
    @DisplayName("swap race: the container keeps swapping a file for links, FIFOs and dirs, its directory for links and FIFOs")
    void swapRace() {
        // As HostileWorkspaceTest's loop, FIFOs included: the engine opens what it extracts or tars without
        // O_NONBLOCK, which only the freeze around each files call keeps from blocking for good (VolumeFreezeTest).
        // The plain file is written under its own name (race/w), never race/n: when a FIFO's rename fails (a host
        // upload re-made the directory mid-round), the FIFO left at race/n would block the loop's next write for good.
        String loop = "mkdir -p race && echo safe > race/f && (i=0; while [ ! -e stop ]; do"
                + HostileRequests.COUNT_ROUND
                + " echo safe > race/w && mv -f race/w race/f;"
                + " mkfifo race/n && mv -f race/n race/f;"
                + " ln -s /etc/passwd race/n && mv -f race/n race/f;"
                + " ln -s /bin/busybox race/n && mv -f race/n race/f;"
                + " rm -f race/f && mkdir race/f && echo inner > race/f/x && rm -rf race/f;"
                + " mv race race.d && ln -s / race && rm race && mv race.d race;"
                + " mv race race.d && mkfifo race && rm race && mv race.d race;"
                + " done) >/dev/null 2>>loop.err &";
        plant(sandbox, loop);
        // Each call is a few engine requests (deletes a one-off container), so far fewer than on a host directory.
        HostileRequests.RaceCalls calls = assertTimeoutPreemptively(HostileRequests.RACE_DEADLINE.plusSeconds(60),
                () -> HostileRequests.raceCalls(sandbox, files, 48, 20));
        plant(sandbox, "touch stop");
        System.out.println("volume swap race: " + calls);
    }

    @Test
    @DisplayName("recursive delete racing a container that keeps refilling the tree: every call ends")
    void recursiveDeleteRace() {
        String loop = "(while [ ! -e stop ]; do mkdir -p fill/a/b/c fill/d; echo x > fill/a/b/c/f;"
                + " ln -s / fill/a/out; ln -s / fill/d/e; mkfifo fill/a/b/p;"
                + " mv fill/d fill/a/b/c/moved 2>/dev/null; rm -rf fill/a/b/c/moved; done) >/dev/null 2>&1 &";
        plant(sandbox, loop);
        String outcome = assertTimeoutPreemptively(HostileRequests.RACE_DEADLINE.plusSeconds(30),
                () -> HostileRequests.deleteRace(files, 20));
        plant(sandbox, "touch stop");
        System.out.println("volume recursive delete race: " + outcome);
        assertThat(inside("ls /bin/busybox")).isEqualTo("/bin/busybox");
    }

    // ------------------------------------------------------------------ hostile tar uploads

    @Test
    @DisplayName("tar upload with '../' entries is refused; nothing is written")
    void tarDotDot() {
        HostileRequests.dotDotEntries(files);
        assertThat(inside("ls -A")).isIn("a", "");
    }

    @Test
    @DisplayName("tar upload with absolute names is refused")
    void tarAbsolute() {
        assertThat(HostileRequests.absoluteEntries(files, canary)).doesNotExist();
        assertThat(inside("ls -A")).isEmpty();
    }

    @Test
    @DisplayName("tar upload with symlink entries pointing out is refused; a link inside is created but never followed")
    void tarSymlinkOut() {
        HostileRequests.linksOut(files, canary);
        refused(Reason.SYMLINK, () -> files.uploadTar("", tarStream(Entry.dir("sub", 0755),
                Entry.link("sub/up", TarFormat.SYMLINK, ".."), Entry.file("sub/up/x", "through the link"))));
        assertThat(files.exists("x")).isFalse();
        assertThat(files.exists("sub")).as("refused before anything was sent to the engine").isFalse();
        files.uploadTar("", tarStream(Entry.dir("sub", 0755), Entry.link("sub/up", TarFormat.SYMLINK, "..")));
        FileInfo up = files.stat("sub/up");
        assertThat(up.type()).isEqualTo(FileType.SYMLINK);
        assertThat(up.linkTarget()).isEqualTo("..");
        assertThat(inside("stat -c %u sub/up")).isEqualTo("10001");
    }

    @Test
    @DisplayName("tar upload with hard-link entries is refused")
    void tarHardlink() {
        HostileRequests.hardLinkEntries(files);
    }

    @Test
    @DisplayName("tar upload with character-device, block-device and FIFO entries is refused")
    void tarDevices() {
        HostileRequests.deviceEntries(files);
    }

    @Test
    @DisplayName("tar upload that is not a tar (bad checksum, truncated) is refused")
    void tarMalformed() {
        HostileRequests.malformedArchives(files);
    }

    @Test
    @DisplayName("a write into a directory the container swapped for a link lands inside or nowhere")
    void parentSwappedToLink() {
        plant(sandbox, "mkdir -p p/q");
        files.write("p/q/one", utf8("1"));
        plant(sandbox, "mv p p.old && ln -s / p");
        refused(Reason.SYMLINK, () -> files.write("p/q/two", utf8("2")));
        refused(Reason.SYMLINK, () -> files.write("p/secret.txt", utf8("2")));
        assertThat(files.readBytes("p.old/q/one")).isEqualTo(utf8("1"));
    }

    @Test
    @DisplayName("ExecResult sanity: the sandbox sees the volume at /workspace, owned 0700 by its user")
    void volumeRootOwned() {
        ExecResult r = sandbox.exec(ExecRequest.shell("stat -c '%u %a' /workspace"));
        assertThat(r.stdout().strip()).isEqualTo("10001 700");
    }

    // ------------------------------------------------------------------ the freeze around files calls

    @Test
    @DisplayName("a sandbox swapping FIFOs in at the file read, written, uploaded and downloaded: every call ends")
    void fifoSwapRace() {
        // f and d/up.txt alternate between a regular file and a FIFO, each swap one rename: the engine's lstat can
        // see the file and its open the FIFO (which, without the freeze, blocks that open forever).
        String loop = "mkdir -p d && echo safe > f && (i=0; while [ ! -e stop ]; do"
                + HostileRequests.COUNT_ROUND
                + " echo safe > f.n && mv -f f.n f; mkfifo p.n && mv -f p.n f;"
                + " echo safe > u.n && mv -f u.n d/up.txt; mkfifo q.n && mv -f q.n d/up.txt;"
                + " done) >/dev/null 2>&1 &";
        plant(sandbox, loop);
        Map<String, AtomicInteger> ok = new TreeMap<>();
        Map<String, AtomicInteger> refused = new TreeMap<>();
        List<String> ops = List.of("read", "stream", "write", "upload", "download");
        int before = HostileRequests.awaitRoundAfter(sandbox, 0, "FIFO swap");
        int[] seen = {before};
        int[] i = {0};
        // 40 calls during 20 swap rounds, and on until every kind of call has succeeded once (about half find the
        // FIFO) and one was refused.
        assertTimeoutPreemptively(HostileRequests.RACE_DEADLINE.plusSeconds(60), () -> Await.repeatUntil(
                HostileRequests.RACE_DEADLINE, () -> i[0] >= 40 && seen[0] - before >= 20
                        && ops.stream().allMatch(ok::containsKey) && !refused.isEmpty(),
                () -> i[0] + " calls, succeeded " + ok + ", refused " + refused + ", " + (seen[0] - before)
                        + " swap rounds (wanted 40 calls, 20 rounds, each kind succeeded once, one refused)", () -> {
                    String op = ops.get(i[0]++ % ops.size());
                    try {
                        switch (op) {
                            case "read" -> assertThat(new String(files.readBytes("f"), StandardCharsets.UTF_8))
                                    .isIn("safe\n", "host\n");
                            case "stream" -> {
                                try (InputStream in = files.newInputStream("f")) {
                                    assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8))
                                            .isIn("safe\n", "host\n");
                                }
                            }
                            case "write" -> files.write("f", utf8("host\n"));
                            case "upload" -> files.uploadTar("d", tarStream(Entry.file("up.txt", "host\n")));
                            default -> untar(files.downloadTar("d")).values()
                                    .forEach(r -> assertThat(r.text()).isIn("safe\n", "host\n"));
                        }
                        ok.computeIfAbsent(op, k -> new AtomicInteger()).incrementAndGet();
                    } catch (SandboxFileException | SandboxNotFoundException | UncheckedIOException expected) {
                        // a FIFO found there is refused, never opened
                        refused.computeIfAbsent(op, k -> new AtomicInteger()).incrementAndGet();
                    }
                    if (i[0] % ops.size() == 0) {
                        seen[0] = HostileRequests.roundsSoFar(sandbox);
                    }
                }), "files calls while the sandbox swaps FIFOs in");
        // Still swapping after the last call: no call froze the sandbox for good.
        HostileRequests.awaitRoundAfter(sandbox, seen[0], "FIFO swap");
        plant(sandbox, "touch stop");
        System.out.println("volume FIFO swap race: " + (seen[0] - before) + " swap rounds during the calls; succeeded "
                + ok + ", refused " + refused);
    }

    @Test
    @DisplayName("execs, processes and files calls hammering one live volume session concurrently: none fails")
    void execsAndFilesTogether() throws Exception {
        plant(sandbox, "echo start > f");
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        AtomicInteger execs = new AtomicInteger();
        AtomicInteger processes = new AtomicInteger();
        AtomicInteger fileCalls = new AtomicInteger();
        // A fixed number of calls per thread, all at once; the deadline only bounds a run that cannot finish.
        long end = System.nanoTime() + HostileRequests.RACE_DEADLINE.toNanos();
        // The test's own threads: the driver starts none for this.
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                int n = t;
                done.add(pool.submit(() -> repeat(10, end, failures, () -> {
                    ExecResult r = sandbox.exec(ExecRequest.shell("echo exec-" + n + " && cat /workspace/f >/dev/null")
                            .withTimeout(Duration.ofSeconds(30)));
                    assertThat(r.exitCode()).as("exec stderr: %s", r.stderr()).isZero();
                    assertThat(r.stdout()).isEqualTo("exec-" + n + "\n");
                    execs.incrementAndGet();
                })));
            }
            done.add(pool.submit(() -> repeat(5, end, failures, () -> {
                SandboxProcess p = sandbox.start(ExecRequest.shell("echo proc"));
                ProcessStatus s = p.waitFor(Duration.ofSeconds(30));
                assertThat(s.exitCode()).as("process %s", s).isEqualTo(0);
                processes.incrementAndGet();
            })));
            for (int t = 0; t < 2; t++) {
                String name = "h" + t;
                done.add(pool.submit(() -> repeat(6, end, failures, () -> {
                    files.write(name, utf8("content " + name));
                    assertThat(new String(files.readBytes(name), StandardCharsets.UTF_8))
                            .isEqualTo("content " + name);
                    assertThat(files.stat("f").size()).isEqualTo(6);
                    fileCalls.addAndGet(3);
                })));
            }
            for (Future<?> f : done) {
                f.get(HostileRequests.RACE_DEADLINE.plusSeconds(30).toSeconds(), TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        System.out.println("volume freeze concurrency: " + execs + " execs, " + processes + " processes, " + fileCalls
                + " files calls, " + failures.size() + " failures");
        assertThat(failures).as("failed calls").isEmpty();
        assertThat(List.of(execs.get(), processes.get(), fileCalls.get()))
                .as("execs, processes and files calls done within %s", HostileRequests.RACE_DEADLINE)
                .containsExactly(30, 5, 36);
        assertThat(plant(sandbox, "cat f")).as("the sandbox runs after the freezes").isEqualTo("start\n");
    }

    /** Makes {@code times} calls, stopping early at the deadline or after five failures. */
    private static void repeat(int times, long end, ConcurrentLinkedQueue<Throwable> failures, ThrowingRunnable call) {
        for (int i = 0; i < times && System.nanoTime() - end < 0 && failures.size() < 5; i++) {
            try {
                call.run();
            } catch (Throwable e) {
                failures.add(e);
                e.printStackTrace();
            }
        }
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }
}
