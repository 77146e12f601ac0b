package dev.sandboxkit.docker.internal.engine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;

/**
 * The driver's one Engine API client: JSON requests over pooled keep-alive connections, each under a deadline;
 * streamed bodies both ways (archives, a pull's progress); and the exec start that upgrades its connection to the
 * raw stream. Thread-safe.
 */
public final class EngineClient implements Closeable {
    /** The mapper for the engine's JSON bodies. */
    public static final ObjectMapper JSON = new ObjectMapper();
    /** Bound for plain engine calls; they answer in about a millisecond when the engine is healthy. */
    static final long REQUEST_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final Pattern VERSION_PART = Pattern.compile("[0-9]{1,3}");
    private static final int PREFERRED_API = version("1.41");
    private static final int MAX_IDLE = 8;
    // About 2.5 s in all: under load dockerd reports a killed container's state late, and this is asked only
    // after a failure, so patience costs nothing on the fast path.
    private static final long[] GONE_PAUSES_MILLIS = {0, 20, 50, 100, 200, 400, 700, 1000};
    private static final Set<String> GONE_STATES = Set.of("removing", "exited", "dead");
    private final DockerHost host;
    private final ExecGate gate = new ExecGate();
    private final Deque<EngineConnection> idle = new ConcurrentLinkedDeque<>();
    private volatile String prefix;
    /** Whether {@code /version} named Podman; set together with {@link #prefix}. */
    private volatile boolean podman;
    private volatile boolean closed;

    /**
     * A client for the engine at {@code host}. Does not connect: the first call does.
     *
     * @param host the engine address
     */
    public EngineClient(DockerHost host) {
        this.host = host;
    }

    /**
     * The engine this client talks to.
     *
     * @return the engine address
     */
    public DockerHost host() {
        return host;
    }

    /**
     * What keeps this driver's exec starts and container freezes apart.
     *
     * @return the gate, one per client
     */
    public ExecGate gate() {
        return gate;
    }

    /**
     * An engine response with a fully read body.
     *
     * @param status HTTP status
     * @param body   body bytes
     */
    public record Response(int status, byte[] body) {
        /**
         * The body as JSON.
         *
         * @return the parsed body
         * @throws IOException if it is not JSON
         */
        public JsonNode json() throws IOException {
            return JSON.readTree(body);
        }

        /**
         * The engine's error message ({@code {"message": ...}}), or the raw body.
         *
         * @return the message text
         */
        public String message() {
            try {
                JsonNode m = JSON.readTree(body).get("message");
                if (m != null && m.isTextual()) {
                    return m.asText();
                }
            } catch (IOException | RuntimeException ignored) {
                // not JSON: fall through to the raw text
            }
            return new String(body, StandardCharsets.UTF_8).trim();
        }
    }

    /**
     * One request with the default deadline ({@link #REQUEST_TIMEOUT_NANOS}).
     *
     * @param method HTTP method
     * @param path   path below the negotiated API version, such as {@code /containers/x/exec}
     * @param body   a value serialized as the JSON body, or {@code null}
     * @return the answer, body fully read
     * @throws IOException if the engine cannot be reached or does not answer in time
     */
    public Response call(String method, String path, Object body) throws IOException {
        return call(method, path, body, System.nanoTime() + REQUEST_TIMEOUT_NANOS);
    }

    /**
     * One request with its own deadline (a container's wait, a pull).
     *
     * @param method   HTTP method
     * @param path     path below the negotiated API version
     * @param body     a value serialized as the JSON body, or {@code null}
     * @param deadline {@link System#nanoTime()} by which the whole answer must have arrived
     * @return the answer, body fully read
     * @throws IOException if the engine cannot be reached or does not answer in time
     */
    public Response call(String method, String path, Object body, long deadline) throws IOException {
        return exchange(encode(method, apiPrefix(deadline) + path, body, false), deadline, (conn, head) -> {
            byte[] responseBody = conn.readBody(head, deadline);
            if (head.keepAlive() && !conn.buffer().hasRemaining()) {
                release(conn);
            } else {
                conn.close();
            }
            return new Response(head.status(), responseBody);
        });
    }

