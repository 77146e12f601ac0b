package dev.sandboxkit.internal;

/**
 * Whether the manager is closed (or closing). Set once by close(); every part that starts work checks it, so that
 * nothing new begins while close() tears the manager down.
 */
final class ClosedFlag {
    private final String instanceId;
    private volatile boolean closed;

    /** @param instanceId the manager's id, named in the refusal */
    ClosedFlag(String instanceId) {
        this.instanceId = instanceId;
    }

    /** Marks the manager closed; returns false if it was already. Calls that follow are refused. */
    boolean markClosed() {
        if (closed) {
            return false;
        }
        closed = true;
        return true;
    }

    boolean isClosed() {
        return closed;
    }

    /** Throws {@link IllegalStateException} if the manager is closed (or closing). */
    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("sandbox manager " + instanceId + " is closed");
        }
    }
}
