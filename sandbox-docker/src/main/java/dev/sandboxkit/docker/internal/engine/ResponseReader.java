package dev.sandboxkit.docker.internal.engine;

import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.docker.internal.engine.EngineConnection.Head;

import static dev.sandboxkit.docker.internal.engine.EngineConnection.BUFFER_SIZE;
import static dev.sandboxkit.docker.internal.engine.EngineConnection.MAX_BODY_BYTES;
import static dev.sandboxkit.docker.internal.engine.EngineConnection.MAX_HEADER_FIELDS;
import static dev.sandboxkit.docker.internal.engine.EngineConnection.MAX_HEAD_BYTES;
import static dev.sandboxkit.docker.internal.engine.EngineConnection.MAX_LINE_BYTES;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Parses the HTTP/1.1 responses that arrive on one {@link EngineConnection}: the head, and a body by its length,
 * chunked, or up to the end of the connection, holding each to the limits that class documents. Reads from the
 * connection's receive buffer and asks the connection for more; the socket, deadlines and TLS stay there.
 * Not thread-safe, like its connection.
 */
final class ResponseReader {
    /** First size of the line buffer; it grows to {@link EngineConnection#MAX_LINE_BYTES} only for a line that long. */
    private static final int FIRST_LINE_BYTES = 256;

    private final EngineConnection conn;
    /** A line being read; grows up to the longest line plus its CR, dropped by {@link #dropLine}. */
    private byte[] line;

    ResponseReader(EngineConnection conn) {
        this.conn = conn;
    }

    /** The connection's receive buffer: read anew each time, {@link EngineConnection#fill} may replace it. */
    private ByteBuffer in() {
        return conn.buffer();
    }

    /** Gives back the line buffer's memory while the connection is idle. */
    void dropLine() {
        line = null;
    }

    /**
     * Reads the status line and headers. Bytes after the head stay in {@link EngineConnection#buffer()}.
     *
     * @throws SandboxExecException if the head breaks HTTP or a limit, or the connection ends inside it
     * @throws IOException          if the connection fails, the deadline passes, or it ends before any byte
     */
    Head readHead(long deadline) throws IOException {
        if (!in().hasRemaining()) {
            conn.more(deadline, null); // an end of stream here is a dropped idle connection: retried by the client
        }
        String status = readLine(deadline, "status line");
        int headBytes = status.length() + 2;
        List<String> fields = new ArrayList<>();
        while (true) {
            String field = readLine(deadline, "header line");
            if (field.isEmpty()) {
                return parseHead(status, fields);
            }
            headBytes += field.length() + 2;
            if (headBytes > MAX_HEAD_BYTES) {
                throw conn.violation("a head larger than " + MAX_HEAD_BYTES + " bytes");
            }
            if (fields.size() == MAX_HEADER_FIELDS) {
                throw conn.violation("more than " + MAX_HEADER_FIELDS + " header fields");
            }
            fields.add(field);
        }
    }

    /**
     * Reads a complete body as described by the head, at most {@value EngineConnection#MAX_BODY_BYTES} bytes.
     *
     * @throws SandboxExecException if the body breaks HTTP or the limit, or the connection ends inside it
     * @throws IOException          if the connection fails or the deadline passes
     */
    byte[] readBody(Head head, long deadline) throws IOException {
        if (head.status() == 204 || head.status() == 304 || head.status() / 100 == 1) {
            return new byte[0];
        }
        if (head.chunked()) {
            return readChunked(deadline);
        }
        if (head.contentLength() >= 0) {
            if (head.contentLength() > MAX_BODY_BYTES) {
                throw conn.violation("a body of " + head.contentLength() + " bytes, over the " + MAX_BODY_BYTES
                        + "-byte limit for an answer read into memory");
            }
            Body body = new Body(head.contentLength());
            readExactly(head.contentLength(), body, deadline, "body");
            return body.bytes();
        }
        // No length: the body ends when the engine closes the connection.
        Body out = new Body(-1);
        while (true) {
            if (in().remaining() > MAX_BODY_BYTES - out.size()) {
                throw conn.violation("a body without a length running over the " + MAX_BODY_BYTES
                        + "-byte limit for an answer read into memory");
            }
            out.take(in(), in().remaining());
            int n = conn.fill(deadline);
            if (n < 0) {
                return out.bytes();
            }
            if (n == 0) {
                throw new SocketTimeoutException("engine did not finish its answer in time");
            }
        }
    }

