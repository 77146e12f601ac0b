package dev.sandboxkit;

/**
 * Receives lifecycle events, for metrics, tracing or audit. Register with
 * {@link SandboxManager.Builder#listener(SandboxListener)}.
 *
 * <p><b>Threading:</b> events are delivered synchronously, on a thread that did the work (the caller's thread
 * for acquire, exec, release and destroy, a housekeeper thread of the manager's scheduler for reaping, lifetime
 * kills and orphan removal) <em>after</em> it released the session's locks: a slow listener delays that thread,
 * never the lifecycle of the session or of others. A session's events arrive one at a time and in the order
 * they happened (if another thread is delivering that session's events, it delivers the new ones too); events
 * of different sessions may arrive concurrently. Several listeners receive each event in the order they were
 * added. An exception a listener throws is logged and ignored.
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
