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
 *
 * <p>A line longer than the limit is never held in memory whole: its first bytes are kept to find the request's
 * id, the rest is skipped.
 *
 * <p>Errors are written to {@code out}, which must be the same object the SDK writes to: both write whole lines
 * under {@code synchronized (out)}, so the lines never interleave. Read by the SDK's one inbound thread.
 */
public final class StdioGuard extends InputStream {
    /** How much of an oversized line is kept to look for its id. */
    private static final int HEAD_BYTES = 64 * 1024;

    private static final Logger log = LoggerFactory.getLogger(StdioGuard.class);

    private final InputStream in;
    private final OutputStream out;
    private final McpJsonMapper mapper;
    private final int maxLineBytes;

    private final byte[] raw = new byte[64 * 1024];
    private int rawPos;
    private int rawEnd;
    private boolean eof;

    private byte[] acc = new byte[8 * 1024];
    private int accLen;

    private byte[] line = new byte[0];
    private int linePos;

    /**
     * Guards a stream.
     *
     * @param in           the process's stdin
     * @param out          the protocol stream the SDK writes to
     * @param mapper       the SDK's JSON mapper
     * @param maxLineBytes the largest message accepted, in bytes (without the line end)
     */
    public StdioGuard(InputStream in, OutputStream out, McpJsonMapper mapper, int maxLineBytes) {
        this.in = Objects.requireNonNull(in, "in");
        this.out = Objects.requireNonNull(out, "out");
        this.mapper = Objects.requireNonNull(mapper, "mapper");
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
                log.warn("Refused a {}-byte message: over the limit of {} bytes", total, maxLineBytes);
                reply(leadingId(acc, accLen), JsonRpc.INVALID_REQUEST, "Request too large: " + total
                        + " bytes; this server accepts at most " + maxLineBytes + " bytes per message");
                continue;
            }
            String text = new String(acc, 0, accLen, StandardCharsets.UTF_8);
            if (text.isBlank()) {
                continue; // the SDK would end the session on an empty line
            }
            try {
                McpSchema.deserializeJsonRpcMessage(mapper, text);
            } catch (Exception e) {
                refuse(text, e);
                continue;
            }
            line = Arrays.copyOf(acc, accLen + 1);
            line[accLen] = '\n';
            linePos = 0;
            return true;
        }
    }

    /** Answers a line the SDK could not read: not JSON at all, or JSON that is not one JSON-RPC message. */
    private void refuse(String text, Exception why) throws IOException {
        Object parsed;
        try {
            parsed = mapper.readValue(text, Object.class);
        } catch (IOException | RuntimeException notJson) {
            log.warn("Refused a message that is not JSON ({} bytes)", accLen);
            reply(null, JsonRpc.PARSE_ERROR, "Parse error: the message is not valid JSON");
            return;
        }
        if (parsed instanceof Map<?, ?> map) {
            Object id = map.get("id");
            log.warn("Refused a JSON message that is not JSON-RPC: {}", why.toString());
            reply(id, JsonRpc.INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 request, notification or "
                    + "response (it needs \"method\", or \"result\" or \"error\")");
        } else {
            log.warn("Refused a JSON message that is not an object");
            reply(null, JsonRpc.INVALID_REQUEST, parsed instanceof List
                    ? "Invalid Request: batches are not supported; send one message per line"
                    : "Invalid Request: a message must be a JSON object");
        }
    }

    private void reply(Object id, int code, String message) {
        byte[] bytes = (JsonRpc.error(mapper, id, code, message) + "\n").getBytes(StandardCharsets.UTF_8);
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
     * Reads one line into {@code acc} (without its line end; {@code \r\n} is taken as one). Of a line longer than
     * the limit only the first {@value #HEAD_BYTES} bytes are kept.
     *
     * @return the line's full length in bytes, or {@code -1} at the end of input with nothing read
     */
    private long readRawLine() throws IOException {
        accLen = 0;
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

    /** Appends to {@code acc} what the limit allows: the whole line within it, only its head beyond it. */
    private void keep(int start, int n, long before) {
        int room;
        if (before + n <= maxLineBytes) {
            room = n;
        } else {
            accLen = Math.min(accLen, HEAD_BYTES); // too long: only the head is needed to find the id
            room = Math.max(0, Math.min(n, HEAD_BYTES - accLen));
        }
        if (room == 0) {
            return;
        }
        if (accLen + room > acc.length) {
            long grown = Math.max((long) acc.length * 2, (long) accLen + room);
            acc = Arrays.copyOf(acc, (int) Math.min(grown, Math.max(maxLineBytes, HEAD_BYTES)));
        }
        System.arraycopy(raw, start, acc, accLen, room);
        accLen += room;
    }

    private long trimCr(long total) {
        if (total > 0 && total <= maxLineBytes && accLen > 0 && acc[accLen - 1] == '\r') {
            accLen--;
            return total - 1;
        }
        return total;
    }

    /**
     * The {@code "id"} of a JSON-RPC message from its first bytes, which may end anywhere: scans the top-level
     * object up to the {@code id} member. The SDK's clients write {@code id} before {@code params}.
     *
     * @param b   the bytes
     * @param len how many are valid
     * @return the id (a String or a Number), or {@code null} if not found in these bytes
     */
    Object leadingId(byte[] b, int len) {
        int i = skipWs(b, 0, len);
        if (i >= len || b[i] != '{') {
            return null;
        }
        i++;
        while (true) {
            i = skipWs(b, i, len);
            if (i >= len || b[i] != '"') {
                return null;
            }
            int keyEnd = endOfString(b, i, len);
            if (keyEnd < 0) {
                return null;
            }
            boolean isId = keyEnd - i == 4 && b[i + 1] == 'i' && b[i + 2] == 'd';
            i = skipWs(b, keyEnd, len);
            if (i >= len || b[i] != ':') {
                return null;
            }
            i = skipWs(b, i + 1, len);
            if (i >= len) {
                return null;
            }
            int valueEnd = endOfValue(b, i, len);
            if (valueEnd < 0) {
                return null;
            }
            if (isId) {
                if (b[i] != '"' && b[i] != '-' && (b[i] < '0' || b[i] > '9')) {
                    return null;
                }
                try {
                    Object id = mapper.readValue(new String(b, i, valueEnd - i, StandardCharsets.UTF_8), Object.class);
                    return id instanceof String || id instanceof Number ? id : null;
                } catch (IOException | RuntimeException e) {
                    return null;
                }
            }
            i = skipWs(b, valueEnd, len);
            if (i >= len || b[i] != ',') {
                return null;
            }
            i++;
        }
    }

    private static int skipWs(byte[] b, int i, int len) {
        while (i < len && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n')) {
            i++;
        }
        return i;
    }

    /** The index after the string that starts at {@code i} (a quote), or -1 if it does not end within len. */
    private static int endOfString(byte[] b, int i, int len) {
        for (int j = i + 1; j < len; j++) {
            if (b[j] == '\\') {
                j++;
            } else if (b[j] == '"') {
                return j + 1;
            }
        }
        return -1;
    }

    /** The index after the value that starts at {@code i}, or -1 if it does not end within len. */
    private static int endOfValue(byte[] b, int i, int len) {
        byte c = b[i];
        if (c == '"') {
            return endOfString(b, i, len);
        }
        if (c == '{' || c == '[') {
            int depth = 0;
            for (int j = i; j < len; j++) {
                byte x = b[j];
                if (x == '"') {
                    j = endOfString(b, j, len);
                    if (j < 0) {
                        return -1;
                    }
                    j--;
                } else if (x == '{' || x == '[') {
                    depth++;
                } else if (x == '}' || x == ']') {
                    if (--depth == 0) {
                        return j + 1;
                    }
                }
            }
            return -1;
        }
        for (int j = i; j < len; j++) {
            byte x = b[j];
            if (x == ',' || x == '}' || x == ']' || x == ' ' || x == '\t' || x == '\r' || x == '\n') {
                return j;
            }
        }
        return -1;
    }
}
