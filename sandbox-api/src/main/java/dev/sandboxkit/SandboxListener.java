package dev.sandboxkit;

/**
 * Receives lifecycle events, for metrics, tracing or audit. Register with
 * {@link SandboxManager.Builder#listener(SandboxListener)}.
 *
 * <p><b>Threading:</b> events are delivered synchronously, on the thread that did the work: the caller's
 * thread for acquire, exec, release and destroy, a housekeeper thread (the manager's scheduler) for
 * reaping, lifetime kills and orphan removal. Calls may therefore be concurrent for different sessions.
 * Keep the listener fast and non-blocking; an exception it throws is logged and ignored.
 */
@FunctionalInterface
public interface SandboxListener {

    /**
     * Called for every event.
     *
     * @param event what happened; switch on its type
     */
    void onEvent(SandboxEvent event);
}
