package dev.sandboxkit.internal;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.GZIPOutputStream;

/**
 * Packs a tar stream into a gzip file with its SHA-256 and MD5, on two threads where it can: the caller's thread
 * writes the tar (the driver's walk), a task on the manager's I/O executor deflates, hashes and writes the file.
 * Deflate is most of the cost, and {@code tar | gzip} overlaps it with the walk the same way (two processes).
 * When the executor refuses the task or does not start it promptly (a full pool the caller supplied), everything
 * runs on the caller's thread instead.
 */
final class ArchivePacker {
    /** What was packed: the file's size and digests (lowercase hex). */
    record Packed(long bytes, String sha256, String md5) {
        Packed {
            Objects.requireNonNull(sha256, "sha256");
            Objects.requireNonNull(md5, "md5");
        }
    }

    /** Writes a tar stream; the stream is not closed by it. */
    @FunctionalInterface
    interface TarWriter {
        void writeTo(OutputStream tar) throws IOException;
    }

    static final int CHUNK = 1 << 18;
    private static final int IN_FLIGHT = 8;
    private static final long START_WAIT_MILLIS = 200;
    private static final Chunk END = new Chunk(new byte[0], 0);

    private ArchivePacker() {
    }

    /**
     * Packs what {@code tar} writes into {@code file} (replaced). A failure of the writer is thrown as it is
     * (after the deflating task has stopped); a failure of deflating or writing the file is an IOException.
     */
    static Packed pack(Executor io, Path file, TarWriter tar) throws IOException {
        Pipe pipe = new Pipe();
        Sink sink = new Sink(file);
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        AtomicBoolean claimed = new AtomicBoolean();
        IOException[] failed = new IOException[1];
        Runnable deflate = () -> {
            if (!claimed.compareAndSet(false, true)) {
                return; // came too late: the caller packs alone
            }
            started.countDown();
            try (InputStream in = pipe.source()) {
                in.transferTo(sink.gzip);
                sink.finish();
            } catch (IOException | RuntimeException e) {
                if (!pipe.aborted) { // not just the echo of the writer's own failure
                    failed[0] = e instanceof IOException io1 ? io1 : new IOException(e.toString(), e);
                }
                pipe.readerGone();
            } finally {
                done.countDown();
            }
        };
        boolean twoThreads;
        try {
            io.execute(deflate);
            twoThreads = awaitStart(started) || !claimed.compareAndSet(false, true);
        } catch (RejectedExecutionException refused) {
            twoThreads = false;
        }
        try {
            if (twoThreads) {
                try {
                    tar.writeTo(pipe.sink());
                    pipe.close();
                } catch (IOException | RuntimeException e) {
                    pipe.abort();
                    awaitQuietly(done);
                    if (failed[0] != null) {
                        throw failed[0]; // the writer only saw the pipe close: the cause is on the other side
                    }
                    throw e;
                }
                awaitQuietly(done);
                if (failed[0] != null) {
                    throw failed[0];
                }
            } else {
                tar.writeTo(sink.gzip);
                sink.finish();
            }
            sink.close();
            return new Packed(Files.size(file), sink.hex(sink.sha256), sink.hex(sink.md5));
        } finally {
            sink.closeQuietly();
        }
    }

