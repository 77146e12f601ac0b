package dev.sandboxkit.docker.internal.files;

import com.github.dockerjava.api.DockerClient;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.FileInfo;
import dev.sandboxkit.FileType;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxFileException.Reason;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.docker.ManagerOnDockerTest;
import dev.sandboxkit.docker.internal.files.FilesTestSupport.Entry;
import dev.sandboxkit.docker.internal.files.FilesTestSupport.Read;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

import static dev.sandboxkit.docker.internal.files.FilesTestSupport.plant;
import static dev.sandboxkit.docker.internal.files.FilesTestSupport.snapshot;
import static dev.sandboxkit.docker.internal.files.FilesTestSupport.tarStream;
import static dev.sandboxkit.docker.internal.files.FilesTestSupport.untar;
import static dev.sandboxkit.docker.internal.files.FilesTestSupport.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The files API against a hostile container, on the real Docker engine. Each test plants one attack from
 * inside the container (exec, as the sandbox user) and shows that the host-side calls refuse it or stay
 * inside the workdir, and never block. After every test the host's {@code /etc/passwd}, a canary directory
 * outside the workspace root (whose absolute host path the container's links point at) and everything
 * outside the session's workdir are checked unchanged.
 */
@Tag("slow")
@DisplayName("Files API against a hostile container (real Docker)")
class HostileWorkspaceTest {
    private static final Duration NEVER_BLOCKS = Duration.ofSeconds(20);
    private static DockerClient docker;
    private static SandboxManager manager;
    @TempDir
    static Path tmp;
    private static Path root;
    private static Path canary;
    private static byte[] passwd;

    private String sessionId;
    private Sandbox sandbox;
    private SandboxFiles files;
    private Map<String, String> outsideBefore;

    @BeforeAll
    static void start() throws IOException {
        docker = ManagerOnDockerTest.EngineCheck.requireEngine();
        root = tmp.resolve("ws");
        canary = tmp.resolve("canary");
        Files.createDirectories(canary.resolve("sub"));
        Files.writeString(canary.resolve("secret.txt"), "CANARY-SECRET\n");
        passwd = Files.readAllBytes(Path.of("/etc/passwd"));
        manager = SandboxManager.builder().driver("docker").workspaceRoot(root).build();
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

    /** The sandboxes' spec; a subclass runs the suite under another runtime. */
    SandboxSpec.Builder spec() {
        return FilesTestSupport.spec();
    }

    /**
     * Whether FIFOs and device nodes made in the sandbox appear in the host's workdir. Under runc they do; gVisor
     * keeps named pipes inside its own kernel and refuses device nodes even to root with CAP_MKNOD.
     */
    boolean specialFilesReachTheHost() {
        return true;
    }

    @BeforeEach
    void acquire(TestInfo info) {
        sessionId = "hostile-" + UUID.randomUUID().toString().substring(0, 8);
        sandbox = manager.acquire(sessionId, spec().build());
        files = sandbox.files();
        outsideBefore = outside();
    }

    @AfterEach
    void nothingOutsideChanged() throws IOException {
        try {
            assertThat(Files.readAllBytes(Path.of("/etc/passwd"))).as("host /etc/passwd").isEqualTo(passwd);
            assertThat(outside()).as("everything outside the session's workdir").isEqualTo(outsideBefore);
            assertThat(Files.readString(canary.resolve("secret.txt"))).isEqualTo("CANARY-SECRET\n");
        } finally {
            manager.destroy(sessionId);
        }
    }

    /** The temp tree (canary included) except this session's workdir and the private staging directory. */
    private Map<String, String> outside() {
        // The workdir is not walked at all: a sandbox loop may still be changing it (swapRace).
        Map<String, String> all = new TreeMap<>(snapshot(tmp, workdir()));
        all.keySet().removeIf(k -> k.startsWith("ws/" + sessionId + "/") || k.startsWith("ws/.sandboxkit-staging"));
        return all;
    }

    private Path workdir() {
        return root.resolve(sessionId);
    }

    private static void refused(Reason reason, ThrowingCallable call) {
        HostileRequests.refused(reason, call);
    }

    // ------------------------------------------------------------------ symbolic link to a host file

    @Test
    @DisplayName("symlink -> /etc/passwd: read and stream refuse it, stat reports the link without following")
    void fileSymlinkRead() {
        plant(sandbox, "ln -s /etc/passwd pw");
        refused(Reason.SYMLINK, () -> files.readBytes("pw"));
        refused(Reason.SYMLINK, () -> files.newInputStream("pw"));
        FileInfo info = files.stat("pw");
        assertThat(info.type()).isEqualTo(FileType.SYMLINK);
        assertThat(info.linkTarget()).isEqualTo("/etc/passwd");
        assertThat(info.size()).isEqualTo("/etc/passwd".length()); // the link's size, not the host file's
    }

    @Test
    @DisplayName("symlink -> /etc/passwd: write replaces the link itself; the host file is untouched")
    void fileSymlinkWrite() throws IOException {
        plant(sandbox, "ln -s /etc/passwd pw");
        files.write("pw", utf8("mine\n"));
        Path pw = workdir().resolve("pw");
        assertThat(Files.isSymbolicLink(pw)).isFalse();
        assertThat(Files.readString(pw)).isEqualTo("mine\n");
        assertThat(FilesTestSupport.uid(pw)).isEqualTo(10001);
    }

    @Test
    @DisplayName("symlink -> /etc/passwd: delete removes the link, never the target")
    void fileSymlinkDelete() {
        plant(sandbox, "ln -s /etc/passwd pw && ln -s " + canary.resolve("secret.txt") + " c");
        files.delete("pw");
        assertThat(files.deleteRecursively("c")).isTrue();
        assertThat(files.exists("pw")).isFalse();
        assertThat(files.exists("c")).isFalse();
        assertThat(Path.of("/etc/passwd")).exists();
    }

    @Test
    @DisplayName("symlink -> /etc/passwd: a tree download leaves it out; downloading it directly is refused")
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
        plant(sandbox, "ln -s / root");
        refused(Reason.SYMLINK, () -> files.readBytes("root/etc/passwd"));
        refused(Reason.SYMLINK, () -> files.stat("root/etc/passwd"));
        refused(Reason.SYMLINK, () -> files.list("root"));
        refused(Reason.SYMLINK, () -> files.list("root/etc"));
        refused(Reason.SYMLINK, () -> files.write("root/tmp/evil", utf8("x")));
        refused(Reason.SYMLINK, () -> files.mkdirs("root/tmp/evil"));
        refused(Reason.SYMLINK, () -> files.delete("root/etc/passwd"));
        refused(Reason.SYMLINK, () -> files.deleteRecursively("root/etc"));
        refused(Reason.SYMLINK, () -> files.downloadTar("root"));
        refused(Reason.SYMLINK, () -> files.uploadTar("root/tmp", tarStream(Entry.file("evil", "x"))));
        assertThat(files.stat("root").type()).isEqualTo(FileType.SYMLINK);
        assertThat(Path.of("/tmp/evil")).doesNotExist();
    }

    @Test
    @DisplayName("directory symlink -> a host directory as a MIDDLE component: refused, nothing written there")
    void dirSymlinkMiddle() {
        plant(sandbox, "mkdir -p a && ln -s " + canary + " a/m");
        refused(Reason.SYMLINK, () -> files.readBytes("a/m/secret.txt"));
        refused(Reason.SYMLINK, () -> files.newInputStream("a/m/secret.txt"));
        refused(Reason.SYMLINK, () -> files.stat("a/m/secret.txt"));
        refused(Reason.SYMLINK, () -> files.write("a/m/new.txt", utf8("x")));
        refused(Reason.SYMLINK, () -> files.write("a/m/secret.txt", utf8("overwritten")));
        refused(Reason.SYMLINK, () -> files.mkdirs("a/m/sub/deeper"));
        refused(Reason.SYMLINK, () -> files.delete("a/m/secret.txt"));
        refused(Reason.SYMLINK, () -> files.deleteRecursively("a/m/sub"));
        refused(Reason.SYMLINK, () -> files.uploadTar("a/m", tarStream(Entry.file("new.txt", "x"))));
        refused(Reason.SYMLINK, () -> files.downloadTar("a/m/sub"));
    }

    @Test
    @DisplayName("directory symlink -> a host directory as the LAST component: not listed, written, tarred; delete drops the link only")
    void dirSymlinkLast() {
        plant(sandbox, "mkdir -p a/b && ln -s " + canary + " a/b/last");
        refused(Reason.SYMLINK, () -> files.list("a/b/last"));
        refused(Reason.SYMLINK, () -> files.mkdirs("a/b/last"));
        refused(Reason.SYMLINK, () -> files.downloadTar("a/b/last"));
        refused(Reason.SYMLINK, () -> files.uploadTar("a/b/last", tarStream(Entry.file("new.txt", "x"))));
        refused(Reason.IS_A_DIRECTORY, () -> files.write("a/b", utf8("x")));
        assertThat(files.stat("a/b/last").type()).isEqualTo(FileType.SYMLINK);
        assertThat(files.list("a/b")).extracting(FileInfo::type).containsExactly(FileType.SYMLINK);
        assertThat(files.deleteRecursively("a/b/last")).isTrue();
        assertThat(files.list("a/b")).isEmpty();
        assertThat(canary.resolve("secret.txt")).exists();
    }

    // ------------------------------------------------------------------ .. and absolute paths

    @Test
    @DisplayName("'..' and absolute paths outside /workspace are refused before anything is touched")
    void dotDotAndAbsolute() {
        HostileRequests.badPaths(files);
    }

    // ------------------------------------------------------------------ hard links

    @Test
    @DisplayName("hard link: linking a file outside the workdir is impossible (EXDEV); one inside cannot carry a write")
    void hardlinks() throws IOException {
        // Everything the container can name outside /workspace is on another mount: link(2) refuses.
        ExecResult out = sandbox.exec(ExecRequest.shell(
                "cd /workspace; ln /bin/busybox bb; echo \"busybox=$?\"; ln /etc/hostname hn; echo \"hostname=$?\"; "
                        + "ln /etc/hosts hs; echo \"hosts=$?\""));
        assertThat(out.stdout()).contains("busybox=1").contains("hostname=1").contains("hosts=1");
        assertThat(out.stderr()).contains("cross-device");
        assertThat(files.exists("bb")).isFalse();
        // Inside the workdir a hard link is just a second name: a write replaces the name, not the inode.
        plant(sandbox, "echo original > a && ln a b");
        files.write("b", utf8("replaced\n"));
        assertThat(files.readBytes("a")).isEqualTo(utf8("original\n"));
        assertThat(files.readBytes("b")).isEqualTo(utf8("replaced\n"));
        assertThat(Files.getAttribute(workdir().resolve("a"), "unix:nlink")).isEqualTo(1);
        plant(sandbox, "ln a c");
        Map<String, Read> tar = untar(files.downloadTar(""));
        assertThat(tar.get("a").text()).isEqualTo("original\n");
        assertThat(tar.get("c").text()).isEqualTo("original\n"); // a plain file, not a hard-link entry
        assertThat(tar.get("c").type()).isEqualTo(TarFormat.REGULAR);
    }

    // ------------------------------------------------------------------ FIFOs and devices

    @Test
    @DisplayName("FIFO: read, stream, stat, list and download never block and never open it; write replaces it")
    void fifo() {
        plant(sandbox, "mkfifo f && mkdir d && mkfifo d/inner && echo ok > d/ok.txt");
        if (!specialFilesReachTheHost()) {
            // The sandbox sees its FIFOs; the host's workdir has none, so there is nothing to block on.
            assertThat(sandbox.exec(ExecRequest.shell("test -p f && test -p d/inner")).exitCode()).isZero();
            assertThat(files.exists("f")).isFalse();
            assertThat(files.list("d")).extracting(FileInfo::name).containsExactly("ok.txt");
            files.write("f", utf8("now a file\n"));
            assertThat(files.stat("f").type()).isEqualTo(FileType.FILE);
            return;
        }
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
        });
    }

    @Test
    @DisplayName("device node: the sandbox user cannot mknod (no CAP_MKNOD); a FIFO needs no capability")
    void deviceNodeNeedsCapability() {
        ExecResult r = sandbox.exec(ExecRequest.shell("cd /workspace && mknod null c 1 3; echo \"rc=$?\""));
        assertThat(r.stdout()).contains("rc=1");
        assertThat(r.stderr()).containsIgnoringCase("not permitted");
        assertThat(files.exists("null")).isFalse();
    }

    @Test
    @DisplayName("device node planted by a root container granted CAP_MKNOD: reported, never opened, left out of downloads")
    void deviceNodeWithCapability() {
        String id = sessionId + "-root";
        Sandbox rootBox = manager.acquire(id, spec().user("0:0").addCapability("MKNOD").build());
        try {
            if (!specialFilesReachTheHost()) {
                ExecResult r = rootBox.exec(ExecRequest.shell("cd /workspace && mknod disk b 8 0; echo \"rc=$?\""));
                assertThat(r.stdout()).as("gVisor refuses device nodes, even to root with CAP_MKNOD").contains("rc=1");
                assertThat(rootBox.files().exists("disk")).isFalse();
                return;
            }
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
        Map<String, Read> tar = untar(files.downloadTar(""));
        assertThat(tar.get("su").mode()).isEqualTo(0755);
        assertThat(tar.get("sg").mode()).isEqualTo(0750);
        assertThat(tar.get("st/").mode()).isEqualTo(0777);
        assertThat(tar.get("st/f").mode()).isEqualTo(0777);
        assertThat(untar(files.downloadTar("su")).get("su").mode()).isEqualTo(0755);
    }

    @Test
    @DisplayName("setuid/setgid/sticky in an upload: never created on the host")
    void setuidUpload() throws IOException {
        files.uploadTar("up", tarStream(Entry.file("su", 04755, "a"), Entry.file("sg", 02644, "b"),
                Entry.dir("st", 01777), Entry.file("st/x", 06777, "c")));
        assertThat(FilesTestSupport.mode(workdir().resolve("up/su")) & 07777).isEqualTo(0755);
        assertThat(FilesTestSupport.mode(workdir().resolve("up/sg")) & 07777).isEqualTo(0644);
        assertThat(FilesTestSupport.mode(workdir().resolve("up/st")) & 07777).isEqualTo(0755);
        assertThat(FilesTestSupport.mode(workdir().resolve("up/st/x")) & 07777).isEqualTo(0755);
        assertThat(plant(sandbox, "find up -perm -1000 -o -perm -2000 -o -perm -4000")).isEmpty();
    }

    // ------------------------------------------------------------------ a link at the write target

    @Test
    @DisplayName("symlink planted at a write target (existing and dangling host targets): the link is replaced")
    void symlinkAtWriteTarget() throws IOException {
        plant(sandbox, "ln -s " + canary.resolve("secret.txt") + " t1 && ln -s " + canary.resolve("created-by-write")
                + " t2 && mkdir d && ln -s " + canary + " d/t3");
        files.write("t1", utf8("one"));
        files.write("t2", new java.io.ByteArrayInputStream(utf8("two")));
        files.uploadTar("", tarStream(Entry.file("d/t3", "three")));
        assertThat(Files.readString(workdir().resolve("t1"))).isEqualTo("one");
        assertThat(Files.readString(workdir().resolve("t2"))).isEqualTo("two");
        assertThat(Files.readString(workdir().resolve("d/t3"))).isEqualTo("three");
        assertThat(Files.isSymbolicLink(workdir().resolve("t1"))).isFalse();
        assertThat(canary.resolve("created-by-write")).doesNotExist();
        assertThat(Files.readString(canary.resolve("secret.txt"))).isEqualTo("CANARY-SECRET\n");
    }

    // ------------------------------------------------------------------ the swap race

    @Test
    @DisplayName("swap race: the container keeps swapping a file and its directory for links, FIFOs and dirs while the host reads and writes")
    void swapRace() {
        // The plain file is written under its own name (race/w), never race/n: when a FIFO's rename fails (a host
        // upload re-made the directory mid-round), the FIFO left at race/n would block the loop's next write for good.
        String loop = "mkdir -p race && echo safe > race/f && (i=0; while [ ! -e stop ]; do"
                + HostileRequests.COUNT_ROUND
                + " echo safe > race/w && mv -f race/w race/f;"
                + " ln -s /etc/passwd race/n && mv -f race/n race/f;"
                + " ln -s " + canary.resolve("secret.txt") + " race/n && mv -f race/n race/f;"
                + " mkfifo race/n && mv -f race/n race/f;"
                + " rm -f race/f && mkdir race/f && echo inner > race/f/x && rm -rf race/f;"
                + " mv race race.d && ln -s " + canary + " race && rm race && mv race.d race;"
                + " mv race race.d && mkfifo race && rm race && mv race.d race;"
                + " done) >/dev/null 2>>loop.err &";
        plant(sandbox, loop);
        HostileRequests.RaceCalls calls = assertTimeoutPreemptively(HostileRequests.RACE_DEADLINE.plusSeconds(60),
                () -> HostileRequests.raceCalls(sandbox, files, 160, 20));
        plant(sandbox, "touch stop");
        System.out.println("swap race: " + calls);
        assertThat(canary.resolve("up.txt")).doesNotExist();
        assertThat(canary.resolve("f")).doesNotExist();
    }

    @Test
    @DisplayName("recursive delete racing a container that keeps refilling the tree with dirs, links out and FIFOs: every call ends, nothing outside is touched")
    void recursiveDeleteRace() {
        String loop = "(while [ ! -e stop ]; do mkdir -p fill/a/b/c fill/d; echo x > fill/a/b/c/f;"
                + " ln -s " + canary + " fill/a/out; ln -s " + canary + " fill/d/e; mkfifo fill/a/b/p;"
                + " mv fill/d fill/a/b/c/moved 2>/dev/null; rm -rf fill/a/b/c/moved; done) >/dev/null 2>&1 &";
        plant(sandbox, loop);
        String outcome = assertTimeoutPreemptively(HostileRequests.RACE_DEADLINE.plusSeconds(30),
                () -> HostileRequests.deleteRace(files, 40));
        plant(sandbox, "touch stop");
        System.out.println("recursive delete race: " + outcome);
        assertThat(canary.resolve("e")).doesNotExist();
        assertThat(canary.resolve("sub")).isDirectory();
    }

    // ------------------------------------------------------------------ hostile tar uploads

    @Test
    @DisplayName("tar upload with '../' entries is refused; nothing is written outside")
    void tarDotDot() {
        HostileRequests.dotDotEntries(files);
        assertThat(root.resolve("evil.txt")).doesNotExist();
    }

    @Test
    @DisplayName("tar upload with absolute names is refused")
    void tarAbsolute() {
        assertThat(HostileRequests.absoluteEntries(files, canary)).doesNotExist();
    }

    @Test
    @DisplayName("tar upload with symlink entries pointing out is refused; a link inside is created but never followed")
    void tarSymlinkOut() throws IOException {
        HostileRequests.linksOut(files, canary);
        // A relative link that stays inside is fine, owned by the sandbox user; the classic follow-up entry
        // that writes through it is refused.
        refused(Reason.SYMLINK, () -> files.uploadTar("", tarStream(Entry.dir("sub", 0755),
                Entry.link("sub/up", TarFormat.SYMLINK, ".."), Entry.file("sub/up/x", "through the link"))));
        FileInfo up = files.stat("sub/up");
        assertThat(up.type()).isEqualTo(FileType.SYMLINK);
        assertThat(up.linkTarget()).isEqualTo("..");
        assertThat(FilesTestSupport.uid(workdir().resolve("sub/up"))).isEqualTo(10001);
        assertThat(files.exists("x")).isFalse();
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
    @DisplayName("a write into a directory the container swaps for a host-pointing link mid-way lands inside or nowhere")
    void parentSwappedToLink() {
        plant(sandbox, "mkdir -p p/q");
        // Reversed on purpose: the directory exists for the first write, is a link for the second.
        files.write("p/q/one", utf8("1"));
        plant(sandbox, "mv p p.old && ln -s " + canary + " p");
        refused(Reason.SYMLINK, () -> files.write("p/q/two", utf8("2")));
        refused(Reason.SYMLINK, () -> files.write("p/secret.txt", utf8("2")));
        assertThat(files.readBytes("p.old/q/one")).isEqualTo(utf8("1"));
    }
}