    /**
     * {@code HEAD /containers/{id}/archive?path=..}: the engine's stat of a path in a container, the last
     * component not followed.
     *
     * @param containerId the container
     * @param path        absolute path in it
     * @return the status (200, 404, ...) and, on 200, the decoded {@code X-Docker-Container-Path-Stat} JSON
     * @throws IOException if the engine cannot be reached or does not answer in time
     */
    public Response statPath(String containerId, String path) throws IOException {
        long deadline = System.nanoTime() + REQUEST_TIMEOUT_NANOS;
        byte[] request = encode("HEAD", archiveTarget(containerId, path, deadline), null, false);
        return exchange(request, deadline, (conn, head) -> {
            // A HEAD answer has no body, whatever its Content-Length says.
            if (head.keepAlive() && !conn.buffer().hasRemaining()) {
                release(conn);
            } else {
                conn.close();
            }
            byte[] stat = head.pathStat() == null ? new byte[0]
                    : java.util.Base64.getDecoder().decode(head.pathStat().trim());
            return new Response(head.status(), stat);
        });
    }

    /**
     * {@code GET /containers/{id}/archive?path=..}, reading only the first {@code max} bytes of the tar and then
     * closing the connection, which ends the engine's tar: the first entry's header (its owner, which the stat
     * lacks) at the cost of a stat, whatever the size of the tree. A stream through docker-java would be read to
     * its end on close.
     *
     * @param containerId the container
     * @param path        absolute path in it
     * @param max         how many bytes of the tar to read at most
     * @return the status and, on 200, the tar's first bytes (else the engine's error body)
     * @throws IOException if the engine cannot be reached or does not answer in time
     */
    public Response archivePrefix(String containerId, String path, int max) throws IOException {
        long deadline = System.nanoTime() + REQUEST_TIMEOUT_NANOS;
        return exchange(encode("GET", archiveTarget(containerId, path, deadline), null, false), deadline,
                (conn, head) -> {
                    try {
                        return new Response(head.status(), head.status() == 200
                                ? conn.readBodyPrefix(head, max, deadline) : conn.readBody(head, deadline));
                    } finally {
                        conn.close();
                    }
                });
    }

    /**
     * A request whose answer is read as it arrives (an archive, a pull's progress): on a 2xx the body as a stream
     * that owns the connection, each read waiting at most {@code idleNanos}; otherwise the error, fully read.
     *
     * @param method    HTTP method
     * @param path      path below the negotiated API version
     * @param headers   extra header lines, each without its CRLF (none: empty)
     * @param idleNanos how long the head, and then each read, may keep the caller waiting
     * @param endBy     {@link System#nanoTime()} by which the whole answer must have arrived, or
     *                  {@link EngineConnection#NO_DEADLINE}
     * @return the stream or the refusal
     * @throws IOException if the engine cannot be reached or does not answer in time
     */
    public Streamed stream(String method, String path, List<String> headers, long idleNanos, long endBy)
            throws IOException {
        long deadline = EngineBody.readBy(endBy, idleNanos);
        byte[] request = encode(method, apiPrefix(deadline) + path, null, false, headers);
        return exchange(request, deadline, (conn, head) -> {
            if (head.status() / 100 == 2) {
                return new Streamed(new EngineBody(conn, head, idleNanos, endBy), null);
            }
            try {
                return new Streamed(null, new Response(head.status(), conn.readBody(head, deadline)));
            } finally {
                conn.close();
            }
        });
    }