    private static boolean awaitStart(CountDownLatch started) {
        try {
            return started.await(START_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Waits for the deflating task; it never blocks for long once the pipe is closed or aborted. */
    private static void awaitQuietly(CountDownLatch done) {
        boolean interrupted = false;
        while (true) {
            try {
                done.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private static MessageDigest digest(String algorithm) {
        try {
            return MessageDigest.getInstance(algorithm);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has " + algorithm, e);
        }
    }

    /** The file end: gzip, then both digests over the compressed bytes. */
    private static final class Sink {
        final MessageDigest sha256 = digest("SHA-256");
        final MessageDigest md5 = digest("MD5");
        private final DigestOutputStream digests;
        final GZIPOutputStream gzip;
        private boolean closed;

        Sink(Path path) throws IOException {
            this.digests = new DigestOutputStream(new DigestOutputStream(
                    new BufferedOutputStream(Files.newOutputStream(path), 1 << 16), md5), sha256);
            this.gzip = new GZIPOutputStream(digests, 1 << 16);
        }

        void finish() throws IOException {
            gzip.finish();
            digests.flush();
        }

        String hex(MessageDigest d) {
            return HexFormat.of().formatHex(d.digest());
        }

        void close() throws IOException {
            if (!closed) {
                closed = true;
                gzip.close(); // ends the deflater's native memory and closes the file
            }
        }

        void closeQuietly() {
            try {
                close();
            } catch (IOException ignored) {
                // a failed pack: its file is deleted
            }
        }
    }

    private record Chunk(byte[] data, int length) {
    }

    /** A bounded hand-off of chunks from one writing thread to one reading thread. */
    static final class Pipe {
        private final BlockingQueue<Chunk> full = new ArrayBlockingQueue<>(IN_FLIGHT + 1);
        private final BlockingQueue<byte[]> free = new ArrayBlockingQueue<>(IN_FLIGHT + 2);
        private volatile boolean readerGone;
        volatile boolean aborted;
        private byte[] buffer = new byte[CHUNK];
        private int filled;

        OutputStream sink() {
            return new OutputStream() {
                @Override
                public void write(int b) throws IOException {
                    write(new byte[] {(byte) b}, 0, 1);
                }

                @Override
                public void write(byte[] b, int off, int len) throws IOException {
                    Objects.checkFromIndexSize(off, len, b.length);
                    while (len > 0) {
                        int n = Math.min(len, buffer.length - filled);
                        System.arraycopy(b, off, buffer, filled, n);
                        filled += n;
                        off += n;
                        len -= n;
                        if (filled == buffer.length) {
                            handOn();
                        }
                    }
                }
            };
        }

        private void handOn() throws IOException {
            put(new Chunk(buffer, filled));
            byte[] next = free.poll();
            buffer = next != null ? next : new byte[CHUNK];
            filled = 0;
        }

        void close() throws IOException {
            if (filled > 0) {
                handOn();
            }
            put(END);
        }

        /** The writer failed: the reader stops at the next chunk, without finishing the file. */
        void abort() {
            aborted = true;
            full.clear();
            full.offer(END);
        }

        void readerGone() {
            readerGone = true;
            full.clear();
        }

        private void put(Chunk c) throws IOException {
            try {
                while (!full.offer(c, 50, TimeUnit.MILLISECONDS)) {
                    if (readerGone) {
                        throw new IOException("packing stopped: the deflating side failed");
                    }
                }
                if (readerGone) {
                    throw new IOException("packing stopped: the deflating side failed");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while packing");
            }
        }

        InputStream source() {
            return new InputStream() {
                private Chunk current;
                private int pos;

                @Override
                public int read() throws IOException {
                    byte[] one = new byte[1];
                    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    Objects.checkFromIndexSize(off, len, b.length);
                    if (len == 0) {
                        return 0;
                    }
                    if ((current == null || pos == current.length()) && !advance()) {
                        return -1;
                    }
                    int n = Math.min(len, current.length() - pos);
                    System.arraycopy(current.data(), pos, b, off, n);
                    pos += n;
                    return n;
                }

                @Override
                public long transferTo(OutputStream out) throws IOException {
                    long total = 0;
                    while ((current != null && pos < current.length()) || advance()) {
                        out.write(current.data(), pos, current.length() - pos); // whole chunks, no copy
                        total += current.length() - pos;
                        pos = current.length();
                    }
                    return total;
                }

                /** Moves on to the next chunk, recycling this one; false at the end. */
                private boolean advance() throws IOException {
                    if (current == END) {
                        return false;
                    }
                    if (current != null) {
                        free.offer(current.data());
                    }
                    current = take();
                    pos = 0;
                    if (current == END && aborted) {
                        throw new IOException("packing aborted by the tar writer");
                    }
                    return current != END;
                }

                private Chunk take() throws IOException {
                    try {
                        return full.take();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new InterruptedIOException("interrupted while packing");
                    }
                }
            };
        }
    }
}
