package dev.sandboxkit.docker.internal.engine;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.StandardProtocolFamily;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * One HTTP/1.1 connection to the engine over a non-blocking {@link SocketChannel}, so every wait has a
 * deadline (unix-domain channels have no SO_TIMEOUT) and an upgraded exec stream can be read and
 * written at once from the calling thread. Not thread-safe; used by one thread at a time, except
 * {@link #close()}, which may be called from another thread to wake a reader.
 */
public final class EngineConnection implements Closeable {
    /** A deadline that never passes. */
    public static final long NO_DEADLINE = Long.MAX_VALUE;
    static final int BUFFER_SIZE = 64 * 1024;

    private final SocketChannel channel;
    private final Selector selector;
    private final SelectionKey key;
    /** Received, not yet consumed bytes: kept in read mode (position = next byte, limit = end). */
    private final ByteBuffer in = ByteBuffer.allocate(BUFFER_SIZE).flip();
    private ByteBuffer pendingOut;
    private boolean outputShut;
    private long received;

    private EngineConnection(SocketChannel channel, Selector selector, SelectionKey key) {
        this.channel = channel;
        this.selector = selector;
        this.key = key;
    }

    static EngineConnection open(DockerHost host, long deadline) throws IOException {
        SocketChannel ch = host.unix() ? SocketChannel.open(StandardProtocolFamily.UNIX) : SocketChannel.open();
        Selector sel = null;
        try {
            ch.configureBlocking(false);
            sel = Selector.open();
            SelectionKey k = ch.register(sel, 0);
            EngineConnection c = new EngineConnection(ch, sel, k);
            if (!ch.connect(host.address())) {
                k.interestOps(SelectionKey.OP_CONNECT);
                while (!ch.finishConnect()) {
                    c.await(deadline, "connecting");
                }
            }
            if (!host.unix()) {
                ch.socket().setTcpNoDelay(true);
            }
            return c;
        } catch (IOException | RuntimeException e) {
            ch.close();
            if (sel != null) {
                sel.close();
            }
            throw e;
        }
    }

    /**
     * The receive buffer in read mode; consumers advance its position.
     *
     * @return the buffer holding received, unconsumed bytes
     */
    public ByteBuffer buffer() {
        return in;
    }

    /**
     * Whether the engine closed an idle kept-alive connection, or sent something unasked (cheap, non-blocking).
     *
     * @return whether the connection must not be used for another request
     */
    public boolean isStale() {
        if (!channel.isOpen() || in.hasRemaining()) {
            return true;
        }
        try {
            return readSome() != 0;
        } catch (IOException e) {
            return true;
        }
    }

    /**
     * Writes all of {@code bytes}.
     *
     * @param bytes    what to send
     * @param deadline {@link System#nanoTime()} by which it must be written, or {@link #NO_DEADLINE}
     * @throws IOException if the connection fails or the deadline passes
     */
    public void write(byte[] bytes, long deadline) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        while (b.hasRemaining()) {
            checkInterrupt();
            if (channel.write(b) == 0) {
                interest(SelectionKey.OP_WRITE);
                await(deadline, "writing the request");
            }
        }
    }

    /**
     * Reads the status line and headers. Bytes after the head stay in {@link #buffer()}.
     */
    Head readHead(long deadline) throws IOException {
        while (true) {
            int end = headEnd();
            if (end >= 0) {
                byte[] raw = new byte[end - in.position()];
                in.get(raw);
                in.position(in.position() + 4);
                return Head.parse(new String(raw, StandardCharsets.ISO_8859_1));
            }
            if (in.remaining() == in.capacity()) {
                throw new IOException("response head larger than " + BUFFER_SIZE + " bytes");
            }
            more(deadline, "before answering");
        }
    }

    /** Reads a complete body as described by the head. */
    byte[] readBody(Head head, long deadline) throws IOException {
        if (head.status() == 204 || head.status() == 304 || head.status() / 100 == 1) {
            return new byte[0];
        }
        if (head.chunked()) {
            return readChunked(deadline);
        }
        if (head.contentLength() >= 0) {
            return readExactly((int) head.contentLength(), deadline);
        }
        // No length: the body ends when the engine closes the connection.
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        while (true) {
            out.write(in.array(), in.arrayOffset() + in.position(), in.remaining());
            in.position(in.limit());
            int n = fill(deadline);
            if (n < 0) {
                return out.toByteArray();
            }
            if (n == 0) {
                throw new SocketTimeoutException("engine did not finish its answer in time");
            }
        }
    }

    /**
     * Queues bytes to send while {@link #fill} waits for input (exec stdin); once they are all written,
     * the write side is shut down so the process sees EOF.
     */
    void sendThenShutdown(ByteBuffer bytes) {
        this.pendingOut = bytes;
    }

    /**
     * Reads more bytes into {@link #buffer()}, meanwhile writing queued output.
     *
     * @param deadline {@link System#nanoTime()} after which to give up, or {@link #NO_DEADLINE}
     * @return bytes read, {@code -1} at end of stream, {@code 0} when the deadline passed
     * @throws IOException if the connection fails
     */
    public int fill(long deadline) throws IOException {
        if (in.remaining() == in.capacity()) {
            throw new IllegalStateException("receive buffer full: consume it before filling");
        }
        while (true) {
            flushPending();
            int n = readSome();
            if (n != 0) {
                return n;
            }
            long wait = remainingNanos(deadline);
            if (wait <= 0) {
                return 0;
            }
            int ops = SelectionKey.OP_READ;
            if (pendingOut != null) {
                ops |= SelectionKey.OP_WRITE;
            }
            interest(ops);
            select(wait);
        }
    }

    /** Half-closes: the engine forwards EOF to the process's stdin. */
    void shutdownOutput() throws IOException {
        if (!outputShut) {
            outputShut = true;
            pendingOut = null;
            channel.shutdownOutput();
        }
    }

    /** Closes the socket; safe from any thread, wakes a thread blocked in {@link #fill}. */
    @Override
    public void close() {
        try {
            // Closing the selector first wakes a thread blocked in select().
            selector.close();
        } catch (IOException ignored) {
            // nothing left to release
        }
        try {
            channel.close();
        } catch (IOException ignored) {
            // nothing left to release
        }
    }

    /** Bytes received so far; tells whether a failed request got any answer. */
    long received() {
        return received;
    }

    boolean isOpen() {
        return channel.isOpen();
    }

    static long remainingNanos(long deadline) {
        return deadline == NO_DEADLINE ? Long.MAX_VALUE : deadline - System.nanoTime();
    }

    /** Fills, or fails: timeouts and EOF inside a response are errors. */
    private void more(long deadline, String where) throws IOException {
        int n = fill(deadline);
        if (n < 0) {
            throw new EOFException("the engine closed the connection " + where);
        }
        if (n == 0) {
            throw new SocketTimeoutException("engine did not answer in time");
        }
    }

    private void flushPending() throws IOException {
        ByteBuffer out = pendingOut;
        if (out == null) {
            return;
        }
        if (out.hasRemaining()) {
            checkInterrupt();
            try {
                channel.write(out);
            } catch (ClosedByInterruptException e) {
                throw interrupted(e);
            } catch (IOException e) {
                // The process exited without reading all of stdin (EPIPE/ECONNRESET): stop writing,
                // keep reading whatever it printed.
                pendingOut = null;
                return;
            }
        }
        if (!out.hasRemaining()) {
            try {
                shutdownOutput();
            } catch (IOException e) {
                // The engine closed its side already; the read side will say so.
                pendingOut = null;
            }
        }
    }

    private int readSome() throws IOException {
        checkInterrupt();
        in.compact();
        try {
            int n = channel.read(in);
            if (n > 0) {
                received += n;
            }
            return n;
        } catch (ClosedByInterruptException e) {
            throw interrupted(e);
        } finally {
            in.flip();
        }
    }

    private void interest(int ops) throws IOException {
        try {
            key.interestOps(ops);
        } catch (CancelledKeyException e) {
            throw new AsynchronousCloseException();
        }
    }

    private void await(long deadline, String what) throws IOException {
        long wait = remainingNanos(deadline);
        if (wait <= 0) {
            throw new SocketTimeoutException("engine did not answer in time while " + what);
        }
        select(wait);
    }

    private void select(long waitNanos) throws IOException {
        checkInterrupt();
        long millis = waitNanos == Long.MAX_VALUE ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos + 999_999));
        try {
            selector.select(millis);
            selector.selectedKeys().clear();
        } catch (ClosedSelectorException | CancelledKeyException e) {
            // close() from another thread (the sandbox was removed): report it like a closed channel.
            throw new AsynchronousCloseException();
        }
        checkInterrupt();
    }

    private static void checkInterrupt() throws InterruptedIOException {
        // Checked before every channel call: an interrupt during one would close the channel.
        if (Thread.currentThread().isInterrupted()) {
            throw new InterruptedIOException("interrupted");
        }
    }

    private static InterruptedIOException interrupted(Exception cause) {
        InterruptedIOException e = new InterruptedIOException("interrupted");
        e.initCause(cause);
        return e;
    }

    private int headEnd() {
        for (int i = in.position(); i + 3 < in.limit(); i++) {
            if (in.get(i) == '\r' && in.get(i + 1) == '\n' && in.get(i + 2) == '\r' && in.get(i + 3) == '\n') {
                return i;
            }
        }
        return -1;
    }

    private byte[] readExactly(int length, long deadline) throws IOException {
        byte[] body = new byte[length];
        int done = 0;
        while (done < length) {
            if (!in.hasRemaining()) {
                more(deadline, "mid-response");
            }
            int n = Math.min(in.remaining(), length - done);
            in.get(body, done, n);
            done += n;
        }
        return body;
    }

    private byte[] readChunked(long deadline) throws IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        while (true) {
            String sizeLine = readLine(deadline);
            int semi = sizeLine.indexOf(';');
            int size = Integer.parseInt((semi >= 0 ? sizeLine.substring(0, semi) : sizeLine).trim(), 16);
            if (size == 0) {
                // Trailers, then the empty line.
                while (!readLine(deadline).isEmpty()) {
                    // skip
                }
                return out.toByteArray();
            }
            out.write(readExactly(size, deadline));
            readLine(deadline);
        }
    }

    private String readLine(long deadline) throws IOException {
        StringBuilder line = new StringBuilder();
        while (true) {
            if (!in.hasRemaining()) {
                more(deadline, "mid-response");
            }
            byte b = in.get();
            if (b == '\n') {
                int len = line.length();
                return len > 0 && line.charAt(len - 1) == '\r' ? line.substring(0, len - 1) : line.toString();
            }
            line.append((char) (b & 0xff));
        }
    }

    /**
     * A response's status line and the headers this client cares about.
     *
     * @param status        HTTP status
     * @param contentLength Content-Length, or -1
     * @param chunked       whether the body is chunked
     * @param keepAlive     whether the connection may be reused
     * @param apiVersion    the Api-Version header, or {@code null}
     */
    record Head(int status, long contentLength, boolean chunked, boolean keepAlive, String apiVersion) {
        static Head parse(String head) throws IOException {
            String[] lines = head.split("\r\n");
            String[] statusLine = lines[0].split(" ", 3);
            if (statusLine.length < 2 || !statusLine[0].startsWith("HTTP/1.")) {
                throw new IOException("not an HTTP response: " + lines[0]);
            }
            int status;
            try {
                status = Integer.parseInt(statusLine[1]);
            } catch (NumberFormatException e) {
                throw new IOException("bad HTTP status line: " + lines[0], e);
            }
            long length = -1;
            boolean chunked = false;
            boolean keepAlive = !statusLine[0].equals("HTTP/1.0");
            String api = null;
            for (int i = 1; i < lines.length; i++) {
                int colon = lines[i].indexOf(':');
                if (colon <= 0) {
                    continue;
                }
                String name = lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT);
                String value = lines[i].substring(colon + 1).trim();
                switch (name) {
                    case "content-length" -> length = Long.parseLong(value);
                    case "transfer-encoding" -> chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
                    case "connection" -> keepAlive = keepAlive && !value.equalsIgnoreCase("close");
                    case "api-version" -> api = value;
                    default -> {
                    }
                }
            }
            if (!chunked && length < 0 && status != 204 && status != 304 && status / 100 != 1) {
                keepAlive = false;
            }
            return new Head(status, length, chunked, keepAlive, api);
        }
    }
}
