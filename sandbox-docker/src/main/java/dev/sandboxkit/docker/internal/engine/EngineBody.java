package dev.sandboxkit.docker.internal.engine;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;

/**
 * A response body read as it arrives (an archive, a pull's progress), for answers too large to hold in memory:
 * de-chunked, or up to its Content-Length, or to the end of the connection. Each read waits at most
 * {@code idleNanos} for the engine's next bytes, and none past the body's own deadline (if it has one). Owns the connection and closes it on {@link #close()} (or at the
 * end of the body); it is never reused. A broken body is an {@link IOException}, as any failed read of a stream.
 * Not thread-safe.
 */
final class EngineBody extends InputStream {
    private final EngineConnection conn;
    private final long idleNanos;
    /** {@link System#nanoTime()} after which no read waits any more, or {@link EngineConnection#NO_DEADLINE}. */
    private final long endBy;
    private final boolean chunked;
    /** Bytes left of the declared length or of the current chunk; -1: unknown (to the end of the connection). */
    private long left;
    private boolean done;
    private boolean firstChunk = true;

    EngineBody(EngineConnection conn, EngineConnection.Head head, long idleNanos, long endBy) {
        this.conn = conn;
        this.idleNanos = idleNanos;
        this.endBy = endBy;
        this.chunked = head.chunked();
        int s = head.status();
        this.done = s == 204 || s == 304 || s / 100 == 1 || head.contentLength() == 0;
        this.left = chunked ? 0 : head.contentLength();
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        if (chunked && left == 0 && !done) {
            nextChunk();
        }
        if (done) {
            return -1;
        }
        if (!conn.buffer().hasRemaining() && !more()) {
            if (left < 0) {
                done = true;
                conn.close();
                return -1;
            }
            throw cut();
        }
        ByteBuffer in = conn.buffer(); // after more(): filling may have replaced the buffer
        int n = Math.min(len, in.remaining());
        if (left >= 0) {
            n = (int) Math.min(n, left);
            left -= n;
        }
        in.get(b, off, n);
        if (!chunked && left == 0) {
            done = true;
            conn.close();
        }
        return n;
    }

    /** Reads the next chunk's size line (and the CRLF ending the previous chunk); a zero size ends the body. */
    private void nextChunk() throws IOException {
        if (!firstChunk) {
            expectLineEnd();
        }
        firstChunk = false;
        String line = line();
        int semi = line.indexOf(';');
        String hex = (semi >= 0 ? line.substring(0, semi) : line).trim();
        if (hex.isEmpty() || hex.length() > 15) {
            throw malformed("a chunk size line '" + shown(line) + "'");
        }
        long size = 0;
        for (char c : hex.toCharArray()) {
            int d = Character.digit(c, 16);
            if (d < 0) {
                throw malformed("a chunk size line '" + shown(line) + "'");
            }
            size = size * 16 + d;
        }
        if (size == 0) {
            // Trailers, then the empty line; nothing in them is of use here.
            int fields = 0;
            while (!line().isEmpty()) {
                if (++fields > EngineConnection.MAX_HEADER_FIELDS) {
                    throw malformed("more than " + EngineConnection.MAX_HEADER_FIELDS + " trailer fields");
                }
            }
            done = true;
            conn.close();
            return;
        }
        left = size;
    }

    private void expectLineEnd() throws IOException {
        if (!line().isEmpty()) {
            throw malformed("chunk data longer than its size");
        }
    }

    /** One line without its CRLF (a bare LF is accepted), at most {@code MAX_LINE_BYTES}. */
    private String line() throws IOException {
        StringBuilder out = new StringBuilder();
        while (true) {
            if (!conn.buffer().hasRemaining() && !more()) {
                throw cut();
            }
            byte c = conn.buffer().get();
            if (c == '\n') {
                int n = out.length();
                return n > 0 && out.charAt(n - 1) == '\r' ? out.substring(0, n - 1) : out.toString();
            }
            if (out.length() > EngineConnection.MAX_LINE_BYTES) {
                throw malformed("a chunk line longer than " + EngineConnection.MAX_LINE_BYTES + " bytes");
            }
            out.append((char) (c & 0xff));
        }
    }

    /** Waits for more bytes; false at the end of the connection. */
    private boolean more() throws IOException {
        int n = conn.fill(readBy(endBy, idleNanos));
        if (n == 0) {
            conn.close();
            throw new SocketTimeoutException(endBy - System.nanoTime() <= 0 ? "the engine's answer did not end in time"
                    : "engine sent nothing for " + idleNanos / 1_000_000_000 + " s");
        }
        return n > 0;
    }

    private EOFException cut() {
        done = true;
        conn.close();
        return new EOFException("the Docker engine's answer ended inside its body");
    }

    /** An IOException, not a {@code SandboxExecException}: a stream's reader handles its read failures. */
    private IOException malformed(String what) {
        conn.close();
        return new IOException("the Docker engine sent a malformed answer: " + what);
    }

    /** The earlier of now plus {@code idleNanos} and {@code endBy}. */
    static long readBy(long endBy, long idleNanos) {
        long now = System.nanoTime();
        return endBy != EngineConnection.NO_DEADLINE && endBy - now < idleNanos ? endBy : now + idleNanos;
    }

    private static String shown(String line) {
        return line.length() > 40 ? line.substring(0, 40) + "..." : line;
    }

    @Override
    public void close() {
        done = true;
        conn.close();
    }
}
