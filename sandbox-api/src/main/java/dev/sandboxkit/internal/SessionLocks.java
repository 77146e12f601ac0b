package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxAcquireException;
import org.slf4j.MDC;

import java.util.function.Function;

/**
 * Runs lifecycle steps under a session's lifecycle lock. Events a step raises are delivered only once the lock is
 * released (a listener never runs under it), and a step that lost a compare-and-set is retried from a fresh read.
 */
final class SessionLocks {
    /** How often a step that keeps losing compare-and-sets is tried before the caller is told to retry. */
    static final int MAX_ATTEMPTS = 5;

    private final SessionRegistry sessions;
    private final Events events;

    SessionLocks(SessionRegistry sessions, Events events) {
        this.sessions = sessions;
        this.events = events;
    }

    /**
     * Runs a lifecycle step with the session's lifecycle lock held and the session id in the MDC. A step
     * that lost a compare-and-set ({@link StaleRecord}) is retried from a fresh read, a few times.
     */
    <T> T underLock(String sessionId, Function<SessionEntry, T> step) {
        try (MDC.MDCCloseable ignored = MDC.putCloseable(LifecycleEngine.MDC_SESSION, sessionId)) {
            for (int attempt = 1; ; attempt++) {
                SessionEntry e = sessions.entry(sessionId);
                lock(e);
                try {
                    if (!e.isGone()) {
                        return step.apply(e);
                    }
                } catch (StaleRecord stale) {
                    if (attempt >= MAX_ATTEMPTS) {
                        throw new SandboxAcquireException("session " + sessionId
                                + " kept changing under concurrent updates; try again", stale, true);
                    }
                } finally {
                    sessions.dropIfIdle(e);
                    unlock(e);
                }
            }
        }
    }

    /** Takes a session's lifecycle lock; events raised until it is released are delivered after. */
    void lock(SessionEntry e) {
        e.lifecycle.lock();
        events.enterStep();
    }

    /** Takes the lock if no other step holds it (the janitor skips a busy session rather than wait). */
    boolean tryLock(SessionEntry e) {
        if (!e.lifecycle.tryLock()) {
            return false;
        }
        events.enterStep();
        return true;
    }

    /** Releases the lock, then delivers the events the step raised (never under the lock). */
    void unlock(SessionEntry e) {
        e.lifecycle.unlock();
        events.exitStep();
    }
}
