package dev.sandboxkit.mcp.internal;

/**
 * Carries a refusal from code the SDK calls back to the servlet filter around the same request: the SDK turns any
 * exception of its session factory into a 500 with a generic message, while a full server should answer 503 and
 * say so. Both run on the request's thread (the SDK creates a session synchronously in {@code doPost}).
 */
final class HttpRefusal {
    private static final ThreadLocal<String[]> CURRENT = new ThreadLocal<>();

    private HttpRefusal() {
    }

    /** Starts listening on this thread; {@link #end()} must follow. */
    static void begin() {
        CURRENT.set(new String[1]);
    }

    /** Records a refusal, if a filter listens on this thread. */
    static void note(String message) {
        String[] slot = CURRENT.get();
        if (slot != null) {
            slot[0] = message;
        }
    }

    /** Stops listening; returns the refusal noted meanwhile, or {@code null}. */
    static String end() {
        String[] slot = CURRENT.get();
        CURRENT.remove();
        return slot == null ? null : slot[0];
    }
}
