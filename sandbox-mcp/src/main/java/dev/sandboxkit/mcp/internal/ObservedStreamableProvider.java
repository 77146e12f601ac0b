package dev.sandboxkit.mcp.internal;

import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import io.modelcontextprotocol.spec.McpStreamableServerTransport;
import io.modelcontextprotocol.spec.McpStreamableServerTransportProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Wraps the SDK's Streamable HTTP provider so that {@link Sessions} counts the MCP sessions and learns when each
 * ends (a client's DELETE, the idle sweep, server shutdown). A new session past the limit is refused before the SDK
 * creates it. Pass this to {@code McpServer.sync(...)}; the servlet in the container stays the SDK's own.
 *
 * <p>Each request's response stream passes {@link Calls}: a session that ends first answers its requests still in
 * flight with an error saying why (the SDK closed their streams empty), and a cancelled request's answer is dropped.
 *
 * <p>It also pings the sessions' open event streams itself, every {@code keepAlive}, each ping waiting up to
 * {@code pingTimeout} for its answer (the SDK's keep-alive waits only one interval, so a client busy for a little
 * longer lost its stream, and its late answer got {@code -32603 Unexpected response for unknown id}). A late answer
 * is accepted quietly. Build the SDK's servlet without its own keep-alive.
 *
 * <p>The SDK has no close hook, so each session it creates is handed out inside {@link ObservedSession}, a
 * delegating subclass. {@code ObservedSessionTest} checks that it overrides every public method of the SDK class,
 * so an SDK upgrade that adds one fails the build instead of silently bypassing the real session.
 */
public final class ObservedStreamableProvider implements McpStreamableServerTransportProvider {
    private static final Logger log = LoggerFactory.getLogger(ObservedStreamableProvider.class);
    private static final TypeRef<Object> ANY = new TypeRef<>() {
    };
    /** What a call still running when its session is deleted is told. */
    static final String SESSION_CLOSED = "The MCP session was closed (deleted, possibly from another connection) "
            + "while this call ran; the call was stopped. Start a new session to go on.";
    /** What a call still running at server shutdown is told. */
    static final String SHUTTING_DOWN = "sandbox-mcp is shutting down; this call was stopped. Reconnect when the "
            + "server is back and try again.";

    private final McpStreamableServerTransportProvider delegate;
    private final Sessions sessions;
    private final Calls calls;
    private final Duration pingTimeout;
    private final Map<String, ObservedSession> live = new ConcurrentHashMap<>();
    private final ScheduledExecutorService pinger;

    /**
     * Wraps a provider.
     *
     * @param delegate    the SDK's {@code HttpServletStreamableServerTransportProvider}, built without keep-alive
     * @param sessions    counts and cleans up the sessions
     * @param calls       the requests in flight
     * @param keepAlive   how often open event streams are pinged
     * @param pingTimeout how long a ping waits for its answer before the stream is let go
     */
    public ObservedStreamableProvider(McpStreamableServerTransportProvider delegate, Sessions sessions, Calls calls,
                                      Duration keepAlive, Duration pingTimeout) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.sessions = Objects.requireNonNull(sessions, "sessions");
        this.calls = Objects.requireNonNull(calls, "calls");
        this.pingTimeout = Objects.requireNonNull(pingTimeout, "pingTimeout");
        this.pinger = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sandbox-mcp-keep-alive");
            t.setDaemon(true);
            return t;
        });
        long every = keepAlive.toMillis();
        pinger.scheduleWithFixedDelay(this::pingAll, every, every, TimeUnit.MILLISECONDS);
    }

    /** Pings every session that has an event stream open and no ping outstanding. */
    private void pingAll() {
        try {
            live.values().forEach(this::ping);
        } catch (RuntimeException e) {
            log.warn("Keep-alive round failed: {}", e.toString()); // the next round comes all the same
        }
    }

    private void ping(ObservedSession s) {
        if (!s.hasListeningStream() || !s.pinging.compareAndSet(false, true)) {
            return;
        }
        s.sendRequest("ping", null, ANY).timeout(pingTimeout).subscribe(
                answer -> s.pinging.set(false),
                failure -> {
                    s.pinging.set(false);
                    if (failure instanceof TimeoutException) {
                        log.info("Session {} did not answer a keep-alive ping within {}; letting its event "
                                + "stream go", s.getId(), pingTimeout);
                    } else {
                        log.debug("Keep-alive ping to session {} failed: {}", s.getId(), failure.toString());
                    }
                    s.releaseListeningStream();
                },
                () -> s.pinging.set(false));
    }

    @Override
    public void setSessionFactory(McpStreamableServerSession.Factory factory) {
        delegate.setSessionFactory(initRequest -> {
            Sessions.Slot slot;
            try {
                slot = sessions.reserve();
            } catch (Sessions.SessionLimitException e) {
                RequestScope.refused(e.getMessage()); // runs on the request's thread: the error filter answers 503
                throw e;
            }
            McpStreamableServerSession.McpStreamableServerSessionInit init;
            try {
                init = factory.startSession(initRequest);
            } catch (RuntimeException e) {
                slot.cancel();
                throw e;
            }
            String id = init.session().getId();
            slot.open(id, RequestScope.sessionKey()); // bound to the initialize request's key, if it sent one
            ObservedSession observed = new ObservedSession(init.session(), this, () -> {
                live.remove(id);
                sessions.closed(id);
            });
            live.put(id, observed);
            return new McpStreamableServerSession.McpStreamableServerSessionInit(observed, init.initResult());
        });
    }

    @Override
    public Mono<Void> notifyClients(String method, Object params) {
        return delegate.notifyClients(method, params);
    }

    @Override
    public Mono<Void> notifyClient(String sessionId, String method, Object params) {
        return delegate.notifyClient(sessionId, method, params);
    }

    @Override
    public Mono<Void> closeGracefully() {
        return Mono.fromRunnable(pinger::shutdownNow).then(delegate.closeGracefully());
    }

    @Override
    public void close() {
        pinger.shutdownNow();
        delegate.close();
    }

    /** Before a session closes: its requests in flight are answered with why, and stopped. */
    private void abandon(String sessionId) {
        calls.abandon(sessionId, sessions.isClosing() ? SHUTTING_DOWN : SESSION_CLOSED);
    }

    @Override
    public List<String> protocolVersions() {
        return delegate.protocolVersions();
    }

    /**
     * An SDK session that runs a callback once when it is deleted or closed. Every method goes to the real
     * session; the superclass instance is an inert shell, never used.
     */
    static final class ObservedSession extends McpStreamableServerSession {
        private final McpStreamableServerSession real;
        private final ObservedStreamableProvider provider;
        private final CloseOnce closed;
        final AtomicBoolean pinging = new AtomicBoolean();

        ObservedSession(McpStreamableServerSession real, ObservedStreamableProvider provider, Runnable onClosed) {
            super(real.getId(), null, null, Duration.ofSeconds(10), Map.of(), Map.of());
            this.real = real;
            this.provider = provider;
            this.closed = new CloseOnce(onClosed);
        }

        @Override
        public String getId() {
            return real.getId();
        }

        @Override
        public void setMinLoggingLevel(McpSchema.LoggingLevel level) {
            real.setMinLoggingLevel(level);
        }

        @Override
        public boolean isNotificationForLevelAllowed(McpSchema.LoggingLevel level) {
            return real.isNotificationForLevelAllowed(level);
        }

        @Override
        public <T> Mono<T> sendRequest(String method, Object params, TypeRef<T> typeRef) {
            return real.sendRequest(method, params, typeRef);
        }

        @Override
        public Mono<Void> sendNotification(String method, Object params) {
            return real.sendNotification(method, params);
        }

        @Override
        public Mono<Void> delete() {
            return closed.after(Mono.fromRunnable(() -> provider.abandon(getId())).then(real.delete()));
        }

        @Override
        public boolean hasListeningStream() {
            return real.hasListeningStream();
        }

        @Override
        public boolean hasOpenStream() {
            return real.hasOpenStream();
        }

        @Override
        public McpStreamableServerSessionStream listeningStream(McpStreamableServerTransport transport) {
            return real.listeningStream(transport);
        }

        @Override
        public void releaseListeningStream() {
            real.releaseListeningStream();
        }

        @Override
        public Flux<McpSchema.JSONRPCMessage> replay(Object lastEventId) {
            return real.replay(lastEventId);
        }

        /** The servlet calls this on the request's thread, where the HTTP filter left the request's id. */
        @Override
        public McpStreamableServerSessionStream responseStream(McpStreamableServerTransport transport) {
            Object requestId = RequestScope.requestId();
            return real.responseStream(requestId == null ? transport
                    : provider.calls.track(getId(), requestId, transport));
        }

        @Override
        @SuppressWarnings("deprecation")
        public Mono<Void> responseStream(McpSchema.JSONRPCRequest request, McpStreamableServerTransport transport) {
            return real.responseStream(request, provider.calls.track(getId(), request.id(), transport));
        }

        @Override
        public Mono<Void> accept(McpSchema.JSONRPCNotification notification) {
            return real.accept(notification);
        }

        /** An answer to a request the session stopped waiting for (a late pong) is harmless: dropped quietly. */
        @Override
        public Mono<Void> accept(McpSchema.JSONRPCResponse response) {
            return real.accept(response).onErrorResume(e -> e instanceof McpError m && m.getMessage() != null
                    && m.getMessage().startsWith("Unexpected response for unknown id"), e -> {
                        log.debug("Session {}: a late answer to request {}, dropped", getId(), response.id());
                        return Mono.empty();
                    });
        }

        @Override
        public Mono<Void> closeGracefully() {
            return closed.after(Mono.fromRunnable(() -> provider.abandon(getId())).then(real.closeGracefully()));
        }

        @Override
        public void close() {
            try {
                provider.abandon(getId());
                real.close();
            } finally {
                closed.run();
            }
        }
    }
}
