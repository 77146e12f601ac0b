package dev.sandboxkit.docker.internal.files;

import com.github.dockerjava.api.DockerClient;
import dev.sandboxkit.FileInfo;
import dev.sandboxkit.FileType;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFileException.Reason;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.UploadResult;
import dev.sandboxkit.docker.ManagerOnDockerTest;
import dev.sandboxkit.docker.internal.files.FilesTestSupport.Entry;
import dev.sandboxkit.docker.internal.files.FilesTestSupport.Read;
import dev.sandboxkit.spi.SandboxLabels;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import dev.sandboxkit.testsupport.Await;
import dev.sandboxkit.testsupport.HousekeepingScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static dev.sandboxkit.docker.internal.files.FilesTestSupport.plant;
import static dev.sandboxkit.docker.internal.files.FilesTestSupport.sha256;
import static dev.sandboxkit.docker.internal.files.FilesTestSupport.tarStream;
import static dev.sandboxkit.docker.internal.files.FilesTestSupport.untar;
import static dev.sandboxkit.docker.internal.files.FilesTestSupport.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The files API's ordinary behaviour on the real Docker engine: round trips, ownership, sessions, limits. */
@Tag("slow")
@DisplayName("Files API on the real Docker engine")
class FilesOnDockerTest {
    private static DockerClient docker;
    @TempDir
    static Path tmp;
    private static Path root;
    private static SandboxManager manager;
    private static final HousekeepingScheduler housekeeping = new HousekeepingScheduler("files-housekeeping");

    private String sessionId;
    private Sandbox sandbox;
    private SandboxFiles files;

    @BeforeAll
    static void start() {
        docker = ManagerOnDockerTest.EngineCheck.requireEngine();
        root = tmp.resolve("ws");
        manager = SandboxManager.builder().driver("docker").workspaceRoot(root).idleTimeout(Duration.ofSeconds(2))
                .reaperInterval(Duration.ofMillis(200)).scheduler(housekeeping).build();
    }

    @AfterAll
    static void stop() throws Exception {
        if (manager != null) {
            manager.close();
        }
        housekeeping.close();
        if (docker != null) {
            docker.close();
        }
    }

    @BeforeEach
    void acquire() {
        sessionId = "files-" + UUID.randomUUID().toString().substring(0, 8);
        sandbox = manager.acquire(sessionId, FilesTestSupport.spec().build());
        files = sandbox.files();
    }

    @AfterEach
    void destroy() {
        manager.destroy(sessionId);
        assertThat(root.resolve(HostFiles.Staging.NAME).toFile().list()).as("staging leftovers").isEmpty();
    }

    private Path workdir() {
        return root.resolve(sessionId);
    }

    private static void refused(Reason reason, ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(SandboxFileException.class,
                e -> assertThat(e.reason()).as(e.getMessage()).isEqualTo(reason));
    }

    private String inContainer(String script) {
        return plant(sandbox, script);
    }

    @Test
    @DisplayName("binary files round-trip byte for byte, through bytes and streams, and the container sees the same bytes")
    void binaryRoundTrip() throws IOException {
        byte[] all = new byte[256 * 16];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        byte[] random = new byte[3 * 1024 * 1024 + 17];
        new Random(42).nextBytes(random);
        files.write("bin/all.bin", all);
        assertThat(files.write("bin/random.bin", new ByteArrayInputStream(random))).isEqualTo(random.length);
        assertThat(files.readBytes("bin/all.bin")).isEqualTo(all);
        try (InputStream in = files.newInputStream("bin/random.bin")) {
            assertThat(in.readAllBytes()).isEqualTo(random);
        }
        assertThat(inContainer("sha256sum bin/random.bin | cut -d' ' -f1").trim()).isEqualTo(sha256(random));
        // ... and what the container writes reads back the same on the host.
        inContainer("head -c 100000 /dev/urandom > made.bin");
        assertThat(sha256(files.readBytes("made.bin"))).isEqualTo(inContainer("sha256sum made.bin | cut -d' ' -f1").trim());
    }

