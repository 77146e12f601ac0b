package dev.sandboxkit.mcp.internal;

import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpServerSession;
import io.modelcontextprotocol.spec.McpServerTransport;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import reactor.core.publisher.Mono;

import java.util.List;
import java.util.Objects;

/**
 * Wraps the SDK's stdio transport provider so that {@link Sessions} learns when the one stdio session opens and
 * closes: the SDK has no hook for it, but its session always closes its transport, on stdin's end, on an unreadable
 * line and on server shutdown alike. Pass this to {@code McpServer.sync(...)}.
 */
public final class ObservedStdioProvider implements McpServerTransportProvider {
    private final McpServerTransportProvider delegate;
    private final Sessions sessions;
    private final Runnable onClosed;

    /**
     * Wraps a provider.
     *
     * @param delegate the SDK's {@code StdioServerTransportProvider}
     * @param sessions told about the session
     * @param onClosed run once after the session closed and its sandbox was cleaned up
     */
    public ObservedStdioProvider(McpServerTransportProvider delegate, Sessions sessions, Runnable onClosed) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.sessions = Objects.requireNonNull(sessions, "sessions");
        this.onClosed = Objects.requireNonNull(onClosed, "onClosed");
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
            return session;
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
                    sessions.closed(sessionId);
                }
            } finally {
                onClosed.run();
            }
        }

        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
            return delegate.sendMessage(message);
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
}