    /**
     * {@code PUT} of a tar stream ({@code /containers/{id}/archive}): sent with its length when known, else
     * chunked, each write waiting at most {@code idleNanos}. If the engine refuses before reading it all (a
     * missing directory), its answer is read all the same.
     *
     * @param path      path below the negotiated API version, with its query
     * @param tar       the body, read to its end (not closed)
     * @param length    its length, or -1 when unknown
     * @param idleNanos how long each write and the answer may keep the caller waiting
     * @return the answer
     * @throws IOException if the engine cannot be reached or does not answer in time
     * @throws java.io.UncheckedIOException if reading {@code tar} fails
     */
    public Response upload(String path, java.io.InputStream tar, long length, long idleNanos) throws IOException {
        long deadline = System.nanoTime() + idleNanos;
        List<String> headers = length >= 0
                ? List.of("Content-Type: application/x-tar", "Content-Length: " + length)
                : List.of("Content-Type: application/x-tar", "Transfer-Encoding: chunked");
        byte[] head = encode("PUT", apiPrefix(deadline) + path, null, false, headers);
        EngineConnection conn = pooled();
        if (conn != null) {
            try {
                conn.write(head, deadline);
            } catch (IOException stale) {
                conn.close();
                conn = null; // nothing of the body was read: send it on a fresh connection
            }
        }
        if (conn == null) {
            conn = EngineConnection.open(host, deadline);
            try {
                conn.write(head, deadline);
            } catch (IOException | RuntimeException e) {
                conn.close();
                throw e;
            }
        }
        try {
            IOException refused = null;
            try {
                sendBody(conn, tar, length >= 0, idleNanos);
            } catch (IOException e) {
                if (e instanceof InterruptedIOException) {
                    throw e;
                }
                refused = e; // the engine may have answered and stopped reading: look for its answer
            }
            long answerBy = System.nanoTime() + (refused == null ? idleNanos : TimeUnit.SECONDS.toNanos(2));
            EngineConnection.Head h;
            try {
                h = conn.readHead(answerBy);
            } catch (IOException | RuntimeException e) {
                if (refused != null) {
                    refused.addSuppressed(e);
                    throw refused;
                }
                throw e;
            }
            Response r = new Response(h.status(), conn.readBody(h, answerBy));
            if (refused == null && h.keepAlive() && !conn.buffer().hasRemaining()) {
                release(conn);
            } else {
                conn.close();
            }
            return r;
        } catch (IOException | RuntimeException | Error e) {
            conn.close();
            throw e;
        }
    }

