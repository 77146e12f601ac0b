package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.GZIPInputStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(60)
class ArchivePackerTest {
    private final ExecutorService pool = Executors.newCachedThreadPool();
    @TempDir
    Path dir;

    @AfterEach
    void stop() throws InterruptedException {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).as("no packing task left running").isTrue();
    }

    private static byte[] content(int size) {
        byte[] b = new byte[size];
        Random r = new Random(42);
        for (int i = 0; i < size; i++) {
            b[i] = (byte) ('a' + r.nextInt(20)); // compressible, as workdirs are
        }
        return b;
    }

    /** Writes in odd-sized pieces, so chunk boundaries fall anywhere. */
    private static ArchivePacker.TarWriter writer(byte[] data) {
        return out -> {
            int off = 0;
            int step = 1;
            while (off < data.length) {
                int n = Math.min(step, data.length - off);
                if (n == 1) {
                    out.write(data[off]);
                } else {
                    out.write(data, off, n);
                }
                off += n;
                step = step * 3 % 100_003 + 1;
            }
        };
    }

    private static void assertPacked(Path file, ArchivePacker.Packed packed, byte[] data) throws Exception {
        byte[] gz = Files.readAllBytes(file);
        assertThat(packed.bytes()).isEqualTo(gz.length);
        assertThat(packed.sha256()).isEqualTo(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(gz)));
        assertThat(packed.md5()).isEqualTo(HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(gz)));
        try (InputStream in = new GZIPInputStream(Files.newInputStream(file))) {
            assertThat(in.readAllBytes()).isEqualTo(data);
        }
    }

    @Test
    void deflatesOnTheExecutorWhileTheCallerWrites() throws Exception {
        byte[] data = content(5 * ArchivePacker.CHUNK + 12_345);
        Path file = dir.resolve("a.tar.gz");
        AtomicReference<String> deflater = new AtomicReference<>();
        ArchivePacker.Packed packed = ArchivePacker.pack(r -> pool.execute(() -> {
            deflater.set(Thread.currentThread().getName());
            r.run();
        }), file, writer(data));
        assertPacked(file, packed, data);
        assertThat(deflater.get()).isNotNull().isNotEqualTo(Thread.currentThread().getName());
    }

    @Test
    void packsAnEmptyStream() throws Exception {
        Path file = dir.resolve("empty.tar.gz");
        assertPacked(file, ArchivePacker.pack(pool, file, out -> { }), new byte[0]);
    }

    @Test
    void packsAloneWhenTheExecutorRefuses() throws Exception {
        byte[] data = content(3 * ArchivePacker.CHUNK);
        Path file = dir.resolve("b.tar.gz");
        assertPacked(file, ArchivePacker.pack(r -> {
            throw new RejectedExecutionException("full");
        }, file, writer(data)), data);
    }

    @Test
    void packsAloneWhenTheExecutorDoesNotStartTheTask() throws Exception {
        byte[] data = content(3 * ArchivePacker.CHUNK);
        Path file = dir.resolve("c.tar.gz");
        List<Runnable> queued = new ArrayList<>();
        ArchivePacker.Packed packed = ArchivePacker.pack(queued::add, file, writer(data));
        assertPacked(file, packed, data);
        // The task runs late, when a thread frees up: it must leave alone what the caller packed.
        assertThat(queued).hasSize(1);
        queued.get(0).run();
        assertPacked(file, packed, data);
    }

    @Test
    void aWriterFailureIsThrownAsItIsAndStopsTheDeflater() {
        Path file = dir.resolve("d.tar.gz");
        SandboxException notHere = new SandboxException("not on this host", null);
        assertThatThrownBy(() -> ArchivePacker.pack(pool, file, out -> {
            out.write(content(2 * ArchivePacker.CHUNK + 7));
            throw notHere;
        })).isSameAs(notHere);
    }

    @Test
    void aDeflaterFailureIsThrownInsteadOfTheWritersEcho() throws Exception {
        Path full = Path.of("/dev/full"); // every write fails with ENOSPC
        assertThat(Files.exists(full)).isTrue();
        byte[] data = content(40 * ArchivePacker.CHUNK);
        assertThatThrownBy(() -> ArchivePacker.pack(pool, full, writer(data)))
                .isInstanceOf(IOException.class)
                .hasMessageNotContaining("packing stopped");
    }

    @Test
    void aDeflaterFailureAloneIsAnIoException() {
        byte[] data = content(40 * ArchivePacker.CHUNK);
        assertThatThrownBy(() -> ArchivePacker.pack(r -> {
            throw new RejectedExecutionException("full");
        }, Path.of("/dev/full"), writer(data))).isInstanceOf(IOException.class);
    }

    @Test
    void manyPacksInARow() throws Exception {
        byte[] data = content(ArchivePacker.CHUNK * 2 + 1);
        for (int i = 0; i < 50; i++) {
            Path file = dir.resolve("m" + i);
            assertPacked(file, ArchivePacker.pack(pool, file, writer(data)), data);
            Files.delete(file);
        }
    }
}
