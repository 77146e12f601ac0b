package dev.sandboxkit.docker.internal.engine;

import dev.sandboxkit.SandboxExecException;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * One HTTP/1.1 connection to the engine over a non-blocking {@link SocketChannel}, so every wait has a
 * deadline (unix-domain channels have no SO_TIMEOUT) and an upgraded exec stream can be read and
 * written at once from the calling thread. Not thread-safe; used by one thread at a time, except
 * {@link #close()}, which may be called from another thread to wake a reader.
 *
 * <h2>Limits</h2>
 * The engine is trusted to be the engine, not to be well-formed: the endpoint may be a broken proxy, another
 * service, or hostile. So the response parser holds every answer to fixed limits, all far above what a Docker
 * engine sends this client (small JSON answers, a few short headers):
 * <ul>
 *   <li>a status line, header line, chunk-size line or trailer line: {@value #MAX_LINE_BYTES} bytes;</li>
 *   <li>header fields: {@value #MAX_HEADER_FIELDS}, and as many trailer fields;</li>
 *   <li>the head (status line and headers): {@value #MAX_HEAD_BYTES} bytes;</li>
 *   <li>a body read into memory: {@value #MAX_BODY_BYTES} bytes, whether it has a Content-Length, is chunked
 *       (chunk framing and trailers count, so an endless stream of tiny chunks is bounded too) or runs to the
 *       end of the connection. The largest real answer is an exec inspect, which echoes the command's
 *       arguments: containerd refuses execs over 4 MiB, so 16 MiB leaves room for the JSON escaping.</li>
 * </ul>
 * Content-Length is parsed as a {@code long} of decimal digits only (a sign, a list, two different values, a
 * value beyond a long are refused) and a chunk size as hexadecimal digits with the limit checked at each digit,
 * so no value can overflow or be cut by a cast. A body is held in blocks as its bytes arrive, never in an
 * array sized by what the answer claims.
 *
 * <h2>TLS</h2>
 * For a TLS engine the same calls go through a {@link TlsWire} (an {@code SSLEngine}) after a handshake under the
 * connection's deadline; everything above (deadlines, limits, stdin then half-close) is unchanged. A TLS failure
 * is an {@link javax.net.ssl.SSLException}, which {@link DockerHost#unreachable} turns into a
 * {@link dev.sandboxkit.docker.DockerTlsException}.
 *
 * <p>An answer that breaks HTTP or a limit, or ends before it is complete, is a
 * {@link SandboxExecException} naming the engine, thrown at once: the endpoint answered, so it is not
 * unreachable, retrying will not make it well-formed, and the request may have been carried out. Failures to connect, resets, timeouts and an end of stream before any byte of
 * the answer stay {@link IOException}s: the callers map them to
 * {@link dev.sandboxkit.SandboxUnavailableException}, and an idle pooled connection the engine dropped is
 * retried once.
 */
public final class EngineConnection implements Closeable {
    /** A deadline that never passes. */
    public static final long NO_DEADLINE = Long.MAX_VALUE;
    static final int BUFFER_SIZE = 64 * 1024;
    /**
     * The receive buffer of an idle connection: enough to notice that the engine closed it or sent something
     * unasked ({@link #isStale}). A busy one gets {@link #BUFFER_SIZE} again on its next {@link #fill}.
     */
    private static final int IDLE_BUFFER_SIZE = 64;
    /** Longest status, header, chunk-size or trailer line, without its CRLF. */
    static final int MAX_LINE_BYTES = 8 * 1024;
    /** Most header fields in a head, and most trailer fields after a chunked body. */
    static final int MAX_HEADER_FIELDS = 100;
    /** Largest head: status line and header lines with their CRLFs. */
    static final int MAX_HEAD_BYTES = 64 * 1024;
    /** Largest body read into memory, counted on the wire (chunk framing included). */
    static final int MAX_BODY_BYTES = 16 * 1024 * 1024;

    private final DockerHost host;
    private final SocketChannel channel;
    /** TLS on the channel, or {@code null} for a plain connection. */
    private TlsWire tls;
    private final Selector selector;
    private final SelectionKey key;
    /**
     * Received, not yet consumed bytes: kept in read mode (position = next byte, limit = end). Full size while
     * the connection is in use, {@link #IDLE_BUFFER_SIZE} while it idles (see {@link #shrink}).
     */
    private ByteBuffer in = ByteBuffer.allocate(IDLE_BUFFER_SIZE).flip();
    /** Whether the latest read left free space in {@link #in}: the socket was probably empty after it. */
    private boolean drained;
    private ByteBuffer pendingOut;
    /** Whether the write side is shut down once {@link #pendingOut} is sent (not on a terminal: see {@link #send}). */
    private boolean shutdownAfterPending;
    private boolean outputShut;
    private long received;
    /** Set once the connection serves a terminal: closing the connection must wake its threads too. */
    private volatile DuplexStream duplex;
    /** Parses the answers that arrive here. */
    private final ResponseReader reader = new ResponseReader(this);

    private EngineConnection(DockerHost host, SocketChannel channel, Selector selector, SelectionKey key) {
        this.host = host;
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
            EngineConnection c = new EngineConnection(host, ch, sel, k);
            if (!ch.connect(host.address())) {
                k.interestOps(SelectionKey.OP_CONNECT);
                while (!ch.finishConnect()) {
                    c.await(deadline, "connecting");
                }
            }
            if (!host.unix()) {
                ch.socket().setTcpNoDelay(true);
            }
            if (host.tls() != null) {
                c.tls = new TlsWire(host.tls().newEngine(host.uri().getHost(), host.port()), ch);
                int wait;
                while ((wait = c.tls.handshake()) != 0) {
                    c.interest(wait);
                    c.await(deadline, "in the TLS handshake");
                }
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
     * Why a TLS engine refuses this client, found by a fresh ping that reads the engine's alert even when sending
     * the request failed (the engine hangs up right after its alert). Only failure paths call this.
     *
     * @return the engine's TLS refusal, or {@code null} if the ping shows none
     */
    static javax.net.ssl.SSLException tlsRefusal(DockerHost host) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        try (EngineConnection c = open(host, deadline)) {
            try {
                c.write("GET /_ping HTTP/1.1\r\nHost: docker\r\n\r\n".getBytes(StandardCharsets.US_ASCII), deadline);
            } catch (javax.net.ssl.SSLException e) {
                return e;
            } catch (IOException e) {
                // broken pipe: the alert may be waiting in the receive queue
            }
            c.readHead(deadline);
            return null;
        } catch (IOException | RuntimeException e) {
            return EngineTls.sslCause(e);
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
        while (b.hasRemaining() || (tls != null && !tls.flush())) {
            checkInterrupt();
            if (!b.hasRemaining() || send(b) == 0) {
                interest(SelectionKey.OP_WRITE);
                await(deadline, "writing the request");
            }
        }
    }

    private int send(ByteBuffer b) throws IOException {
        return tls == null ? channel.write(b) : tls.write(b);
    }

    /**
     * Reads the status line and headers (see {@link ResponseReader}). Bytes after the head stay in {@link #buffer()}.
     *
     * @throws SandboxExecException if the head breaks HTTP or a limit, or the connection ends inside it
     * @throws IOException          if the connection fails, the deadline passes, or it ends before any byte
     */
    Head readHead(long deadline) throws IOException {
        return reader.readHead(deadline);
    }

    /**
     * Reads a complete body as described by the head, at most {@value #MAX_BODY_BYTES} bytes.
     *
     * @throws SandboxExecException if the body breaks HTTP or the limit, or the connection ends inside it
     * @throws IOException          if the connection fails or the deadline passes
     */
    byte[] readBody(Head head, long deadline) throws IOException {
        return reader.readBody(head, deadline);
    }

    /**
     * The first {@code max} bytes of the body, or all of it if shorter (de-chunked); the rest is left unread.
     *
     * @throws SandboxExecException if the body breaks HTTP, or the connection ends inside a declared length
     * @throws IOException          if the connection fails or the deadline passes
     */
    byte[] readBodyPrefix(Head head, int max, long deadline) throws IOException {
        return reader.readBodyPrefix(head, max, deadline);
    }

    /**
     * Queues bytes to send while {@link #fill} waits for input (exec stdin); once they are all written,
     * the write side is shut down so the process sees EOF.
     */
    void sendThenShutdown(ByteBuffer bytes) {
        this.pendingOut = bytes;
        this.shutdownAfterPending = true;
    }

    /**
     * Queues bytes to send while {@link #fill} waits for input, keeping the write side open: on a terminal the
     * engine would take a half-close for a detach and end the output too.
     */
    void sendKeepOpen(ByteBuffer bytes) {
        this.pendingOut = bytes;
        this.shutdownAfterPending = false;
    }

    /**
     * Reads more bytes into {@link #buffer()}, meanwhile writing queued output.
     *
     * @param deadline {@link System#nanoTime()} after which to give up, or {@link #NO_DEADLINE}
     * @return bytes read, {@code -1} at end of stream, {@code 0} when the deadline passed
     * @throws IOException if the connection fails
     */
    public int fill(long deadline) throws IOException {
        if (in.capacity() < BUFFER_SIZE) {
            in = ByteBuffer.allocate(BUFFER_SIZE).put(in).flip();
        }
        if (in.remaining() == in.capacity()) {
            throw new IllegalStateException("receive buffer full: consume it before filling");
        }
        // After a read that left room in the buffer the socket was empty, and a read now would almost always
        // find nothing (bulk output arrives in the engine's 32 KiB writes or smaller): wait first, saving one
        // syscall per received piece. Not over TLS, where decrypted bytes may wait inside the TlsWire.
        boolean waitFirst = drained && tls == null && pendingOut == null && remainingNanos(deadline) > 0;
        while (true) {
            if (!waitFirst) {
                flushPending();
                int n = readSome();
                if (n != 0) {
                    return n;
                }
            }
            waitFirst = false;
            long wait = remainingNanos(deadline);
            if (wait <= 0) {
                return 0;
            }
            int ops = SelectionKey.OP_READ;
            if (pendingOut != null || (tls != null && tls.wantsWrite())) {
                ops |= SelectionKey.OP_WRITE;
            }
            interest(ops);
            select(wait);
        }
    }

    /**
     * Gives back the memory of a connection that waits for its next use (a pooled one, an idle command
     * channel): the receive buffer shrinks to {@value #IDLE_BUFFER_SIZE} bytes and the line buffer goes. Does
     * nothing while unconsumed bytes are buffered.
     */
    public void shrink() {
        if (!in.hasRemaining() && in.capacity() > IDLE_BUFFER_SIZE) {
            in = ByteBuffer.allocate(IDLE_BUFFER_SIZE).flip();
        }
        reader.dropLine();
    }

    /** Half-closes: the engine forwards EOF to the process's stdin. */
    void shutdownOutput() throws IOException {
        if (!outputShut) {
            outputShut = true;
            pendingOut = null;
            channel.shutdownOutput();
        }
    }

    /** Closes the socket; safe from any thread, wakes a thread blocked in {@link #fill} or in its duplex stream. */
    @Override
    public void close() {
        DuplexStream d = duplex;
        if (d != null) {
            d.closeSelectors();
        }
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

    // ------------------------------------------------------------ duplex use (terminals, forwarded ports)

    /**
     * Turns this upgraded connection into a stream that one thread may read while another writes (a terminal, a
     * forwarded port).
     * This connection must not be used directly afterwards; closing either closes both.
     */
    DuplexStream duplex() throws IOException {
        DuplexStream d = new DuplexStream(this, channel, tls, in);
        duplex = d;
        if (!channel.isOpen()) {
            d.closeSelectors(); // closed meanwhile (the container is being removed)
        }
        return d;
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

    /**
     * Fills, or fails: a timeout is an {@link IOException}; an end of stream inside the answer ({@code inside}
     * names where) is a violation, before it ({@code inside == null}) an {@link EOFException}.
     */
    void more(long deadline, String inside) throws IOException {
        int n = fill(deadline);
        if (n < 0) {
            if (inside == null) {
                throw new EOFException("the engine closed the connection before answering");
            }
            throw violation("it closed the connection inside the " + inside);
        }
        if (n == 0) {
            throw new SocketTimeoutException("engine did not answer in time");
        }
    }

    /** The exception for an answer that breaks HTTP or a limit: thrown at once, the connection is not reused. */
    SandboxExecException violation(String what) {
        return new SandboxExecException("the Docker engine at " + host + " sent a malformed answer: " + what);
    }

    private void flushPending() throws IOException {
        ByteBuffer out = pendingOut;
        if (tls != null && tls.wantsWrite()) {
            try {
                if (!tls.flush()) {
                    return; // the socket is full: the rest once it is writable
                }
            } catch (IOException e) {
                // As below: stop writing, keep reading what the process printed.
                tls.dropPending();
                pendingOut = null;
                return;
            }
        }
        if (out == null) {
            return;
        }
        if (out.hasRemaining()) {
            checkInterrupt();
            try {
                send(out);
            } catch (ClosedByInterruptException e) {
                throw interrupted(e);
            } catch (IOException e) {
                // The process exited without reading all of stdin (EPIPE/ECONNRESET): stop writing,
                // keep reading whatever it printed.
                pendingOut = null;
                if (tls != null) {
                    tls.dropPending();
                }
                return;
            }
        }
        if (!out.hasRemaining() && (tls == null || !tls.wantsWrite())) {
            if (!shutdownAfterPending) {
                pendingOut = null;
                return;
            }
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
            int space = in.remaining();
            int n = tls == null ? channel.read(in) : tls.read(in);
            if (n > 0) {
                received += n;
            }
            drained = n < space;
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

    /**
     * A response's status line and the headers this client cares about.
     *
     * @param status        HTTP status
     * @param contentLength Content-Length, or -1
     * @param chunked       whether the body is chunked
     * @param keepAlive     whether the connection may be reused
     * @param apiVersion    the Api-Version header, or {@code null}
     */
    record Head(int status, long contentLength, boolean chunked, boolean keepAlive, String apiVersion,
            String pathStat) {
    }
}