    private static void sendBody(EngineConnection conn, java.io.InputStream tar, boolean sized, long idleNanos)
            throws IOException {
        byte[] block = new byte[64 * 1024];
        while (true) {
            int n;
            try {
                n = tar.read(block);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e); // the body's own failure, not the engine's
            }
            if (n < 0) {
                break;
            }
            if (n == 0) {
                continue;
            }
            byte[] piece = java.util.Arrays.copyOf(block, n);
            if (!sized) {
                conn.write((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII),
                        System.nanoTime() + idleNanos);
                piece = java.util.Arrays.copyOf(piece, n + 2);
                piece[n] = '\r';
                piece[n + 1] = '\n';
            }
            conn.write(piece, System.nanoTime() + idleNanos);
        }
        if (!sized) {
            conn.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII), System.nanoTime() + idleNanos);
        }
    }

    /**
     * The outcome of {@link #stream}: a body to read, or the engine's refusal.
     *
     * @param body  the body (close it), or {@code null}
     * @param error the error response, or {@code null}
     */
    public record Streamed(java.io.InputStream body, Response error) {
    }

    private String archiveTarget(String containerId, String path, long deadline) throws IOException {
        return apiPrefix(deadline) + "/containers/" + segment(containerId) + "/archive?path="
                + java.net.URLEncoder.encode(path, StandardCharsets.UTF_8);
    }

    /**
     * Starts an exec attached: {@code POST /exec/{id}/start} with {@code Upgrade: tcp}. On 101 (or 200
     * from engines that do not upgrade) the connection is returned positioned at the raw stream; the
     * caller owns and closes it. Otherwise the connection is closed and the error returned.
     *
     * @param execId   the exec to start
     * @param deadline {@link System#nanoTime()} by which the engine must have answered
     * @return the stream, or the engine's refusal
     * @throws IOException if the engine cannot be reached or does not answer in time
     */
    public Started startExec(String execId, long deadline) throws IOException {
        return startExec(execId, deadline, false);
    }

    /**
     * Starts an exec attached, as {@link #startExec(String, long)}; with {@code tty} the engine sends the raw
     * terminal stream instead of the multiplexed one (it decides by this flag, not the exec's own).
     *
     * @param execId   the exec to start
     * @param deadline {@link System#nanoTime()} by which the engine must have answered
     * @param tty      whether the exec was created with a terminal
     * @return the stream, or the engine's refusal
     * @throws IOException if the engine cannot be reached or does not answer in time
     */
    public Started startExec(String execId, long deadline, boolean tty) throws IOException {
        byte[] request = encode("POST", apiPrefix(deadline) + "/exec/" + segment(execId) + "/start",
                JSON.createObjectNode().put("Detach", false).put("Tty", tty), true);
        // The upgraded connection can never be reused, so it spends an idle one if there is one.
        return exchange(request, deadline, (conn, head) -> {
            if (head.status() == 101 || head.status() == 200) {
                return new Started(conn, null);
            }
            Response error = new Response(head.status(), conn.readBody(head, deadline));
            conn.close();
            return new Started(null, error);
        });
    }

    /**
     * Whether a container is gone or no longer running, asked after an exec failed in a way that can mean
     * it is being removed (by this driver, another manager or {@code docker rm -f}). A forced remove kills
     * first and the engine shows the container stopped a moment after its processes died (the runtime
     * already refuses execs then), so with {@code patient} a running answer is asked again over about
     * 370 ms. Costs one inspect when the container is gone; only failure paths call it. An engine that
     * cannot be asked counts as running: the caller then keeps the result it had.
     *
     * @param containerId the container
     * @param patient     whether to look again while it still shows running
     * @param removedHere whether this driver has started removing it (checked between looks)
     * @return whether the container is gone or stopped
     */
    public boolean containerGone(String containerId, boolean patient, BooleanSupplier removedHere) {
        for (long pause : patient ? GONE_PAUSES_MILLIS : new long[] {0}) {
            if (removedHere.getAsBoolean()) {
                return true;
            }
            if (pause > 0) {
                try {
                    Thread.sleep(pause);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return removedHere.getAsBoolean();
                }
            }
            try {
                Response r = call("GET", "/containers/" + segment(containerId) + "/json", null);
                if (r.status() == 404) {
                    return true;
                }
                if (r.status() == 200) {
                    JsonNode state = r.json().path("State");
                    if (!state.path("Running").asBoolean(true) || state.path("Dead").asBoolean(false)
                            || GONE_STATES.contains(state.path("Status").asText())) {
                        return true;
                    }
                }
            } catch (IOException | RuntimeException e) {
                return removedHere.getAsBoolean();
            }
        }
        return removedHere.getAsBoolean();
    }

    /** Reads the answer once its head arrived; owns the connection from then on (release, close or hand out). */
    private interface Answer<T> {
        T read(EngineConnection conn, EngineConnection.Head head) throws IOException;
    }

    /**
     * Sends a request on an idle pooled connection (else a new one) and reads the answer. An idle connection
     * the engine dropped shows up as a failed write, EOF or reset before any answer: the request was not
     * processed, so it is sent again once on a fresh connection.
     */
    private <T> T exchange(byte[] request, long deadline, Answer<T> answer) throws IOException {
        for (int attempt = 0; ; attempt++) {
            EngineConnection conn = pooled();
            boolean pooled = conn != null;
            if (!pooled) {
                conn = EngineConnection.open(host, deadline);
            }
            long before = conn.received();
            try {
                conn.write(request, deadline);
                return answer.read(conn, conn.readHead(deadline));
            } catch (IOException e) {
                conn.close();
                if (pooled && attempt == 0 && conn.received() == before && !(e instanceof InterruptedIOException)) {
                    continue;
                }
                throw e;
            } catch (RuntimeException | Error e) {
                conn.close();
                throw e;
            }
        }
    }

    /**
     * The outcome of {@link #startExec}: a stream, or the engine's refusal.
     *
     * @param stream the upgraded connection, or {@code null}
     * @param error  the error response, or {@code null}
     */
    public record Started(EngineConnection stream, Response error) {
    }

    /** Closes idle connections; connections lent out are closed by their users. */
    @Override
    public void close() {
        closed = true;
        EngineConnection c;
        while ((c = idle.pollFirst()) != null) {
            c.close();
        }
    }

    /**
     * Percent-encodes a path segment (ids and names are safe already; this is belt and braces).
     *
     * @param value the raw segment
     * @return the encoded segment
     */
    public static String segment(String value) {
        StringBuilder out = new StringBuilder(value.length());
        for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_'
                    || c == '.') {
                out.append((char) c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
            }
        }
        return out.toString();
    }

    /** An idle connection the engine has not closed meanwhile, or {@code null}. */
    private EngineConnection pooled() {
        EngineConnection conn;
        while ((conn = idle.pollFirst()) != null) {
            if (!conn.isStale()) {
                return conn;
            }
            conn.close();
        }
        return null;
    }

    private void release(EngineConnection conn) {
        if (closed || idle.size() >= MAX_IDLE) {
            conn.close();
            return;
        }
        conn.shrink();
        idle.offerFirst(conn);
        if (closed) {
            close();
        }
    }

    /**
     * The API version path prefix, negotiated once: 1.41 when the engine supports it, else the
     * nearest version it does support (engines from 29.0 reject anything below 1.44).
     */
    private String apiPrefix(long deadline) throws IOException {
        String p = prefix;
        if (p != null) {
            return p;
        }
        synchronized (this) {
            if (prefix == null) {
                Response r = callUnversioned("/version", deadline);
                if (r.status() != 200) {
                    throw new IOException("GET /version answered " + r.status() + ": " + r.message());
                }
                JsonNode v = r.json();
                int max = version(v.path("ApiVersion").asText("1.41"));
                int min = version(v.path("MinAPIVersion").asText("1.12"));
                int chosen = Math.max(min, Math.min(max, PREFERRED_API));
                podman = isPodman(v);
                prefix = "/v" + (chosen / 1000) + "." + (chosen % 1000);
            }
            return prefix;
        }
    }

    /**
     * Whether the engine is Podman's Docker-compatible service ({@code podman system service}), whose exec and
     * inspect answers differ from dockerd's (see {@link EngineExec}). Asks {@code /version} on first use.
     *
     * @return whether the engine is Podman
     * @throws IOException if the engine cannot be reached
     */
    public boolean podman() throws IOException {
        apiPrefix(System.nanoTime() + REQUEST_TIMEOUT_NANOS);
        return podman;
    }

    /** Podman names itself in {@code /version}: a component "Podman Engine" (dockerd's is "Engine"). */
    static boolean isPodman(JsonNode version) {
        for (JsonNode c : version.path("Components")) {
            if (c.path("Name").asText("").toLowerCase(Locale.ROOT).startsWith("podman")) {
                return true;
            }
        }
        return false;
    }

    private Response callUnversioned(String path, long deadline) throws IOException {
        try (EngineConnection conn = EngineConnection.open(host, deadline)) {
            conn.write(encode("GET", path, null, false), deadline);
            EngineConnection.Head head = conn.readHead(deadline);
            return new Response(head.status(), conn.readBody(head, deadline));
        }
    }

    /** {@code major.minor} as {@code major * 1000 + minor}; anything else (or a part over 999) is the preference. */
    private static int version(String text) {
        String[] parts = text.trim().split("\\.");
        // Bounded parts: a hostile /version must not wrap the arithmetic into some other version.
        if (!VERSION_PART.matcher(parts[0]).matches()
                || (parts.length > 1 && !VERSION_PART.matcher(parts[1]).matches())) {
            return PREFERRED_API;
        }
        return Integer.parseInt(parts[0]) * 1000 + (parts.length > 1 ? Integer.parseInt(parts[1]) : 0);
    }

    private static byte[] encode(String method, String path, Object body, boolean upgrade) throws IOException {
        return encode(method, path, body, upgrade, List.of());
    }

    private static byte[] encode(String method, String path, Object body, boolean upgrade, List<String> headers)
            throws IOException {
        byte[] payload = body == null ? null : JSON.writeValueAsBytes(body);
        StringBuilder head = new StringBuilder(160).append(method).append(' ').append(path)
                .append(" HTTP/1.1\r\nHost: docker\r\nUser-Agent: sandboxkit\r\n");
        for (String h : headers) {
            head.append(h).append("\r\n");
        }
        boolean framed = headers.stream().anyMatch(h -> h.regionMatches(true, 0, "Content-Length:", 0, 15)
                || h.regionMatches(true, 0, "Transfer-Encoding:", 0, 18));
        if (payload != null) {
            head.append("Content-Type: application/json\r\nContent-Length: ").append(payload.length).append("\r\n");
        } else if (framed) {
            // the caller sends the body
        } else if (!method.equals("GET") && !method.equals("HEAD")) {
            head.append("Content-Length: 0\r\n");
        }
        if (upgrade) {
            head.append("Connection: Upgrade\r\nUpgrade: tcp\r\n");
        }
        head.append("\r\n");
        byte[] h = head.toString().getBytes(StandardCharsets.UTF_8);
        if (payload == null) {
            return h;
        }
        byte[] all = new byte[h.length + payload.length];
        System.arraycopy(h, 0, all, 0, h.length);
        System.arraycopy(payload, 0, all, h.length, payload.length);
        return all;
    }
}
