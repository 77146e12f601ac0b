package dev.sandboxkit.mcp.internal;

import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerTransport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The requests in flight, per MCP session and JSON-RPC id, so that what ends a request from outside reaches it:
 *
 * <ul>
 *   <li>the client's {@code notifications/cancelled}: the thread running the tool call is interrupted, which is
 *       how the core stops an exec (it kills the process in the sandbox, as on a timeout), and the answer is not
 *       sent, as the MCP specification asks;</li>
 *   <li>the end of the session (an HTTP {@code DELETE} from another connection, server shutdown, stdin's end):
 *       over HTTP each open request's stream first gets a JSON-RPC error saying why, instead of closing empty
 *       (the client would wait for its own timeout), then the call is stopped as above.</li>
 * </ul>
 *
 * <p>A tool call finds its request id in its transport context under {@value #REQUEST_ID}, put there by the HTTP
 * filter or the stdio session. Thread-safe.
 */
public final class Calls {
    /** The transport-context key of the request id. */
    public static final String REQUEST_ID = "dev.sandboxkit.requestId";

    private static final Logger log = LoggerFactory.getLogger(Calls.class);

    private final Map<Key, Call> calls = new ConcurrentHashMap<>();

    private record Key(String session, String id) {
    }

    /**
     * Wraps an HTTP request's response stream: an answer the request no longer wants (cancelled, or already
     * answered by {@link #abandon}) is dropped, and the stream can be answered when its session ends.
     *
     * @param session the MCP session id
     * @param id      the request's JSON-RPC id
     * @param stream  the SDK's stream for the response
     * @return the stream to hand to the SDK
     */
    public McpStreamableServerTransport track(String session, Object id, McpStreamableServerTransport stream) {
        Key key = key(session, id);
        if (key == null) {
            return stream;
        }
        Call call = calls.computeIfAbsent(key, k -> new Call(k, id));
        synchronized (call) {
            call.stream = stream;
        }
        return new Tracked(call, stream);
    }

    /**
     * A tool call starts on this thread; {@link #exit(Call)} must follow in a {@code finally}.
     *
     * @param session the MCP session id
     * @param id      the request's JSON-RPC id, or {@code null} if unknown (the call is then not tracked)
     * @return the call, perhaps cancelled already
     */
    public Call enter(String session, Object id) {
        Key key = key(session, id);
        Call call = key == null ? new Call(null, id) : calls.computeIfAbsent(key, k -> new Call(k, id));
        synchronized (call) {
            call.thread = Thread.currentThread();
        }
        return call;
    }

    /**
     * A tool call ends. Clears the interrupt a cancellation may have left, so that the thread goes back to its pool
     * clean.
     *
     * @param call what {@link #enter} returned
     */
    public void exit(Call call) {
        synchronized (call) {
            call.thread = null;
            if (call.cancelled) {
                Thread.interrupted(); // ours, from cancel(): not for whoever runs next on this thread
            }
        }
    }

    /**
     * The client cancelled a request: stops its call if it runs, and drops its answer.
     *
     * @param session the MCP session id
     * @param id      the cancelled request's id
     * @return whether such a request was in flight
     */
    public boolean cancel(String session, Object id) {
        Key key = key(session, id);
        Call call = key == null ? null : calls.get(key);
        if (call == null) {
            return false; // finished already, or never seen: the specification lets us ignore it
        }
        call.stop();
        return true;
    }

    /**
     * Whether an answer to this request should still be sent; it is the last word on it either way.
     *
     * @param session the MCP session id
     * @param id      the id the answer carries
     * @return {@code false} if the request was cancelled or answered already
     */
    public boolean sendable(String session, Object id) {
        Key key = key(session, id);
        Call call = key == null ? null : calls.get(key);
        if (call == null) {
            return true;
        }
        boolean send;
        synchronized (call) {
            send = !call.cancelled && !call.answered;
            call.answered = true;
        }
        calls.remove(key, call);
        return send;
    }

    /**
     * A session ends: every request still in flight gets {@code message} as a JSON-RPC error on its stream (HTTP),
     * and its call is stopped.
     *
     * @param session the MCP session id
     * @param message why, for the client
     */
    public void abandon(String session, String message) {
        List<Call> mine = new ArrayList<>();
        calls.forEach((k, c) -> {
            if (k.session().equals(session)) {
                mine.add(c);
            }
        });
        for (Call c : mine) {
            McpStreamableServerTransport answerOn = null;
            synchronized (c) {
                if (!c.answered && !c.cancelled && c.stream != null) {
                    answerOn = c.stream;
                }
                c.answered = true;
            }
            if (answerOn != null) {
                try {
                    answerOn.sendMessage(McpSchema.JSONRPCResponse.error(c.id,
                            new McpSchema.JSONRPCResponse.JSONRPCError(JsonRpc.SERVER_ERROR, message, null)), null)
                            .block();
                } catch (RuntimeException e) {
                    log.debug("Could not tell request {} of session {} that it ended: {}", c.id, session, e.toString());
                }
            }
            c.stop();
            calls.remove(c.key, c);
        }
    }

    /** The key of a JSON-RPC id: numbers by value (5 and 5.0 alike), strings as themselves. */
    private static Key key(String session, Object id) {
        if (session == null) {
            return null;
        }
        if (id instanceof Number n) {
            try {
                return new Key(session, "n" + new BigDecimal(n.toString()).stripTrailingZeros().toPlainString());
            } catch (NumberFormatException e) {
                return null;
            }
        }
        return id instanceof String s ? new Key(session, "s" + s) : null;
    }

    /** One request in flight. Guarded by itself. */
    public static final class Call {
        private final Key key;
        private final Object id;
        private Thread thread;
        private McpStreamableServerTransport stream;
        private boolean cancelled;
        private boolean answered;

        private Call(Key key, Object id) {
            this.key = key;
            this.id = id;
        }

        /**
         * Whether the request was cancelled, or its session ended.
         *
         * @return {@code true} once stopped
         */
        public synchronized boolean cancelled() {
            return cancelled;
        }

        private synchronized void stop() {
            if (!cancelled) {
                cancelled = true;
                if (thread != null) {
                    thread.interrupt(); // the core kills a running exec on interrupt, as on its timeout
                }
            }
        }
    }

    /** A response stream whose answer goes out only if the request still wants it. */
    private final class Tracked implements McpStreamableServerTransport {
        private final Call call;
        private final McpStreamableServerTransport delegate;

        Tracked(Call call, McpStreamableServerTransport delegate) {
            this.call = call;
            this.delegate = Objects.requireNonNull(delegate, "delegate");
        }

        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
            return sendMessage(message, null);
        }

        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message, String messageId) {
            return Mono.defer(() -> message instanceof McpSchema.JSONRPCResponse r && !sendable(call.key.session(), r.id())
                    ? Mono.empty() : delegate.sendMessage(message, messageId));
        }

        @Override
        public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
            return delegate.unmarshalFrom(data, typeRef);
        }

        @Override
        public Mono<Void> closeGracefully() {
            return Mono.fromRunnable(this::forget).then(delegate.closeGracefully());
        }

        @Override
        public void close() {
            forget();
            delegate.close();
        }

        @Override
        public List<String> protocolVersions() {
            return delegate.protocolVersions();
        }

        /** The stream is gone: nothing can be answered on it any more. */
        private void forget() {
            synchronized (call) {
                call.stream = null;
                if (call.thread == null) {
                    calls.remove(call.key, call);
                }
            }
        }
    }
}