    @Test
    @DisplayName("empty files round-trip, through write, read, stream and tar")
    void emptyFiles() throws IOException {
        files.write("empty", new byte[0]);
        assertThat(files.readBytes("empty")).isEmpty();
        assertThat(files.stat("empty").size()).isZero();
        try (InputStream in = files.newInputStream("empty")) {
            assertThat(in.read()).isEqualTo(-1);
        }
        Map<String, Read> tar = untar(files.downloadTar("empty"));
        assertThat(tar.get("empty").content()).isEmpty();
        files.uploadTar("copy", files.downloadTar(""));
        assertThat(files.readBytes("copy/empty")).isEmpty();
        assertThat(inContainer("wc -c < copy/empty").trim()).isEqualTo("0");
    }

    @Test
    @DisplayName("UTF-8 names (and names over 100 bytes) survive write, list, the container, and tar both ways")
    void utf8Names() {
        String dir = "données/日本語";
        String name = "ファイル — é ü ß 🚀.txt";
        String longName = "très-long-".repeat(12) + "終わり.txt"; // > 100 bytes: a GNU long-name entry
        files.write(dir + "/" + name, utf8("bonjour\n"));
        files.write(dir + "/" + longName, utf8("long\n"));
        assertThat(files.list(dir)).extracting(FileInfo::name).containsExactlyInAnyOrder(name, longName);
        assertThat(inContainer("cat '" + dir + "/" + name + "'")).isEqualTo("bonjour\n");
        // (busybox ls would print '?' for non-ASCII bytes; the shell's glob shows the raw names)
        assertThat(inContainer("for f in '" + dir + "'/*; do echo \"$f\"; done")).contains(name).contains(longName);
        Map<String, Read> tar = untar(files.downloadTar("données"));
        assertThat(tar).containsKeys("日本語/", "日本語/" + name, "日本語/" + longName);
        files.uploadTar("copy", files.downloadTar("données"));
        assertThat(files.readBytes("copy/日本語/" + longName)).isEqualTo(utf8("long\n"));
        // PAX path records (as written by GNU tar --format=pax, Python, Go) are understood too.
        byte[] pax = paxEntry("pax/" + longName, "via pax\n");
        files.uploadTar("", new ByteArrayInputStream(pax));
        assertThat(files.readBytes("pax/" + longName)).isEqualTo(utf8("via pax\n"));
    }