    /**
     * The first {@code max} bytes of the body, or all of it if shorter (de-chunked). The rest is left unread:
     * the caller closes the connection, which is what ends a stream the engine would go on sending.
     *
     * @throws SandboxExecException if the body breaks HTTP, or the connection ends inside a declared length
     * @throws IOException          if the connection fails or the deadline passes
     */
    byte[] readBodyPrefix(Head head, int max, long deadline) throws IOException {
        Body out = new Body(-1);
        if (head.status() == 204 || head.status() == 304 || head.status() / 100 == 1) {
            return out.bytes();
        }
        if (head.chunked()) {
            while (out.size() < max) {
                long size = chunkSize(readLine(deadline, "chunk size line"));
                long take = Math.min(size, max - out.size());
                if (size == 0) {
                    break;
                }
                readExactly(take, out, deadline, "chunk");
                if (take == size && !readLine(deadline, "chunk").isEmpty()) {
                    throw conn.violation("chunk data not followed by CRLF");
                }
            }
            return out.bytes();
        }
        if (head.contentLength() >= 0) {
            readExactly(Math.min(head.contentLength(), max), out, deadline, "body");
            return out.bytes();
        }
        while (out.size() < max) { // no length: up to the end of the connection
            if (!in().hasRemaining()) {
                int n = conn.fill(deadline);
                if (n < 0) {
                    break;
                }
                if (n == 0) {
                    throw new SocketTimeoutException("engine did not finish its answer in time");
                }
            }
            out.take(in(), Math.min(in().remaining(), max - out.size()));
        }
        return out.bytes();
    }

    /** Moves exactly {@code length} body bytes into {@code out}. */
    private void readExactly(long length, Body out, long deadline, String what) throws IOException {
        long left = length;
        while (left > 0) {
            if (!in().hasRemaining()) {
                conn.more(deadline, what);
            }
            int n = (int) Math.min(in().remaining(), left);
            out.take(in(), n);
            left -= n;
        }
    }

    /**
     * A chunked body. Everything read counts toward {@value EngineConnection#MAX_BODY_BYTES}: the data, the size
     * lines with their extensions, the CRLFs and the trailers, so no stream of small chunks or long lines is
     * unbounded.
     */
    private byte[] readChunked(long deadline) throws IOException {
        Body out = new Body(-1);
        long wire = 0;
        while (true) {
            String sizeLine = readLine(deadline, "chunk size line");
            wire += sizeLine.length() + 2;
            long size = chunkSize(sizeLine);
            if (size > MAX_BODY_BYTES - wire) {
                throw conn.violation("a chunk of " + size + " bytes, over the " + MAX_BODY_BYTES
                        + "-byte limit for an answer read into memory");
            }
            if (size == 0) {
                readTrailers(deadline, wire);
                return out.bytes();
            }
            readExactly(size, out, deadline, "chunk");
            wire += size + 2;
            if (!readLine(deadline, "chunk").isEmpty()) {
                throw conn.violation("chunk data not followed by CRLF");
            }
        }
    }

    /** Trailer fields after the last chunk, up to the empty line; skipped, but counted. */
    private void readTrailers(long deadline, long wire) throws IOException {
        for (int fields = 0; ; fields++) {
            String trailer = readLine(deadline, "trailer");
            if (trailer.isEmpty()) {
                return;
            }
            wire += trailer.length() + 2;
            if (fields == MAX_HEADER_FIELDS || wire > MAX_BODY_BYTES) {
                throw conn.violation("more than " + MAX_HEADER_FIELDS + " trailer fields, or trailers over the "
                        + MAX_BODY_BYTES + "-byte limit");
            }
        }
    }

    /** {@code 1*HEXDIG [ ";" extensions ]}, with whitespace around the digits tolerated; at most the body limit. */
    private long chunkSize(String sizeLine) {
        int semi = sizeLine.indexOf(';');
        String digits = (semi >= 0 ? sizeLine.substring(0, semi) : sizeLine).trim();
        if (digits.isEmpty()) {
            throw conn.violation("an empty chunk size");
        }
        long size = 0;
        for (int i = 0; i < digits.length(); i++) {
            int d = hexDigit(digits.charAt(i));
            if (d < 0) {
                throw conn.violation("a chunk size that is not hexadecimal: '" + shown(digits) + "'");
            }
            size = size * 16 + d;
            if (size > MAX_BODY_BYTES) {
                // Checked at every digit: the value cannot overflow, however many digits follow.
                throw conn.violation("a chunk size over the " + MAX_BODY_BYTES + "-byte limit for an answer read into"
                        + " memory: '" + shown(digits) + "'");
            }
        }
        return size;
    }

    private static int hexDigit(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1; // ASCII only: Character.digit would take other scripts' digits
    }

