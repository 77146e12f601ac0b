package dev.sandboxkit.internal;

/**
 * The engine operations its parts call back: the reaper and the orphan sweep decide, the live operations ask for
 * a resume or an unarchive, and the engine carries out each step under the session's lifecycle lock.
 */
interface LifecycleActions {

    /** Reaps (or lifetime-kills) the session if it is still due; returns whether it did. */
    boolean reapIfIdle(SessionEntry e);

    /** Finishes a destroy that did not complete; returns whether it finished now. */
    boolean retryDestroy(String sessionId);

    /** The container stopped answering: remove what is left and record the session SUSPENDED. */
    void forgetContainer(SessionEntry e, String sandboxId);

    /** Unpacks an archived session's workdir on this host; returns the record naming it. */
    dev.sandboxkit.spi.SessionRecord unarchive(String sessionId);


    /** Whether the manager is closed (or closing). */
    boolean isClosed();

    /** Throws {@link IllegalStateException} if the manager is closed (or closing). */
    void checkOpen();

    /**
     * Brings a suspended session back with a fresh container, under its lifecycle lock; does nothing if it is live.
     *
     * @param incarnation the handle's incarnation (a later session reusing the id is not resumed), or null
     * @throws dev.sandboxkit.SandboxNotFoundException if the session (or that incarnation) is gone
     */
    void resume(String sessionId, java.time.Instant incarnation);
}
