package dev.sandboxkit.docker.internal.engine;

import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An upgraded exec connection used by two threads at once: one reads (a terminal's output, a forwarded port's
 * answer), one writes (its input). {@link EngineConnection} is for one thread; here each direction has a selector of its own on the same
 * non-blocking channel, so that a reader waiting for output never holds up a writer, and both keep deadlines and
 * interrupts without closing the channel (an interrupt is checked before each channel call, never during one).
 * Over TLS the {@link TlsWire} is shared, so its non-blocking calls run under one lock, never a wait.
 * {@link #close()} may be called from any thread and wakes both.
 */
final class DuplexStream implements Closeable {
    private final EngineConnection connection;
    private final SocketChannel channel;
    private final TlsWire tls;
    /** What the connection had received after the response head: handed out first. */
    private final ByteBuffer leftover;
    private final Selector readable;
    private final Selector writable;
    private final ReentrantLock wire = new ReentrantLock();
    private volatile boolean closed;

    DuplexStream(EngineConnection connection, SocketChannel channel, TlsWire tls, ByteBuffer leftover)
            throws IOException {
        this.connection = connection;
        this.channel = channel;
        this.tls = tls;
        this.leftover = leftover;
        Selector r = Selector.open();
        Selector w = null;
        try {
            w = Selector.open();
            channel.register(r, SelectionKey.OP_READ);
            channel.register(w, SelectionKey.OP_WRITE);
        } catch (IOException | RuntimeException e) {
            r.close();
            if (w != null) {
                w.close();
            }
            connection.close();
            throw e;
        }
        this.readable = r;
        this.writable = w;
    }

    /**
     * Reads some bytes, waiting up to the deadline for the first.
     *
     * @return bytes read, -1 at the end of the stream (or once closed), 0 if the deadline passed
     * @throws InterruptedIOException if the thread is interrupted; the stream stays open
     */
    int read(byte[] b, int off, int len, long deadline) throws IOException {
        if (len == 0) {
            return 0;
        }
        synchronized (leftover) {
            if (leftover.hasRemaining()) {
                int n = Math.min(len, leftover.remaining());
                leftover.get(b, off, n);
                return n;
            }
        }
        ByteBuffer dst = ByteBuffer.wrap(b, off, len);
        while (true) {
            if (closed) {
                return -1;
            }
            checkInterrupt();
            int n;
            try {
                n = readNow(dst);
            } catch (IOException e) {
                if (closed) {
                    return -1;
                }
                throw e;
            }
            if (n != 0) {
                return n;
            }
            long wait = EngineConnection.remainingNanos(deadline);
            if (wait <= 0) {
                return 0;
            }
            if (!await(readable, wait)) {
                return -1;
            }
        }
    }

    /**
     * Writes all of {@code b[off, off + len)}, waiting as long as the program does not read.
     *
     * @throws InterruptedIOException if the thread is interrupted; what was written stays written
     * @throws IOException            if the stream is closed or broken
     */
    void write(byte[] b, int off, int len) throws IOException {
        ByteBuffer src = ByteBuffer.wrap(b, off, len);
        while (true) {
            if (closed) {
                throw new IOException("the stream is closed");
            }
            checkInterrupt();
            if (writeNow(src)) {
                return;
            }
            if (!await(writable, Long.MAX_VALUE)) {
                throw new IOException("the stream is closed");
            }
        }
    }

    /**
     * Half-closes: the exec's stdin reads end of file, while the reader goes on.
     *
     * @throws IOException if the connection is broken
     */
    void shutdownOutput() throws IOException {
        wire.lock();
        try {
            if (tls != null && tls.wantsWrite()) {
                tls.flush();
            }
            connection.shutdownOutput();
        } finally {
            wire.unlock();
        }
    }

    private int readNow(ByteBuffer dst) throws IOException {
        if (tls == null) {
            return channel.read(dst);
        }
        wire.lock();
        try {
            int n = tls.read(dst);
            if (tls.wantsWrite()) {
                tls.flush(); // a record the read produced (a key update, say): best effort, the writer retries
            }
            return n;
        } finally {
            wire.unlock();
        }
    }

    /** Sends what the socket takes now; whether everything (TLS records included) is sent. */
    private boolean writeNow(ByteBuffer src) throws IOException {
        if (tls == null) {
            channel.write(src);
            return !src.hasRemaining();
        }
        wire.lock();
        try {
            if (src.hasRemaining()) {
                tls.write(src);
            }
            return !src.hasRemaining() && tls.flush();
        } finally {
            wire.unlock();
        }
    }

    /** Waits until the selector's direction is ready or the time passed; false once closed. */
    private boolean await(Selector selector, long waitNanos) throws IOException {
        long millis = waitNanos == Long.MAX_VALUE ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos + 999_999));
        try {
            selector.select(millis);
            selector.selectedKeys().clear();
        } catch (ClosedSelectorException e) {
            return false;
        }
        checkInterrupt();
        return !closed;
    }

    private static void checkInterrupt() throws InterruptedIOException {
        if (Thread.currentThread().isInterrupted()) {
            throw new InterruptedIOException("interrupted");
        }
    }

    boolean isClosed() {
        return closed;
    }

    /** Closes the connection; wakes a blocked reader (it sees the end) and writer (it fails). */
    @Override
    public void close() {
        closeSelectors();
        connection.close();
    }

    /** Ends the stream for both threads: their selectors close, which wakes them. */
    void closeSelectors() {
        closed = true;
        try {
            readable.close();
        } catch (IOException ignored) {
            // nothing left to release
        }
        try {
            writable.close();
        } catch (IOException ignored) {
            // nothing left to release
        }
    }
}
