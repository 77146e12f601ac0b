package dev.sandboxkit.mcp.internal;

/**
 * What the servlet filters around a request and the SDK's code that runs synchronously on the same thread (its
 * session factory on an {@code initialize} POST, the transport-context extractor, the session's response stream)
 * tell each other: the request's session key (so that a session is bound to it from its start), its JSON-RPC id (so
 * that {@link Calls} can reach the request), and a refusal for the session limit (the SDK would turn any exception
 * of its factory into a 500 with a generic message; a full server answers 503 and says so).
 */
final class RequestScope {
    private static final ThreadLocal<RequestScope> CURRENT = new ThreadLocal<>();

    private final String sessionKey;
    private Object requestId;
    private String refusal;

    private RequestScope(String sessionKey) {
        this.sessionKey = sessionKey;
    }

    /** Starts the scope of a request on this thread; {@link #end()} must follow. */
    static void begin(String sessionKey) {
        CURRENT.set(new RequestScope(sessionKey));
    }

    /** The {@value Sessions#SESSION_HEADER} of the request this thread handles, or {@code null}. */
    static String sessionKey() {
        RequestScope s = CURRENT.get();
        return s == null ? null : s.sessionKey;
    }

    /** Records the JSON-RPC id of the request this thread handles. */
    static void requestId(Object id) {
        RequestScope s = CURRENT.get();
        if (s != null) {
            s.requestId = id;
        }
    }

    /** The JSON-RPC id of the request this thread handles, or {@code null}. */
    static Object requestId() {
        RequestScope s = CURRENT.get();
        return s == null ? null : s.requestId;
    }

    /** The refusal noted for this thread's request so far, or {@code null}. */
    static String refusal() {
        RequestScope s = CURRENT.get();
        return s == null ? null : s.refusal;
    }

    /** Records that the request's new session was refused, if a filter listens on this thread. */
    static void refused(String message) {
        RequestScope s = CURRENT.get();
        if (s != null) {
            s.refusal = message;
        }
    }

    /** Ends the scope; returns the refusal noted meanwhile, or {@code null}. */
    static String end() {
        RequestScope s = CURRENT.get();
        CURRENT.remove();
        return s == null ? null : s.refusal;
    }
}
