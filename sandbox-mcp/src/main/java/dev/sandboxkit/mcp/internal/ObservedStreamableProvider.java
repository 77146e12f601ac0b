package dev.sandboxkit.mcp.internal;

import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import io.modelcontextprotocol.spec.McpStreamableServerTransport;
import io.modelcontextprotocol.spec.McpStreamableServerTransportProvider;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Wraps the SDK's Streamable HTTP provider so that {@link Sessions} counts the MCP sessions and learns when each
 * ends (a client's DELETE, the idle sweep, server shutdown). A new session past the limit is refused before the SDK
 * creates it. Pass this to {@code McpServer.sync(...)}; the servlet in the container stays the SDK's own.
 *
 * <p>The SDK has no close hook, so each session it creates is handed out inside {@link ObservedSession}, a
 * delegating subclass. {@code ObservedSessionTest} checks that it overrides every public method of the SDK class,
 * so an SDK upgrade that adds one fails the build instead of silently bypassing the real session.
 */
public final class ObservedStreamableProvider implements McpStreamableServerTransportProvider {
    private final McpStreamableServerTransportProvider delegate;
    private final Sessions sessions;

    /**
     * Wraps a provider.
     *
     * @param delegate the SDK's {@code HttpServletStreamableServerTransportProvider}
     * @param sessions counts and cleans up the sessions
     */
    public ObservedStreamableProvider(McpStreamableServerTransportProvider delegate, Sessions sessions) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.sessions = Objects.requireNonNull(sessions, "sessions");
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
            return new McpStreamableServerSession.McpStreamableServerSessionInit(
                    new ObservedSession(init.session(), () -> sessions.closed(id)), init.initResult());
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

    /**
     * An SDK session that runs a callback once when it is deleted or closed. Every method goes to the real
     * session; the superclass instance is an inert shell, never used.
     */
    static final class ObservedSession extends McpStreamableServerSession {
        private final McpStreamableServerSession real;
        private final CloseOnce closed;

        ObservedSession(McpStreamableServerSession real, Runnable onClosed) {
            super(real.getId(), null, null, Duration.ofSeconds(10), Map.of(), Map.of());
            this.real = real;
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
            return closed.after(real.delete());
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

        @Override
        public McpStreamableServerSessionStream responseStream(McpStreamableServerTransport transport) {
            return real.responseStream(transport);
        }

        @Override
        @SuppressWarnings("deprecation")
        public Mono<Void> responseStream(McpSchema.JSONRPCRequest request, McpStreamableServerTransport transport) {
            return real.responseStream(request, transport);
        }

        @Override
        public Mono<Void> accept(McpSchema.JSONRPCNotification notification) {
            return real.accept(notification);
        }

        @Override
        public Mono<Void> accept(McpSchema.JSONRPCResponse response) {
            return real.accept(response);
        }

        @Override
        public Mono<Void> closeGracefully() {
            return closed.after(real.closeGracefully());
        }

        @Override
        public void close() {
            try {
                real.close();
            } finally {
                closed.run();
            }
        }
    }
}
