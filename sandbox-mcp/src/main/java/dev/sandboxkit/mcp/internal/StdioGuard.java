package dev.sandboxkit.mcp.internal;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The stdin the SDK's stdio transport reads: only lines that are JSON-RPC messages get through. The SDK ends the
 * whole session, and with it the process, on the first line it cannot read (malformed JSON, a blank line, a
 * batch, a line over its size limit), without answering. This stream answers such lines itself with a JSON-RPC
 * error (the request's id when it can be found) and passes the next line on, so one bad message costs one error.
 * Blank lines carry no message and are skipped without an answer. Every readable message then meets the
 * {@link Gate} (through an {@link Inspector}), which may answer it, or consume it, instead of the SDK.
 *
 * <p>A line longer than the limit is never held in memory whole: it is streamed past, scanned on the way for the
 * request's top-level {@code "id"} (wherever it stands: the TypeScript SDK writes it last), and answered with
 * {@code -32600} and that id once it ends; a notification (a {@code "method"} and no id) gets no answer.
 *
 * <p>Errors are written to {@code out}, which must be the same object the SDK writes to: both write whole lines
 * under {@code synchronized (out)}, so the lines never interleave. Read by the SDK's one inbound thread.
 */
public final class StdioGuard extends InputStream {
    private static final Logger log = LoggerFactory.getLogger(StdioGuard.class);

    /** Decides about each readable message (see {@link Gate#inspect}). */
    @FunctionalInterface
    public interface Inspector {
        /**
         * Looks at one message.
         *
         * @param message the message
         * @return what becomes of it
         */
        Gate.Verdict inspect(McpSchema.JSONRPCMessage message);
    }

    private final InputStream in;
    private final OutputStream out;
    private final McpJsonMapper mapper;
    private final int maxLineBytes;
    private final Inspector inspector;

    private final byte[] raw = new byte[64 * 1024];
    private int rawPos;
    private int rawEnd;
    private boolean eof;

    private byte[] acc = new byte[8 * 1024];
    private int accLen;
    private boolean over;
    private final IdScan scan = new IdScan();

    private byte[] line = new byte[0];
    private int linePos;

    /**
     * Guards a stream.
     *
     * @param in           the process's stdin
     * @param out          the protocol stream the SDK writes to
     * @param mapper       the SDK's JSON mapper
     * @param maxLineBytes the largest message accepted, in bytes (without the line end)
     * @param inspector    asked about every readable message
     */
    public StdioGuard(InputStream in, OutputStream out, McpJsonMapper mapper, int maxLineBytes, Inspector inspector) {
        this.in = Objects.requireNonNull(in, "in");
        this.out = Objects.requireNonNull(out, "out");
        this.mapper = Objects.requireNonNull(mapper, "mapper");
        this.inspector = Objects.requireNonNull(inspector, "inspector");
        if (maxLineBytes < 1024) {
            throw new IllegalArgumentException("maxLineBytes must be at least 1024, got " + maxLineBytes);
        }
        this.maxLineBytes = maxLineBytes;
    }

    @Override
    public int read() throws IOException {
        if (linePos >= line.length && !nextLine()) {
            return -1;
        }
        return line[linePos++] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) {
            return 0;
        }
        if (linePos >= line.length && !nextLine()) {
            return -1;
        }
        int n = Math.min(len, line.length - linePos);
        System.arraycopy(line, linePos, b, off, n);
        linePos += n;
        return n;
    }

    @Override
    public int available() {
        return line.length - linePos;
    }

    @Override
    public void close() throws IOException {
        in.close();
    }

    /** Reads until a line worth passing on is ready; {@code false} at the end of input. */
    private boolean nextLine() throws IOException {
        while (true) {
            long total = readRawLine();
            if (total < 0) {
                return false;
            }
            if (total > maxLineBytes) {
                refuseOversized(total);
                continue;
            }
            String text = new String(acc, 0, accLen, StandardCharsets.UTF_8);
            if (text.isBlank()) {
                continue; // no message, nothing to answer (and the SDK would end the session on it)
            }
            McpSchema.JSONRPCMessage message;
            try {
                message = McpSchema.deserializeJsonRpcMessage(mapper, text);
            } catch (Exception e) {
                log.warn("Refused a message the SDK cannot read ({} bytes): {}", accLen, e.toString());
                reply(JsonRpc.unreadable(mapper, text));
                continue;
            }
            Gate.Verdict verdict = inspector.inspect(message);
            if (verdict == Gate.Verdict.CONSUMED) {
                continue;
            }
            if (verdict.answer() != null) {
                reply(verdict.answer());
                continue;
            }
            line = Arrays.copyOf(acc, accLen + 1);
            line[accLen] = '\n';
            linePos = 0;
            return true;
        }
    }

    private void refuseOversized(long total) {
        if (scan.notification()) {
            log.warn("Dropped a {}-byte notification: over the limit of {} bytes", total, maxLineBytes);
            return; // a notification is never answered
        }
        log.warn("Refused a {}-byte message{}: over the limit of {} bytes", total,
                scan.id() == null ? "" : " (id " + scan.id() + ")", maxLineBytes);
        reply(JsonRpc.errorBody(scan.id(), JsonRpc.INVALID_REQUEST, "Request too large: " + total
                + " bytes; this server accepts at most " + maxLineBytes + " bytes per message (--max-message-size)"));
    }

    private void reply(Object response) {
        byte[] bytes = (JsonRpc.write(mapper, response) + "\n").getBytes(StandardCharsets.UTF_8);
        try {
            synchronized (out) {
                out.write(bytes);
                out.flush();
            }
        } catch (IOException e) {
            log.debug("Could not answer on stdout: {}", e.toString());
        }
    }

    /**
     * Reads one line into {@code acc} (without its line end; {@code \r\n} is taken as one). A line longer than
     * the limit is not kept: from the moment it passes the limit, its bytes go through {@link #scan} only.
     *
     * @return the line's full length in bytes, or {@code -1} at the end of input with nothing read
     */
    private long readRawLine() throws IOException {
        accLen = 0;
        over = false;
        scan.reset();
        long total = 0;
        boolean any = false;
        while (true) {
            if (rawPos >= rawEnd) {
                if (eof || !fill()) {
                    return any ? trimCr(total) : -1;
                }
            }
            any = true;
            int start = rawPos;
            int nl = -1;
            for (int i = rawPos; i < rawEnd; i++) {
                if (raw[i] == '\n') {
                    nl = i;
                    break;
                }
            }
            int end = nl < 0 ? rawEnd : nl;
            int n = end - start;
            keep(start, n, total);
            total += n;
            rawPos = nl < 0 ? rawEnd : nl + 1;
            if (nl >= 0) {
                return trimCr(total);
            }
        }
    }

    private boolean fill() throws IOException {
        int n = in.read(raw, 0, raw.length);
        if (n < 0) {
            eof = true;
            return false;
        }
        rawPos = 0;
        rawEnd = n;
        return true;
    }

    /** Appends to {@code acc} while the line is within the limit; past it, scans instead. */
    private void keep(int start, int n, long before) {
        if (!over && before + n > maxLineBytes) {
            over = true; // too long: what was kept is scanned, and from now on nothing is kept
            scan.feed(acc, 0, accLen);
            accLen = 0;
        }
        if (over) {
            scan.feed(raw, start, n);
            return;
        }
        if (accLen + n > acc.length) {
            long grown = Math.max((long) acc.length * 2, (long) accLen + n);
            acc = Arrays.copyOf(acc, (int) Math.min(grown, maxLineBytes));
        }
        System.arraycopy(raw, start, acc, accLen, n);
        accLen += n;
    }

    private long trimCr(long total) {
        if (!over && accLen > 0 && acc[accLen - 1] == '\r') {
            accLen--;
            return total - 1;
        }
        return total;
    }

    /**
     * A streaming scan of a message's top-level object for its {@code "id"} and {@code "method"} members: fed the
     * bytes of a line in pieces, it keeps only the state of the object's outer level and the id's own bytes (up to
     * {@value #MAX_ID_BYTES}). Nested objects, arrays and strings are skipped however large. Not a validator:
     * malformed JSON just ends the scan.
     */
    final class IdScan {
        static final int MAX_ID_BYTES = 1024;

        private static final int START = 0;
        private static final int KEY_OR_END = 1;
        private static final int KEY = 2;
        private static final int COLON = 3;
        private static final int VALUE = 4;
        private static final int STRING = 5;
        private static final int NESTED = 6;
        private static final int SCALAR = 7;
        private static final int AFTER_VALUE = 8;
        private static final int DONE = 9;

        private int state;
        private boolean escaped;
        private final byte[] key = new byte[8];
        private int keyLen;
        private boolean keyPlain;
        private boolean inId;
        private int depth;
        private boolean nestedString;
        private final byte[] idBytes = new byte[MAX_ID_BYTES];
        private int idLen;
        private boolean idTooLong;
        private boolean idSeen;
        private Object id;
        private boolean method;
        private boolean closed;

        void reset() {
            state = START;
            escaped = false;
            keyLen = 0;
            inId = false;
            depth = 0;
            nestedString = false;
            idLen = 0;
            idTooLong = false;
            idSeen = false;
            id = null;
            method = false;
            closed = false;
        }

        /** The request's id: a string or a number, or {@code null} if the object had none (or a strange one). */
        Object id() {
            return id;
        }

        /** A complete object with a method and no id: a notification. */
        boolean notification() {
            return closed && method && !idSeen;
        }

        void feed(byte[] b, int off, int len) {
            for (int i = off; i < off + len && state != DONE; i++) {
                step(b[i]);
            }
        }

        private void step(byte c) {
            boolean ws = c == ' ' || c == '\t' || c == '\r' || c == '\n';
            switch (state) {
                case START -> state = ws ? START : c == '{' ? KEY_OR_END : DONE;
                case KEY_OR_END -> {
                    if (c == '"') {
                        state = KEY;
                        keyLen = 0;
                        keyPlain = true;
                    } else if (c == '}') {
                        end();
                    } else if (!ws) {
                        state = DONE;
                    }
                }
                case KEY -> {
                    if (escaped) {
                        escaped = false;
                        keyPlain = false; // an escaped key is never "id" to the SDK's clients
                    } else if (c == '\\') {
                        escaped = true;
                    } else if (c == '"') {
                        state = COLON;
                    } else if (keyLen < key.length) {
                        key[keyLen++] = c;
                    } else {
                        keyPlain = false;
                    }
                }
                case COLON -> state = ws ? COLON : c == ':' ? VALUE : DONE;
                case VALUE -> {
                    if (ws) {
                        return;
                    }
                    inId = keyIs("id") && !idSeen;
                    if (keyIs("method")) {
                        method = true;
                    }
                    if (inId) {
                        idSeen = true;
                        idLen = 0;
                        capture(c);
                    }
                    if (c == '"') {
                        state = STRING;
                    } else if (c == '{' || c == '[') {
                        state = NESTED;
                        depth = 1;
                        nestedString = false;
                    } else {
                        state = SCALAR;
                    }
                }
                case STRING -> {
                    capture(c);
                    if (escaped) {
                        escaped = false;
                    } else if (c == '\\') {
                        escaped = true;
                    } else if (c == '"') {
                        valueEnded();
                        state = AFTER_VALUE;
                    }
                }
                case NESTED -> {
                    if (nestedString) {
                        if (escaped) {
                            escaped = false;
                        } else if (c == '\\') {
                            escaped = true;
                        } else if (c == '"') {
                            nestedString = false;
                        }
                    } else if (c == '"') {
                        nestedString = true;
                    } else if (c == '{' || c == '[') {
                        depth++;
                    } else if ((c == '}' || c == ']') && --depth == 0) {
                        inId = false; // an object or array is no id
                        state = AFTER_VALUE;
                    }
                }
                case SCALAR -> {
                    if (c == ',' || c == '}' || ws) {
                        valueEnded();
                        state = c == ',' ? KEY_OR_END : AFTER_VALUE;
                        if (c == '}') {
                            end();
                        }
                    } else {
                        capture(c);
                    }
                }
                case AFTER_VALUE -> {
                    if (c == ',') {
                        state = KEY_OR_END;
                    } else if (c == '}') {
                        end();
                    } else if (!ws) {
                        state = DONE;
                    }
                }
                default -> {
                    // DONE: the rest of the line is not looked at
                }
            }
        }

        private void end() {
            closed = true;
            state = DONE;
        }

        private boolean keyIs(String name) {
            if (!keyPlain || keyLen != name.length()) {
                return false;
            }
            for (int i = 0; i < keyLen; i++) {
                if (key[i] != name.charAt(i)) {
                    return false;
                }
            }
            return true;
        }

        private void capture(byte c) {
            if (!inId) {
                return;
            }
            if (idLen < idBytes.length) {
                idBytes[idLen++] = c;
            } else {
                idTooLong = true;
            }
        }

        /** The id's value is complete: read it, if it is a string or an integer. */
        private void valueEnded() {
            if (!inId) {
                return;
            }
            inId = false;
            if (idTooLong || idLen == 0) {
                return;
            }
            try {
                Object v = mapper.readValue(new String(idBytes, 0, idLen, StandardCharsets.UTF_8), Object.class);
                id = v instanceof String || v instanceof Number ? v : null;
            } catch (IOException | RuntimeException e) {
                id = null;
            }
        }
    }
}