    @Test
    @DisplayName("archives interoperate with GNU tar: its upload is extracted, our download extracts with it")
    void gnuTarInterop() throws Exception {
        Path src = tmp.resolve("src-" + sessionId);
        Files.createDirectories(src.resolve("empty-dir"));
        Files.createDirectories(src.resolve("deep/er"));
        Files.writeString(src.resolve("deep/er/" + "ü".repeat(80) + ".txt"), "deep\n");
        Files.writeString(src.resolve("run.sh"), "#!/bin/sh\necho run\n");
        Files.setPosixFilePermissions(src.resolve("run.sh"), java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        Path gnu = tmp.resolve("gnu-" + sessionId + ".tar");
        run(tmp, "tar", "--format=gnu", "-cf", gnu.toString(), "-C", src.toString(), ".");
        UploadResult result;
        try (InputStream in = Files.newInputStream(gnu)) {
            result = files.uploadTar("up", in);
        }
        assertThat(result.files()).isEqualTo(2);
        assertThat(inContainer("up/run.sh")).isEqualTo("run\n");
        assertThat(files.stat("up/empty-dir").type()).isEqualTo(FileType.DIRECTORY);
        Path paxTar = tmp.resolve("pax-" + sessionId + ".tar");
        run(tmp, "tar", "--format=pax", "-cf", paxTar.toString(), "-C", src.toString(), ".");
        try (InputStream in = Files.newInputStream(paxTar)) {
            files.uploadTar("pax", in);
        }
        assertThat(files.readBytes("pax/deep/er/" + "ü".repeat(80) + ".txt")).isEqualTo(utf8("deep\n"));

        Path out = tmp.resolve("down-" + sessionId + ".tar");
        try (InputStream in = files.downloadTar("up")) {
            Files.copy(in, out);
        }
        Path extracted = Files.createDirectories(tmp.resolve("x-" + sessionId));
        run(tmp, "tar", "-xf", out.toString(), "-C", extracted.toString());
        assertThat(Files.readString(extracted.resolve("deep/er/" + "ü".repeat(80) + ".txt"))).isEqualTo("deep\n");
        assertThat(Files.isExecutable(extracted.resolve("run.sh"))).isTrue();
        assertThat(extracted.resolve("empty-dir")).isDirectory();
        // And busybox tar inside the container reads our archive too.
        files.write("ours.tar", Files.readAllBytes(out));
        assertThat(inContainer("mkdir bb && tar -xf ours.tar -C bb && cat bb/run.sh | head -1")).isEqualTo("#!/bin/sh\n");
    }

    @Test
    @DisplayName("what the host writes belongs to the sandbox user (0644 files, 0755 dirs) and the container can change it")
    void ownershipAndModes() throws IOException {
        files.write("a/b/c.txt", utf8("x"));
        files.mkdirs("m/n");
        for (String p : new String[] {"a", "a/b", "m", "m/n"}) {
            assertThat(FilesTestSupport.uid(workdir().resolve(p))).as(p).isEqualTo(10001);
            assertThat(FilesTestSupport.mode(workdir().resolve(p)) & 07777).as(p).isEqualTo(0755);
        }
        assertThat(FilesTestSupport.uid(workdir().resolve("a/b/c.txt"))).isEqualTo(10001);
        assertThat(Files.getAttribute(workdir().resolve("a/b/c.txt"), "unix:gid")).isEqualTo(10001);
        assertThat(FilesTestSupport.mode(workdir().resolve("a/b/c.txt")) & 07777).isEqualTo(0644);
        inContainer("echo more >> a/b/c.txt && touch m/n/new && rm a/b/c.txt m/n/new && rmdir m/n");
        assertThat(files.exists("a/b/c.txt")).isFalse();
    }

    @Test
    @DisplayName("writes are atomic: a reader in the container only ever sees the old or the new content")
    void atomicReplace() throws Exception {
        byte[] a = "a".repeat(512 * 1024).getBytes(StandardCharsets.US_ASCII);
        byte[] b = "b".repeat(512 * 1024).getBytes(StandardCharsets.US_ASCII);
        files.write("f", a);
        inContainer("(while [ ! -e stop ]; do md5sum f | cut -d' ' -f1; done > sums.txt 2>&1; touch stopped) &");
        // 60 writes, and on until the reader has read 20 times meanwhile (looked at every tenth write).
        int[] writes = {0};
        int[] reads = {0};
        int readsBefore = sums().length;
        Await.repeatUntil(HostileRequests.RACE_DEADLINE, () -> writes[0] >= 60 && reads[0] >= 20,
                () -> writes[0] + " writes during " + reads[0] + " reads in the container (wanted 60 and 20)", () -> {
                    files.write("f", writes[0]++ % 2 == 0 ? b : a);
                    if (writes[0] % 10 == 0) {
                        reads[0] = sums().length - readsBefore;
                    }
                });
        inContainer("touch stop");
        Await.until(Duration.ofSeconds(30), () -> files.exists("stopped"), () -> "the reader to stop");
        String md5a = md5(a);
        String md5b = md5(b);
        for (String s : sums()) {
            assertThat(s.trim()).isIn(md5a, md5b);
        }
    }

    /** The reader's complete lines so far. */
    private String[] sums() {
        String all = new String(files.readBytes("sums.txt"), StandardCharsets.US_ASCII);
        return all.substring(0, all.lastIndexOf('\n') + 1).lines().toArray(String[]::new);
    }

    @Test
    @DisplayName("a suspended session's files are reachable without starting a container; the next exec sees them")
    void suspendedSession() throws Exception {
        files.write("before.txt", utf8("before\n"));
        awaitState(SessionState.SUSPENDED, Duration.ofSeconds(15));
        awaitNoContainer(Duration.ofSeconds(15)); // recorded SUSPENDED first, then removed
        files.write("while-suspended.txt", utf8("written while suspended\n"));
        assertThat(files.list("")).extracting(FileInfo::name).containsExactly("before.txt", "while-suspended.txt");
        assertThat(manager.files(sessionId).readBytes("before.txt")).isEqualTo(utf8("before\n"));
        assertThat(manager.session(sessionId).orElseThrow().state()).isEqualTo(SessionState.SUSPENDED);
        assertThat(docker.listContainersCmd().withShowAll(true)
                .withLabelFilter(Map.of(SandboxLabels.SESSION, sessionId)).exec()).isEmpty();
        assertThat(inContainer("cat while-suspended.txt")).isEqualTo("written while suspended\n");
    }

    @Test
    @DisplayName("files calls on a live session count as activity and keep it from being reaped")
    void filesAreActivity() throws Exception {
        // Twice the idle timeout of calls, and on until the manager has had its reaper passes.
        long start = System.nanoTime();
        HousekeepingScheduler.Mark mark = housekeeping.mark();
        Await.repeatUntil(Duration.ofSeconds(90), () -> System.nanoTime() - start > Duration.ofSeconds(4).toNanos()
                        && housekeeping.ranSince(mark, 10, Duration.ofMillis(200)), () -> housekeeping.progress(mark), () -> {
                    files.stat("");
                    Thread.sleep(300);
                });
        assertThat(manager.session(sessionId).orElseThrow().state()).isEqualTo(SessionState.ACTIVE);
    }

    @Test
    @DisplayName("unknown and destroyed sessions, and a handle from before a destroy, are 'not found'")
    void sessions() {
        assertThatThrownBy(() -> manager.files("no-such-session").list("")).isInstanceOf(SandboxNotFoundException.class);
        SandboxFiles old = sandbox.files();
        files.write("x", utf8("x"));
        manager.destroy(sessionId);
        assertThatThrownBy(() -> old.readBytes("x")).isInstanceOf(SandboxNotFoundException.class);
        assertThatThrownBy(() -> manager.files(sessionId).readBytes("x")).isInstanceOf(SandboxNotFoundException.class);
        Sandbox again = manager.acquire(sessionId, FilesTestSupport.spec().build());
        assertThatThrownBy(() -> old.list("")).isInstanceOf(SandboxNotFoundException.class);
        assertThat(again.files().list("")).isEmpty();
        assertThatThrownBy(() -> manager.files("bad/id")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("clear errors: missing paths, non-empty dirs, files vs directories")
    void errors() {
        assertThatThrownBy(() -> files.readBytes("missing")).isInstanceOf(SandboxNotFoundException.class)
                .hasMessageContaining("missing");
        assertThatThrownBy(() -> files.list("missing/dir")).isInstanceOf(SandboxNotFoundException.class);
        assertThatThrownBy(() -> files.delete("missing")).isInstanceOf(SandboxNotFoundException.class);
        assertThat(files.exists("missing/x")).isFalse();
        assertThat(files.deleteRecursively("missing")).isFalse();
        files.write("d/f", utf8("x"));
        refused(Reason.NOT_EMPTY, () -> files.delete("d"));
        refused(Reason.IS_A_DIRECTORY, () -> files.write("d", utf8("x")));
        refused(Reason.IS_A_DIRECTORY, () -> files.readBytes("d"));
        refused(Reason.IS_A_DIRECTORY, () -> files.write("", utf8("x")));
        refused(Reason.NOT_A_DIRECTORY, () -> files.mkdirs("d/f/g"));
        refused(Reason.NOT_A_DIRECTORY, () -> files.list("d/f"));
        refused(Reason.NOT_A_DIRECTORY, () -> files.write("d/f/g", utf8("x")));
        refused(Reason.INVALID_PATH, () -> files.deleteRecursively(""));
        assertThat(files.deleteRecursively("d")).isTrue();
        assertThat(files.list("")).isEmpty();
        // A tree the container made (deep, with links and FIFOs, a read-only dir) is deleted without following.
        inContainer("mkdir -p t/a/b/c && echo x > t/a/b/c/f && ln -s /etc t/a/l && mkfifo t/a/p && chmod 555 t/a/b");
        assertThat(files.deleteRecursively("t")).isTrue();
        assertThat(files.exists("t")).isFalse();
    }

    @Test
    @DisplayName("limits: file size and entry counts are enforced with clear errors, and a refused write changes nothing")
    void limits() throws Exception {
        try (SandboxManager small = SandboxManager.builder().driver("docker").workspaceRoot(tmp.resolve("small"))
                .fileLimits(1024, 10).build()) {
            Sandbox s = small.acquire("limits", FilesTestSupport.spec().build());
            SandboxFiles f = s.files();
            f.write("ok.txt", new byte[1024]);
            refused(Reason.TOO_LARGE, () -> f.write("ok.txt", new byte[1025]));
            refused(Reason.TOO_LARGE, () -> f.write("ok.txt", new ByteArrayInputStream(new byte[5000])));
            assertThat(f.readBytes("ok.txt")).hasSize(1024);
            plant(s, "head -c 2000 /dev/zero > big.bin && mkdir many && for i in 1 2 3 4 5 6 7 8 9 10 11; do touch many/$i; done");
            refused(Reason.TOO_LARGE, () -> f.readBytes("big.bin"));
            refused(Reason.TOO_LARGE, () -> f.newInputStream("big.bin"));
            refused(Reason.TOO_LARGE, () -> untar(f.downloadTar("big.bin")));
            refused(Reason.TOO_MANY_ENTRIES, () -> f.list("many"));
            refused(Reason.TOO_MANY_ENTRIES, () -> untar(f.downloadTar("many")));
            Entry[] eleven = new Entry[11];
            for (int i = 0; i < eleven.length; i++) {
                eleven[i] = Entry.file("e" + i, "x");
            }
            refused(Reason.TOO_MANY_ENTRIES, () -> f.uploadTar("up", tarStream(eleven)));
            refused(Reason.TOO_LARGE, () -> f.uploadTar("up2", tarStream(Entry.file("big", "y".repeat(1025)))));
            // A file that grows past the limit while it is being streamed.
            plant(s, "head -c 1000 /dev/zero > grows.bin");
            try (InputStream in = f.newInputStream("grows.bin")) {
                plant(s, "head -c 5000 /dev/zero >> grows.bin");
                assertThatThrownBy(in::readAllBytes).isInstanceOfSatisfying(SandboxFileException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.TOO_LARGE));
            }
            assertThat(tmp.resolve("small").resolve(HostFiles.Staging.NAME).toFile().list()).isEmpty();
            small.destroy("limits");
        }
    }

    private void awaitNoContainer(Duration max) throws InterruptedException {
        long end = System.nanoTime() + max.toNanos();
        while (!docker.listContainersCmd().withShowAll(true).withLabelFilter(Map.of(SandboxLabels.SESSION, sessionId))
                .exec().isEmpty()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("the session's container was not removed within " + max);
            }
            Thread.sleep(100);
        }
    }

    private void awaitState(SessionState state, Duration max) throws InterruptedException {
        long end = System.nanoTime() + max.toNanos();
        while (manager.session(sessionId).orElseThrow().state() != state) {
            if (System.nanoTime() > end) {
                throw new AssertionError("session did not become " + state + " within " + max);
            }
            Thread.sleep(100);
        }
    }

    /** A PAX extended header carrying the path, then a regular entry with a short placeholder name. */
    private static byte[] paxEntry(String path, String content) {
        byte[] record = paxRecord("path", path);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        out.writeBytes(TarFormat.header(utf8("PaxHeaders/x"), TarFormat.PAX_HEADER, 0644, record.length, 0, 0, 0, null));
        out.writeBytes(record);
        out.writeBytes(new byte[TarFormat.padding(record.length)]);
        byte[] data = utf8(content);
        out.writeBytes(TarFormat.header(utf8("placeholder"), TarFormat.REGULAR, 0644, data.length, 0, 0, 0, null));
        out.writeBytes(data);
        out.writeBytes(new byte[TarFormat.padding(data.length)]);
        out.writeBytes(TarFormat.endOfArchive());
        return out.toByteArray();
    }

    private static byte[] paxRecord(String key, String value) {
        int body = (" " + key + "=" + value + "\n").getBytes(StandardCharsets.UTF_8).length;
        int len = body + 1;
        while (Integer.toString(len).length() + body != len) {
            len++;
        }
        return (len + " " + key + "=" + value + "\n").getBytes(StandardCharsets.UTF_8);
    }

    private static String md5(byte[] data) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("MD5").digest(data));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void run(Path dir, String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(String.join(" ", cmd) + ": " + out).isZero();
    }
}
