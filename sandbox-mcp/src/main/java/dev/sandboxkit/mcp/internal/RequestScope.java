package dev.sandboxkit.mcp.internal;

/**
 * What the servlet filter around a request and the SDK's session factory, which the SDK calls synchronously on the
 * same thread while it handles an {@code initialize} POST, tell each other: the request's session key (so that a
 * session is bound to it from its start), and a refusal for the session limit (the SDK would turn any exception of
 * its factory into a 500 with a generic message; a full server answers 503 and says so).
 */
final class RequestScope {
    private static final ThreadLocal<RequestScope> CURRENT = new ThreadLocal<>();

    private final String sessionKey;
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
