package dev.sandboxkit.mcp.internal;

import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpServerSession;
import io.modelcontextprotocol.spec.McpServerTransport;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Wraps the SDK's stdio transport provider so that {@link Sessions} learns when the one stdio session opens and
 * closes: the SDK has no hook for it, but its session always closes its transport, on stdin's end, on an unreadable
 * line and on server shutdown alike. The session's requests carry their id in their transport context, and its
 * answers pass {@link Calls}: a cancelled request's answer is dropped. Pass this to {@code McpServer.sync(...)}.
 */
public final class ObservedStdioProvider implements McpServerTransportProvider {
    private final McpServerTransportProvider delegate;
    private final Sessions sessions;
    private final Calls calls;
    private final Runnable onClosed;
    private volatile String sessionId;

    /**
     * Wraps a provider.
     *
     * @param delegate the SDK's {@code StdioServerTransportProvider}
     * @param sessions told about the session
     * @param calls    the requests in flight
     * @param onClosed run once after the session closed and its sandbox was cleaned up
     */
    public ObservedStdioProvider(McpServerTransportProvider delegate, Sessions sessions, Calls calls,
                                 Runnable onClosed) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.sessions = Objects.requireNonNull(sessions, "sessions");
        this.calls = Objects.requireNonNull(calls, "calls");
        this.onClosed = Objects.requireNonNull(onClosed, "onClosed");
    }

    /**
     * The id of the stdio session, once the SDK created it.
     *
     * @return the MCP session id, or {@code null} before
     */
    public String sessionId() {
        return sessionId;
    }

    @Override
    public void setSessionFactory(McpServerSession.Factory factory) {
        delegate.setSessionFactory(transport -> {
            Sessions.Slot slot = sessions.reserve();
            ObservedTransport observed = new ObservedTransport(transport);
            McpServerSession session;
            try {
                session = factory.create(observed);
            } catch (RuntimeException e) {
                slot.cancel();
                throw e;
            }
            slot.open(session.getId(), null);
            observed.sessionId = session.getId();
            sessionId = session.getId();
            return new ContextSession(session);
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
        return delegate.closeGracefully();
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public List<String> protocolVersions() {
        return delegate.protocolVersions();
    }

    /** The session's transport, reporting its close once. */
    private final class ObservedTransport implements McpServerTransport {
        private final McpServerTransport delegate;
        private final CloseOnce closed = new CloseOnce(this::cleanUp);
        volatile String sessionId;

        ObservedTransport(McpServerTransport delegate) {
            this.delegate = delegate;
        }

        private void cleanUp() {
            try {
                if (sessionId != null) {
                    calls.abandon(sessionId, "The MCP session ended while the call ran; the call was stopped.");
                    sessions.closed(sessionId);
                }
            } finally {
                onClosed.run();
            }
        }

        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
            return Mono.defer(() -> message instanceof McpSchema.JSONRPCResponse r && sessionId != null
                    && !calls.sendable(sessionId, r.id()) ? Mono.empty() : delegate.sendMessage(message));
        }

        @Override
        public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
            return delegate.unmarshalFrom(data, typeRef);
        }

        @Override
        public Mono<Void> closeGracefully() {
            return closed.after(delegate.closeGracefully());
        }

        @Override
        public void close() {
            try {
                delegate.close();
            } finally {
                closed.run();
            }
        }

        @Override
        public List<String> protocolVersions() {
            return delegate.protocolVersions();
        }
    }

    /**
     * The SDK's session with each request's id in its transport context ({@link Calls#REQUEST_ID}), where a tool
     * call finds it. Every method goes to the real session; the superclass instance is an inert shell, never used
     * ({@code ObservedSessionTest} checks that every public method is delegated).
     */
    static final class ContextSession extends McpServerSession {
        private final McpServerSession real;

        ContextSession(McpServerSession real) {
            super(real.getId(), Duration.ofSeconds(10), null, null, Map.of(), Map.of());
            this.real = real;
        }

        @Override
        public String getId() {
            return real.getId();
        }

        @Override
        public void init(McpSchema.ClientCapabilities clientCapabilities, McpSchema.Implementation clientInfo) {
            real.init(clientCapabilities, clientInfo);
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
        public Mono<Void> handle(McpSchema.JSONRPCMessage message) {
            if (message instanceof McpSchema.JSONRPCRequest r && r.id() != null) {
                return real.handle(message).contextWrite(ctx -> ctx.put(McpTransportContext.KEY,
                        McpTransportContext.create(Map.of(Calls.REQUEST_ID, r.id()))));
            }
            return real.handle(message);
        }

        @Override
        public Mono<Void> closeGracefully() {
            return real.closeGracefully();
        }

        @Override
        public void close() {
            real.close();
        }
    }
}