    /**
     * One line without its line end (CRLF, or a bare LF as before), at most {@value EngineConnection#MAX_LINE_BYTES}
     * bytes, decoded as ISO-8859-1 (one char per byte).
     */
    private String readLine(long deadline, String what) throws IOException {
        if (line == null) {
            line = new byte[FIRST_LINE_BYTES];
        }
        int length = 0;
        while (true) {
            if (!in().hasRemaining()) {
                conn.more(deadline, what);
            }
            byte b = in().get();
            if (length == line.length && line.length <= MAX_LINE_BYTES) {
                line = java.util.Arrays.copyOf(line, Math.min(line.length * 2, MAX_LINE_BYTES + 1));
            }
            if (b == '\n') {
                if (length > 0 && line[length - 1] == '\r') {
                    length--;
                }
                if (length > MAX_LINE_BYTES) {
                    break;
                }
                return new String(line, 0, length, StandardCharsets.ISO_8859_1);
            }
            if (length == line.length) {
                break;
            }
            line[length++] = b;
        }
        throw conn.violation("a " + what + " longer than " + MAX_LINE_BYTES + " bytes");
    }

    /** The status line and the header fields this client cares about, each checked. */
    private Head parseHead(String statusLine, List<String> fields) {
        String[] status = statusLine.split(" ", 3);
        if (status.length < 2 || !status[0].startsWith("HTTP/1.")) {
            throw conn.violation("not an HTTP response: '" + shown(statusLine) + "'");
        }
        String code = status[1];
        if (code.length() != 3 || !digits(code) || code.charAt(0) == '0') {
            throw conn.violation("a malformed status line: '" + shown(statusLine) + "'");
        }
        long length = -1;
        boolean chunked = false;
        boolean keepAlive = !status[0].equals("HTTP/1.0");
        String api = null;
        String pathStat = null;
        for (String field : fields) {
            int colon = field.indexOf(':');
            if (colon <= 0) {
                continue; // not a field (obsolete line folding, say): nothing here depends on it
            }
            String name = field.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = field.substring(colon + 1).trim();
            switch (name) {
                case "content-length" -> {
                    long parsed = contentLength(value);
                    if (length >= 0 && parsed != length) {
                        throw conn.violation("two different Content-Lengths (" + length + " and " + parsed + ")");
                    }
                    length = parsed;
                }
                case "transfer-encoding" -> chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
                case "connection" -> keepAlive = keepAlive && !value.equalsIgnoreCase("close");
                case "api-version" -> api = value;
                case "x-docker-container-path-stat" -> pathStat = value;
                default -> {
                }
            }
        }
        int statusCode = Integer.parseInt(code); // three ASCII digits: cannot fail
        if (!chunked && length < 0 && statusCode != 204 && statusCode != 304 && statusCode / 100 != 1) {
            keepAlive = false;
        }
        return new Head(statusCode, length, chunked, keepAlive, api, pathStat);
    }

    /** {@code 1*DIGIT}: no sign, no list, and within a long. Whether the body may be that long is for the reader. */
    private long contentLength(String value) {
        if (value.isEmpty() || !digits(value)) {
            throw conn.violation("a malformed Content-Length: '" + shown(value) + "'");
        }
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw conn.violation("a Content-Length beyond any body: '" + shown(value) + "'");
        }
    }

    private static boolean digits(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    /** A piece of what the endpoint sent, safe for a message: short, control characters escaped. */
    private static String shown(String raw) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < raw.length() && i < 64; i++) {
            char c = raw.charAt(i);
            b.append(c >= 0x20 && c < 0x7f ? String.valueOf(c) : String.format("\\x%02x", (int) c));
        }
        return raw.length() > 64 ? b + "..." : b.toString();
    }

    /**
     * A body as it arrives, in blocks of at most {@link EngineConnection#BUFFER_SIZE}: what an answer holds before it
     * is refused is what arrived, in small arrays (no doubling copies, no array sized by what the answer claims).
     */
    private static final class Body {
        private final List<byte[]> blocks = new ArrayList<>();
        /** The Content-Length (at most the limit), or -1: blocks are then sized to what is left of it. */
        private final long expected;
        private byte[] last;
        private int lastFill;
        private int size;

        Body(long expected) {
            this.expected = expected;
        }

        /** Moves {@code n} bytes from {@code in} (a heap buffer in read mode). */
        void take(ByteBuffer in, int n) {
            int left = n;
            while (left > 0) {
                if (last == null || lastFill == last.length) {
                    long wanted = expected >= 0 ? expected - size - (n - left) : Math.max(left, 256);
                    last = new byte[(int) Math.min(BUFFER_SIZE, wanted)];
                    lastFill = 0;
                    blocks.add(last);
                }
                int k = Math.min(left, last.length - lastFill);
                in.get(last, lastFill, k);
                lastFill += k;
                left -= k;
            }
            size += n;
        }

        int size() {
            return size;
        }

        byte[] bytes() {
            if (blocks.isEmpty()) {
                return new byte[0];
            }
            if (blocks.size() == 1 && lastFill == last.length) {
                return last; // the usual small answer with a length: one block, exactly full
            }
            byte[] all = new byte[size];
            int at = 0;
            for (byte[] b : blocks) {
                int k = b == last ? lastFill : b.length;
                System.arraycopy(b, 0, all, at, k);
                at += k;
            }
            return all;
        }
    }
}
