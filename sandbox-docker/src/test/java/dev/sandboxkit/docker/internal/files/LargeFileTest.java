package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.UploadResult;
import dev.sandboxkit.docker.ManagerOnDockerTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A 200 MiB file written, read, tarred and untarred through the files API in a JVM whose heap is far smaller
 * than the file. Runs in its own Surefire execution with {@code -Xmx64m} ({@code bounded-heap} in the pom);
 * anywhere else it is skipped, since a large heap proves nothing.
 */
@Tag("slow")
@DisplayName("Files API: a 200 MiB file in a 64 MiB heap (real Docker)")
class LargeFileTest {
    private static final long SIZE = 200L * 1024 * 1024;
    private static final long MAX_HEAP_FOR_THIS_TEST = 96L * 1024 * 1024;
    @TempDir
    static Path tmp;
    private static SandboxManager manager;

    @BeforeAll
    static void start() throws Exception {
        assumeTrue(Runtime.getRuntime().maxMemory() <= MAX_HEAP_FOR_THIS_TEST,
                "runs only in the bounded-heap Surefire execution (-Xmx64m); max heap here is "
                        + Runtime.getRuntime().maxMemory() / (1024 * 1024) + " MiB");
        ManagerOnDockerTest.EngineCheck.requireEngine().close();
        manager = SandboxManager.builder().driver("docker").workspaceRoot(tmp.resolve("ws")).build();
    }

    @AfterAll
    static void stop() {
        if (manager != null) {
            manager.close();
        }
    }

    @Test
    @DisplayName("streams 200 MiB in and out (bytes identical, also inside the container) with the heap bounded")
    void twoHundredMiB() throws Exception {
        Sandbox sandbox = manager.acquire("large", FilesTestSupport.spec().build());
        SandboxFiles files = sandbox.files();
        String expected = sha256(new Generated(SIZE));
        List<MemoryPoolMXBean> heap = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == MemoryType.HEAP).toList();
        System.gc();
        long baseline = used(heap);
        heap.forEach(MemoryPoolMXBean::resetPeakUsage);

        long t0 = System.nanoTime();
        assertThat(files.write("big/data.bin", new Generated(SIZE))).isEqualTo(SIZE);
        long t1 = System.nanoTime();
        String read;
        try (InputStream in = files.newInputStream("big/data.bin")) {
            read = sha256(in);
        }
        long t2 = System.nanoTime();
        // Tar out and straight back in, pulled through on this thread: download feeds upload.
        UploadResult copied;
        try (InputStream tar = files.downloadTar("big")) {
            copied = files.uploadTar("copy", tar);
        }
        long t3 = System.nanoTime();
        long peak = heap.stream().mapToLong(p -> p.getPeakUsage().getUsed()).sum();

        assertThat(read).isEqualTo(expected);
        assertThat(copied.files()).isEqualTo(1);
        assertThat(copied.bytes()).isEqualTo(SIZE);
        ExecResult sums = sandbox.exec(ExecRequest.shell("sha256sum big/data.bin copy/data.bin | cut -d' ' -f1")
                .withTimeout(Duration.ofMinutes(2)));
        assertThat(sums.stdout()).isEqualTo(expected + "\n" + expected + "\n");
        System.out.printf("200 MiB: max heap %d MiB, heap used before %.1f MiB, peak heap used during the transfers "
                        + "%.1f MiB (sum of pool peaks); write %d ms, streamed read %d ms, tar out+in %d ms%n",
                Runtime.getRuntime().maxMemory() >> 20, baseline / 1048576.0, peak / 1048576.0,
                (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000, (t3 - t2) / 1_000_000);
        assertThat(peak).as("peak heap during the transfers").isLessThan(SIZE / 3);
        manager.destroy("large");
    }

    private static long used(List<MemoryPoolMXBean> heap) {
        return heap.stream().mapToLong(p -> p.getUsage().getUsed()).sum();
    }

    private static String sha256(InputStream in) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        try (DigestInputStream d = new DigestInputStream(in, md)) {
            d.transferTo(java.io.OutputStream.nullOutputStream());
        }
        return HexFormat.of().formatHex(md.digest());
    }

    /** Deterministic pseudo-random bytes, generated as read: never held in memory. */
    static final class Generated extends InputStream {
        private long remaining;
        private long state = 0x9E3779B97F4A7C15L;

        Generated(long size) {
            this.remaining = size;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (remaining == 0) {
                return -1;
            }
            int n = (int) Math.min(len, remaining);
            for (int i = 0; i < n; i++) {
                state ^= state << 13;
                state ^= state >>> 7;
                state ^= state << 17;
                b[off + i] = (byte) state;
            }
            remaining -= n;
            return n;
        }
    }
}
