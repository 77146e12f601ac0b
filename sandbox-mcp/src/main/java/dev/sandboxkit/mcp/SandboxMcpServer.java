package dev.sandboxkit.mcp;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.mcp.internal.Calls;
import dev.sandboxkit.mcp.internal.Gate;
import dev.sandboxkit.mcp.internal.HttpAccess;
import dev.sandboxkit.mcp.internal.HttpEndpoint;
import dev.sandboxkit.mcp.internal.ObservedStdioProvider;
import dev.sandboxkit.mcp.internal.ObservedStreamableProvider;
import dev.sandboxkit.mcp.internal.Sessions;
import dev.sandboxkit.mcp.internal.StdioGuard;
import dev.sandboxkit.mcp.internal.ToolBridge;
import dev.sandboxkit.mcp.internal.WorkspaceResources;
import dev.sandboxkit.tools.SandboxTools;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An MCP server that offers a {@link SandboxTools} set to MCP clients, over stdio or Streamable HTTP. Each MCP
 * session works in its own sandbox session; a session key (stdio: {@link Builder#sessionKey(String)}, HTTP: the
 * {@value #SESSION_HEADER} header) lets a client reattach to the same workspace across reconnects and server
 * restarts. The {@code sandbox-mcp} command ({@link SandboxMcpMain}) is this class plus a manager built from flags.
 *
 * <pre>{@code
 * SandboxTools tools = SandboxTools.builder(manager).spec(spec).build();
 * try (SandboxMcpServer server = SandboxMcpServer.builder(tools).http("127.0.0.1", 8765).start()) {
 *     server.awaitClosed();
 * }
 * }</pre>
 *
 * <p><b>Tools</b> are the set's, with its JSON schemas (checked by the SDK before a call runs), a title and the MCP
 * annotations' hints. A tool's own failure is an {@code isError} result; so is a failure of the sandbox backend
 * (engine down, store failing), whose text says the sandbox is unavailable and whether retrying may help, and
 * whose {@code _meta} carries {@code dev.sandboxkit/error} and {@code dev.sandboxkit/retryable}. Unknown tools,
 * params of the wrong JSON type and malformed requests are JSON-RPC errors. A client's
 * {@code notifications/cancelled} stops the call (its command is killed in the sandbox) and its answer is not sent;
 * a session that ends first (an HTTP {@code DELETE}, server shutdown) answers its calls still running with an error
 * saying so. <b>Resources</b>: the workspace's files, listed by {@code resources/list} (paged, at most 1,000) and
 * read through the template {@code sandbox://workspace/{+path}}.
 *
 * <p><b>Session lifecycle.</b> When an MCP session closes, a keyed sandbox is released (the manager's idle TTL
 * then applies and the workdir stays for the next reattach); an unkeyed one is destroyed with its workdir, since
 * no client could ever reattach to it. At most {@link Builder#maxSessions(int)} MCP sessions are open at once over
 * HTTP; a client past that gets HTTP 503 with a JSON-RPC error saying so.
 *
 * <p><b>HTTP security.</b> Any non-loopback address needs {@link Builder#allowNonLoopback()} together with
 * {@link Builder#bearerToken(String)}. With a token, every request needs {@code Authorization: Bearer <token>}
 * (401 otherwise). Browser {@code Origin}s are checked against {@link Builder#allowedOrigins(String...)} (403),
 * and on loopback the {@code Host} header too (DNS rebinding). Error bodies are JSON-RPC errors, never stack traces.
 *
 * <p>The server never closes the tool set's manager. Thread-safe.
 */
public final class SandboxMcpServer implements AutoCloseable {
    /** The HTTP header that names a session key. */
    public static final String SESSION_HEADER = Sessions.SESSION_HEADER;
    /** The HTTP path of the MCP endpoint. */
    public static final String ENDPOINT = "/mcp";
    /** The server name in {@code serverInfo}. */
    public static final String NAME = "sandbox-mcp";

    private final McpSyncServer server;
    private final Sessions sessions;
    private final HttpEndpoint http;
    private final CountDownLatch closed;
    private final AtomicBoolean closing = new AtomicBoolean();

    private SandboxMcpServer(McpSyncServer server, Sessions sessions, HttpEndpoint http, CountDownLatch closed) {
        this.server = server;
        this.sessions = sessions;
        this.http = http;
        this.closed = closed;
    }

    /**
     * Starts configuring a server for a tool set. The tool set's manager is not closed by the server.
     *
     * @param tools the tools to offer
     * @return a builder
     */
    public static Builder builder(SandboxTools tools) {
        return new Builder(tools);
    }

    /**
     * The version of this module, as in {@code serverInfo}.
     *
     * @return for example {@code 0.1.0}
     */
    public static String version() {
        Properties p = new Properties();
        try (InputStream in = SandboxMcpServer.class.getResourceAsStream("version.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read version.properties", e);
        }
        return p.getProperty("version", "unknown");
    }

    /**
     * The HTTP endpoint's URL.
     *
     * @return for example {@code http://127.0.0.1:8765/mcp}, or {@code null} on stdio
     */
    public String url() {
        return http == null ? null : http.url();
    }

    /**
     * The HTTP port bound (useful after {@code http(host, 0)}).
     *
     * @return the port, or {@code -1} on stdio
     */
    public int port() {
        return http == null ? -1 : http.port();
    }

    /**
     * The number of MCP sessions open now.
     *
     * @return the count (on stdio 1 until its input ends)
     */
    public int openSessions() {
        return sessions.openCount();
    }

    /**
     * Waits until the server has closed: on stdio, when its input ended (the client went away) or
     * {@link #close()} was called; on HTTP, when {@link #close()} was called.
     *
     * @throws InterruptedException if interrupted while waiting
     */
    public void awaitClosed() throws InterruptedException {
        closed.await();
    }

    /**
     * Waits until the server has closed, at most a while.
     *
     * @param timeout the longest wait
     * @return {@code true} if it closed
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean awaitClosed(Duration timeout) throws InterruptedException {
        return closed.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Closes every MCP session (releasing or destroying its sandbox as described on the class) and stops the HTTP
     * endpoint. New requests are refused from the start. Idempotent. On stdio the input stream is not closed: the
     * SDK's reader thread ends when it does.
     */
    @Override
    public void close() {
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        sessions.shutdown();
        try {
            server.closeGracefully();
        } finally {
            try {
                if (http != null) {
                    http.close();
                }
            } finally {
                closed.countDown();
            }
        }
    }

    /**
     * Configures a {@link SandboxMcpServer}. Each option may be set once; exactly one of {@link #stdio} and
     * {@link #http} is required. Not thread-safe.
     */
    public static final class Builder {
        /** Default {@link #maxSessions(int)}. */
        public static final int DEFAULT_MAX_SESSIONS = 16;
        /** Default {@link #maxMessageBytes(int)}: 16 MiB, as the SDK's own default. */
        public static final int DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
        /** Default {@link #httpKeepAlive(Duration)}. */
        public static final Duration DEFAULT_KEEP_ALIVE = Duration.ofSeconds(30);
        /** The shortest default {@link #httpPingTimeout(Duration)}. */
        public static final Duration MIN_DEFAULT_PING_TIMEOUT = Duration.ofSeconds(30);
        /** Default {@link #httpSessionTimeout(Duration)}. */
        public static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofMinutes(10);

        private final SandboxTools tools;
        private InputStream stdin;
        private OutputStream stdout;
        private String host;
        private Integer port;
        private String sessionKey;
        private String token;
        private boolean nonLoopback;
        private List<String> origins;
        private Integer maxSessions;
        private Integer maxMessageBytes;
        private Duration keepAlive;
        private Duration pingTimeout;
        private Duration sessionTimeout;
        private boolean noResources;

        private Builder(SandboxTools tools) {
            this.tools = Objects.requireNonNull(tools, "tools");
        }

        /**
         * Serves one MCP session over a pair of streams: newline-delimited JSON-RPC. Lines that are not JSON-RPC
         * messages, and lines over {@link #maxMessageBytes(int)}, are answered with a JSON-RPC error (with the
         * request's id, wherever it stands) and skipped; blank lines are skipped without an answer.
         *
         * @param in  the client's messages (the process's stdin)
         * @param out where the answers go (the process's real stdout: nothing else may write to it; the server
         *            writes whole lines under {@code synchronized (out)})
         * @return this builder
         */
        public Builder stdio(InputStream in, OutputStream out) {
            requireUnset(stdin == null && host == null, "transport");
            this.stdin = Objects.requireNonNull(in, "in");
            this.stdout = Objects.requireNonNull(out, "out");
            return this;
        }

        /**
         * Serves Streamable HTTP at {@value SandboxMcpServer#ENDPOINT}.
         *
         * @param bindHost the address to bind, for example {@code 127.0.0.1}; a non-loopback address needs
         *                 {@link #allowNonLoopback()} and {@link #bearerToken(String)}
         * @param bindPort the port, {@code 0} for any free one
         * @return this builder
         */
        public Builder http(String bindHost, int bindPort) {
            requireUnset(stdin == null && host == null, "transport");
            if (bindPort < 0 || bindPort > 65535) {
                throw new IllegalArgumentException("port must be 0-65535, got " + bindPort);
            }
            this.host = Objects.requireNonNull(bindHost, "bindHost");
            this.port = bindPort;
            return this;
        }

        /**
         * Stdio only: the session key, so that the workspace survives the process (reattach by starting the server
         * with the same key). Without one the session's sandbox is destroyed when the client goes away.
         *
         * @param key 1-256 characters, no control characters
         * @return this builder
         */
        public Builder sessionKey(String key) {
            requireUnset(sessionKey == null, "sessionKey");
            this.sessionKey = Sessions.checkKey(Objects.requireNonNull(key, "key"));
            return this;
        }

        /**
         * HTTP only: every request must carry {@code Authorization: Bearer <token>}.
         *
         * @param bearer at least 16 characters
         * @return this builder
         */
        public Builder bearerToken(String bearer) {
            requireUnset(token == null, "bearerToken");
            this.token = checkToken(Objects.requireNonNull(bearer, "bearer"));
            return this;
        }

        static String checkToken(String bearer) {
            if (bearer.length() < 16 || bearer.chars().anyMatch(c -> c <= ' ' || c > '~')) {
                throw new IllegalArgumentException("the bearer token must have at least 16 printable ASCII characters "
                        + "and no spaces (for example: openssl rand -hex 32)");
            }
            return bearer;
        }

        /**
         * HTTP only: allows binding any non-loopback address. Requires a {@link #bearerToken(String)}.
         *
         * @return this builder
         */
        public Builder allowNonLoopback() {
            requireUnset(!nonLoopback, "allowNonLoopback");
            this.nonLoopback = true;
            return this;
        }

        /**
         * HTTP only: the browser origins allowed to call the server, exact ({@code https://app.example}) or with any
         * port ({@code http://localhost:*}). Requests without an {@code Origin} header are always allowed. Default:
         * loopback origins ({@code http(s)://localhost:*}, {@code 127.0.0.1}, {@code [::1]}).
         *
         * @param allowed the origins; none allows no browser page at all
         * @return this builder
         */
        public Builder allowedOrigins(String... allowed) {
            requireUnset(origins == null, "allowedOrigins");
            this.origins = List.copyOf(Arrays.asList(allowed));
            return this;
        }

        /**
         * HTTP only: the most MCP sessions open at once. Default {@value #DEFAULT_MAX_SESSIONS}.
         *
         * @param max at least 1
         * @return this builder
         */
        public Builder maxSessions(int max) {
            requireUnset(maxSessions == null, "maxSessions");
            if (max < 1) {
                throw new IllegalArgumentException("maxSessions must be at least 1, got " + max);
            }
            this.maxSessions = max;
            return this;
        }

        /**
         * The largest message accepted, in bytes: one stdio line, or one HTTP request body (HTTP 413 beyond).
         * Default 16 MiB. The tools' own limits (a 10 MB write) apply within it.
         *
         * @param bytes at least 64 KiB
         * @return this builder
         */
        public Builder maxMessageBytes(int bytes) {
            requireUnset(maxMessageBytes == null, "maxMessageBytes");
            if (bytes < 64 * 1024) {
                throw new IllegalArgumentException("maxMessageBytes must be at least 65536, got " + bytes);
            }
            this.maxMessageBytes = bytes;
            return this;
        }

        /**
         * HTTP only: how often sessions with an open event stream are pinged; a client that does not answer loses
         * its stream, and its session is then ended by the idle sweep. Default 30 seconds.
         *
         * @param interval the ping interval
         * @return this builder
         */
        public Builder httpKeepAlive(Duration interval) {
            requireUnset(keepAlive == null, "httpKeepAlive");
            this.keepAlive = positive(interval, "httpKeepAlive");
            return this;
        }

        /**
         * HTTP only: how long a keep-alive ping waits for the client's answer before its event stream is let go.
         * Independent of the interval; an answer that comes later is accepted quietly. Default: twice the
         * {@link #httpKeepAlive(Duration)} interval, at least {@link #MIN_DEFAULT_PING_TIMEOUT} (60 seconds with the
         * default interval).
         *
         * @param timeout the longest wait for a ping's answer
         * @return this builder
         */
        public Builder httpPingTimeout(Duration timeout) {
            requireUnset(pingTimeout == null, "httpPingTimeout");
            this.pingTimeout = positive(timeout, "httpPingTimeout");
            return this;
        }

        /**
         * HTTP only: the idle sweep's period. A session with no open stream and no request during a whole period is
         * closed (the SDK's client keeps a stream open while it is connected). Default 10 minutes.
         *
         * @param interval the sweep period
         * @return this builder
         */
        public Builder httpSessionTimeout(Duration interval) {
            requireUnset(sessionTimeout == null, "httpSessionTimeout");
            this.sessionTimeout = positive(interval, "httpSessionTimeout");
            return this;
        }

        /**
         * Offers no resources, only the tools.
         *
         * @return this builder
         */
        public Builder noResources() {
            requireUnset(!noResources, "noResources");
            this.noResources = true;
            return this;
        }

        /**
         * Starts the server. On stdio it reads its input from now on; on HTTP it listens once this returns.
         *
         * @return the running server
         * @throws SandboxConfigurationException if no transport was chosen, an option does not fit the transport, a
         *                                       non-loopback address lacks the flag or the token, or the HTTP port
         *                                       cannot be bound
         */
        public SandboxMcpServer start() {
            boolean stdio = stdin != null;
            if (!stdio && host == null) {
                throw new SandboxConfigurationException("SandboxMcpServer: choose a transport, stdio(..) or http(..)");
            }
            if (stdio && (token != null || nonLoopback || origins != null || maxSessions != null || keepAlive != null
                    || pingTimeout != null || sessionTimeout != null)) {
                throw new SandboxConfigurationException("SandboxMcpServer: bearerToken, allowNonLoopback, "
                        + "allowedOrigins, maxSessions, httpKeepAlive, httpPingTimeout and httpSessionTimeout are HTTP "
                        + "options");
            }
            if (!stdio && sessionKey != null) {
                throw new SandboxConfigurationException("SandboxMcpServer: over HTTP each client names its session key "
                        + "in the " + SESSION_HEADER + " header; sessionKey(..) is for stdio");
            }
            boolean loopback = !stdio && checkBind(host, nonLoopback, token != null);
            McpJsonMapper mapper = McpJsonDefaults.getMapper();
            int maxBytes = maxMessageBytes == null ? DEFAULT_MAX_MESSAGE_BYTES : maxMessageBytes;
            Sessions sessions = new Sessions(tools, stdio ? 1 : maxSessions == null ? DEFAULT_MAX_SESSIONS : maxSessions,
                    sessionKey);
            Calls calls = new Calls();
            Gate gate = new Gate(tools, sessions, calls, !noResources);
            if (stdio) {
                return startStdio(mapper, sessions, calls, gate, maxBytes);
            }
            return startHttp(mapper, sessions, calls, gate, maxBytes, loopback);
        }

        private SandboxMcpServer startStdio(McpJsonMapper mapper, Sessions sessions, Calls calls, Gate gate,
                                            int maxBytes) {
            CountDownLatch closed = new CountDownLatch(1);
            AtomicReference<ObservedStdioProvider> observed = new AtomicReference<>();
            StdioGuard guard = new StdioGuard(stdin, stdout, mapper, maxBytes,
                    message -> gate.inspect(observed.get().sessionId(), null, message));
            StdioServerTransportProvider provider = new StdioServerTransportProvider(mapper, guard, stdout,
                    maxBytes + 1);
            observed.set(new ObservedStdioProvider(provider, sessions, calls, closed::countDown));
            // The SDK starts reading while build() runs, so the session may even end before the server exists.
            McpSyncServer server = configure(McpServer.sync(observed.get()), mapper, sessions, calls).build();
            return new SandboxMcpServer(server, sessions, null, closed);
        }

        private SandboxMcpServer startHttp(McpJsonMapper mapper, Sessions sessions, Calls calls, Gate gate,
                                           int maxBytes, boolean loopback) {
            Duration interval = keepAlive == null ? DEFAULT_KEEP_ALIVE : keepAlive;
            Duration pingWait = pingTimeout != null ? pingTimeout
                    : max(interval.multipliedBy(2), MIN_DEFAULT_PING_TIMEOUT);
            HttpServletStreamableServerTransportProvider servlet = HttpServletStreamableServerTransportProvider.builder()
                    .jsonMapper(mapper)
                    .mcpEndpoint(ENDPOINT)
                    .maxRequestSize(maxBytes)
                    .keepAliveInterval(null) // ObservedStreamableProvider pings, with a timeout of its own
                    .sessionSweepInterval(sessionTimeout == null ? DEFAULT_SESSION_TIMEOUT : sessionTimeout)
                    .contextExtractor(HttpEndpoint::transportContext)
                    .build();
            // Tool calls block (a command may run for minutes): on HTTP they run on the request's own Jetty thread
            // (up to 200) instead of the SDK's shared pool of ten per core, where long calls would queue up others.
            McpSyncServer server = configure(McpServer.sync(new ObservedStreamableProvider(servlet, sessions, calls,
                    interval, pingWait)), mapper, sessions, calls).immediateExecution(true).build();
            HttpAccess access = new HttpAccess(token, loopback, origins == null ? HttpAccess.LOOPBACK_ORIGINS : origins);
            try {
                HttpEndpoint endpoint = HttpEndpoint.start(servlet, ENDPOINT, host, port, access,
                        interval.multipliedBy(4), mapper, gate, maxBytes);
                return new SandboxMcpServer(server, sessions, endpoint, new CountDownLatch(1));
            } catch (Exception e) {
                server.close();
                throw new SandboxConfigurationException("SandboxMcpServer: cannot serve HTTP on " + host + ":" + port
                        + ": " + e.getMessage(), e);
            }
        }

        private McpServer.SyncSpecification<?> configure(McpServer.SyncSpecification<?> spec, McpJsonMapper mapper,
                                                         Sessions sessions, Calls calls) {
            McpSchema.ServerCapabilities.Builder caps = McpSchema.ServerCapabilities.builder().tools(false);
            if (!noResources) {
                caps.resources(false, false);
            }
            String instructions = tools.instructions();
            if (!noResources) {
                instructions += "- The workspace's files can also be read as MCP resources: "
                        + WorkspaceResources.PREFIX + "<path relative to /workspace>.\n";
            }
            spec.serverInfo(NAME, version())
                    .instructions(instructions)
                    .capabilities(caps.build())
                    .jsonMapper(mapper)
                    .tools(ToolBridge.specifications(tools, sessions, calls, mapper));
            if (!noResources) {
                spec.resourceTemplates(new ArrayList<>(List.of(WorkspaceResources.template(tools, sessions))))
                        .uriTemplateManagerFactory(WorkspaceResources.templateFactory());
            }
            return spec;
        }

        /**
         * Checks that an HTTP bind address is loopback, or that non-loopback was allowed with a token.
         *
         * @return whether the address is loopback
         */
        static boolean checkBind(String host, boolean nonLoopbackAllowed, boolean hasToken) {
            boolean loopback = isLoopback(host);
            if (!loopback && (!nonLoopbackAllowed || !hasToken)) {
                throw new SandboxConfigurationException("SandboxMcpServer: binding " + host + ", which is not a loopback "
                        + "address, needs both allowNonLoopback() (--allow-non-loopback) and a bearer token (--token)");
            }
            return loopback;
        }

        private static boolean isLoopback(String host) {
            try {
                for (InetAddress a : InetAddress.getAllByName(host)) {
                    if (!a.isLoopbackAddress()) {
                        return false;
                    }
                }
                return true;
            } catch (UnknownHostException e) {
                throw new SandboxConfigurationException("SandboxMcpServer: unknown HTTP host " + host, e);
            }
        }

        private static Duration max(Duration a, Duration b) {
            return a.compareTo(b) >= 0 ? a : b;
        }

        private static Duration positive(Duration d, String name) {
            Objects.requireNonNull(d, name);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " must be positive, got " + d);
            }
            return d;
        }

        private static void requireUnset(boolean unset, String option) {
            if (!unset) {
                throw new IllegalStateException(option + " was already set");
            }
        }
    }
}
