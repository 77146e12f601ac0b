package dev.sandboxkit.docker.internal.engine;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * TLS over {@link EngineConnection}'s non-blocking channel, with an {@link SSLEngine}: the same read and write
 * calls as the plain channel (0 = try again once the selector says so), so the connection keeps its deadlines
 * and its read-while-writing exec stream. Not thread-safe, like the connection.
 *
 * <p>Half-close (stdin EOF for an exec) is a TCP half-close without {@code close_notify}, as the docker CLI does
 * over TLS: the engine reads it as the end of stdin and keeps writing the output.
 */
final class TlsWire {
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final SSLEngine engine;
    private final SocketChannel channel;
    /** Encrypted bytes received and not yet unwrapped; read mode. */
    private ByteBuffer netIn;
    /** Encrypted bytes to send; read mode. */
    private ByteBuffer netOut;
    /** Decrypted bytes not yet handed to the reader; read mode. */
    private ByteBuffer appIn;
    private boolean eof;

    TlsWire(SSLEngine engine, SocketChannel channel) throws SSLException {
        engine.beginHandshake(); // else the status reads NOT_HANDSHAKING until the first wrap
        this.engine = engine;
        this.channel = channel;
        int packet = engine.getSession().getPacketBufferSize();
        this.netIn = ByteBuffer.allocate(packet).flip();
        this.netOut = ByteBuffer.allocate(packet).flip();
        this.appIn = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize()).flip();
    }

    /**
     * Advances the handshake as far as it goes without blocking.
     *
     * @return the selector interest to wait for, or 0 once the handshake is done and sent
     */
    int handshake() throws IOException {
        while (true) {
            if (netOut.hasRemaining() && !flush()) {
                return SelectionKey.OP_WRITE;
            }
            switch (engine.getHandshakeStatus()) {
                case NEED_TASK -> runTasks();
                case NEED_WRAP -> wrap(EMPTY);
                case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
                    if (!unwrap()) {
                        int n = readNet();
                        if (n < 0) {
                            throw new SSLHandshakeException("the engine closed the connection during the TLS handshake"
                                    + " (is it a TLS endpoint, and does it accept this client?)");
                        }
                        if (n == 0) {
                            return SelectionKey.OP_READ;
                        }
                    }
                }
                default -> {
                    return netOut.hasRemaining() ? SelectionKey.OP_WRITE : 0;
                }
            }
        }
    }

    /**
     * Reads decrypted bytes into {@code dst} (write mode).
     *
     * @return bytes read, 0 if none are available yet, -1 at the end of the stream
     */
    int read(ByteBuffer dst) throws IOException {
        while (true) {
            if (appIn.hasRemaining()) {
                int n = Math.min(appIn.remaining(), dst.remaining());
                ByteBuffer slice = appIn.slice();
                slice.limit(n);
                dst.put(slice);
                appIn.position(appIn.position() + n);
                return n;
            }
            if (eof) {
                return -1;
            }
            if (netOut.hasRemaining()) {
                flush(); // a handshake message (key update, say) may be waiting
            }
            if (unwrap()) {
                if (engine.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_WRAP) {
                    wrap(EMPTY); // a post-handshake answer (TLS 1.3 key update)
                    flush();
                }
                continue;
            }
            int n = readNet();
            if (n < 0) {
                eof = true;
                try {
                    engine.closeInbound();
                } catch (SSLException truncated) {
                    // no close_notify before the TCP end: the HTTP framing tells whether the answer was complete
                }
                continue; // eof: the loop's top hands out what is left, then -1
            }
            if (n == 0) {
                return 0;
            }
        }
    }

    /**
     * Encrypts and sends as much of {@code src} as the socket takes now.
     *
     * @return bytes of {@code src} consumed (0: wait until the socket is writable)
     */
    int write(ByteBuffer src) throws IOException {
        if (!flush()) {
            return 0;
        }
        int before = src.remaining();
        wrap(src);
        flush();
        return before - src.remaining();
    }

    /** Sends pending encrypted bytes; whether all are sent. */
    boolean flush() throws IOException {
        while (netOut.hasRemaining()) {
            if (channel.write(netOut) == 0) {
                return false;
            }
        }
        return true;
    }

    /** Forgets encrypted bytes not sent yet: after a failed write, nothing more will be sent. */
    void dropPending() {
        netOut.position(netOut.limit());
    }

    /** Whether encrypted bytes wait to be sent. */
    boolean wantsWrite() {
        return netOut.hasRemaining();
    }

    /** Unwraps one record if a whole one is buffered; whether anything was consumed or produced. */
    private boolean unwrap() throws IOException {
        if (!netIn.hasRemaining()) {
            return false;
        }
        while (true) {
            appIn.compact();
            SSLEngineResult r;
            try {
                r = engine.unwrap(netIn, appIn);
            } finally {
                appIn.flip();
            }
            switch (r.getStatus()) {
                case BUFFER_OVERFLOW -> appIn = grow(appIn, engine.getSession().getApplicationBufferSize());
                case BUFFER_UNDERFLOW -> {
                    int packet = engine.getSession().getPacketBufferSize();
                    if (netIn.capacity() < packet) {
                        netIn = grow(netIn, packet);
                    }
                    return false;
                }
                case CLOSED -> {
                    eof = true; // close_notify
                    return true;
                }
                default -> {
                    afterOperation(r);
                    return r.bytesConsumed() > 0 || r.bytesProduced() > 0;
                }
            }
        }
    }

    private void wrap(ByteBuffer src) throws IOException {
        while (true) {
            netOut.compact();
            SSLEngineResult r;
            try {
                r = engine.wrap(src, netOut);
            } finally {
                netOut.flip();
            }
            switch (r.getStatus()) {
                case BUFFER_OVERFLOW -> netOut = grow(netOut, engine.getSession().getPacketBufferSize());
                case CLOSED -> throw new ClosedChannelException();
                default -> {
                    afterOperation(r);
                    return;
                }
            }
        }
    }

    private void afterOperation(SSLEngineResult r) {
        if (r.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_TASK) {
            runTasks();
        }
    }

    private void runTasks() {
        Runnable task;
        while ((task = engine.getDelegatedTask()) != null) {
            task.run(); // certificate checks: short, and on the caller's thread like every other wait here
        }
    }

    private int readNet() throws IOException {
        netIn.compact();
        try {
            return channel.read(netIn);
        } finally {
            netIn.flip();
        }
    }

    /** A larger buffer in read mode with the same unread bytes. */
    private static ByteBuffer grow(ByteBuffer b, int atLeast) {
        ByteBuffer bigger = ByteBuffer.allocate(Math.max(atLeast, b.capacity()) + b.remaining());
        bigger.put(b).flip();
        return bigger;
    }
}
