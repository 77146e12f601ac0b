package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.SessionRecord;

import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One session held by this manager. Kept small: a manager may hold tens of thousands.
 *
 * <p>Two locks, so that execs never wait for slow lifecycle work on other sessions: the {@link #lifecycle}
 * lock serialises create, resume, reap and destroy of this session (slow, talks to the backend); the
 * object monitor guards the fast exec bookkeeping ({@link #sandboxId}, {@link #inflight}). An exec takes
 * only the monitor, briefly.
 */
final class SessionEntry {
    final String sessionId;
    final ReentrantLock lifecycle = new ReentrantLock();

    /** The live container, or null when not active. Written under the monitor. */
    private volatile String sandboxId;
    /** Execs running now; a session with one running is never reaped. Written under the monitor. */
    private volatile int inflight;
    /** Epoch millis of the last acquire, exec start/end or keep-alive. */
    private volatile long lastActivity;
    /** The next exec is the container's first (reported as the first-exec phase). Guarded by the monitor. */
    private boolean firstExecPending;
    /** Set when the entry was dropped from the manager's map; holders must look the session up again. */
    private volatile boolean gone;
    /** A reap task for this entry is queued; avoids piling up duplicates. */
    volatile boolean reapQueued;
    /**
     * After a reap whose removal failed (engine unreachable): no new attempt before this epoch milli, and the
     * current back-off, so that an outage costs neither a retry per reaper tick nor a log line per session per tick.
     */
    volatile long reapRetryAt;
    volatile int reapBackoffMillis;

    // Written under the lifecycle lock; read by execs.
    volatile SessionRecord record;
    volatile SandboxSpec spec;
    /** Spec env + proxy + CA variables, shared by all sessions of a spec. */
    volatile Map<String, String> execEnv = Map.of();
    /** Epoch millis when the live container started (for the lifetime limit). */
    volatile long startedAt;
    /** This container's lifetime limit: the spec's, less a random 0-2.5%, or 0 for none. */
    volatile long lifetimeMillis;
    /** The container the janitor killed for exceeding its lifetime, so its running execs can say so. */
    volatile String lifetimeKilled;
    /** The container this manager last started a background process in: the reaper asks only that one. */
    volatile String processContainer;
    /** Last activity already written to the store (housekeeper only). */
    long flushedActivity;

    SessionEntry(String sessionId) {
        this.sessionId = sessionId;
    }

    /** Registers an exec if the session is live; returns the container to run in, or null. */
    synchronized String beginExec(long now) {
        String id = sandboxId;
        if (id == null) {
            return null;
        }
        inflight++;
        lastActivity = now;
        return id;
    }

    synchronized void endExec(long now) {
        inflight--;
        lastActivity = Math.max(lastActivity, now);
    }

    /** Resets the idle clock; returns whether the session is live. */
    boolean touch(long now) {
        if (sandboxId == null) {
            return false;
        }
        lastActivity = Math.max(lastActivity, now);
        return true;
    }

    synchronized void activate(SessionRecord rec, SandboxSpec sandboxSpec, Map<String, String> env, String id, long now,
                               long containerStart) {
        record = rec;
        spec = sandboxSpec;
        execEnv = env;
        startedAt = containerStart;
        lifetimeMillis = jittered(sandboxSpec.maxLifetime());
        lastActivity = now;
        flushedActivity = now;
        firstExecPending = true;
        sandboxId = id;
    }

    /** Whether the calling exec is the first in this container; true once per container. */
    synchronized boolean takeFirstExec() {
        boolean first = firstExecPending;
        firstExecPending = false;
        return first;
    }

    /** Whether the live container has outlived {@code lifetimeMillis}; lock-free pre-check for the janitor. */
    boolean outlived(long now) {
        long limit = lifetimeMillis;
        return sandboxId != null && limit > 0 && now - startedAt >= limit;
    }

    /**
     * A maximum lifetime less a random 0-2.5% (as HikariCP does), so that sandboxes started together, a warm
     * pool filled at once say, are not all killed at the same moment.
     */
    static long jittered(java.time.Duration maxLifetime) {
        if (maxLifetime == null) {
            return 0;
        }
        long millis = maxLifetime.toMillis();
        long spread = millis / 40;
        return Math.max(1, millis - (spread > 0 ? java.util.concurrent.ThreadLocalRandom.current().nextLong(spread + 1) : 0));
    }

    /**
     * Takes the container away from new execs if the session may be stopped now. With {@code onlyIfIdle},
     * refuses while an exec runs or while the idle TTL has not passed.
     *
     * @return the container id taken, or null if nothing was done
     */
    synchronized String deactivate(boolean onlyIfIdle, long now, long idleMillis) {
        String id = sandboxId;
        if (id == null || (onlyIfIdle && (inflight > 0 || now - lastActivity < idleMillis))) {
            return null;
        }
        sandboxId = null;
        return id;
    }

    /** Puts a container back after a stop that could not be completed (store unreachable). */
    synchronized void reactivate(String id) {
        sandboxId = id;
    }

    void markGone() {
        gone = true;
    }

    boolean isGone() {
        return gone;
    }

    String sandboxId() {
        return sandboxId;
    }

    int inflight() {
        return inflight;
    }

    long lastActivity() {
        return lastActivity;
    }

    boolean isActive() {
        return sandboxId != null;
    }

    /** Cheap, lock-free pre-check for the reaper scan; the reap itself re-checks under the monitor. */
    boolean idleFor(long now, long idleMillis) {
        return sandboxId != null && inflight == 0 && now - lastActivity >= idleMillis;
    }

    /** A stop that could not remove the container: back off before the next attempt (1 s doubling to 30 s). */
    void stopFailed(long now) {
        int backoff = reapBackoffMillis == 0 ? 1000 : Math.min(30_000, reapBackoffMillis * 2);
        reapBackoffMillis = backoff;
        reapRetryAt = now + backoff;
    }

    /** Whether the janitor may try to stop this session at {@code now} (no back-off pending). */
    boolean mayRetryStop(long now) {
        return now >= reapRetryAt;
    }
}
