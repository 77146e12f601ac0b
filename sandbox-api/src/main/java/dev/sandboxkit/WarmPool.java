package dev.sandboxkit;

import java.time.Duration;
import java.util.Objects;

/**
 * Keeps pre-started sandboxes for one spec, so that acquiring a new session skips container start-up.
 * A pooled sandbox goes to exactly one session and never returns to the pool. Register with
 * {@link SandboxManager.Builder#warmPool(WarmPool)}.
 *
 * @param spec        the spec the pooled sandboxes are started from; a new session acquired with an equal
 *                    spec is served from the pool
 * @param minSize     how many started sandboxes to keep waiting; refilled in the background after each checkout
 * @param maxSize     upper bound on waiting plus starting sandboxes
 * @param whenEmpty   what an acquire does when no pooled sandbox is waiting
 * @param waitTimeout how long {@link Exhausted#WAIT} waits
 */
public record WarmPool(SandboxSpec spec, int minSize, int maxSize, Exhausted whenEmpty, Duration waitTimeout) {

    /** What an acquire does when the pool is empty. */
    public enum Exhausted {
        /** Start a container the normal way (the default). */
        COLD_START,
        /** Wait up to {@link #waitTimeout()} for a pooled sandbox, then fail with a retryable acquire error. */
        WAIT,
        /** Fail at once with a retryable {@link SandboxAcquireException}. */
        FAIL_FAST
    }

    /** Validates. */
    public WarmPool {
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(whenEmpty, "whenEmpty");
        Objects.requireNonNull(waitTimeout, "waitTimeout");
        if (minSize < 0 || maxSize < 1 || maxSize < minSize) {
            throw new IllegalArgumentException("need 0 <= minSize <= maxSize and maxSize >= 1, got " + minSize + "/" + maxSize);
        }
        if (waitTimeout.isNegative()) {
            throw new IllegalArgumentException("waitTimeout must not be negative");
        }
    }

    /**
     * A pool of {@code size} sandboxes that falls back to a cold start when empty.
     *
     * @param spec the spec
     * @param size how many to keep started
     * @return the pool settings
     */
    public static WarmPool of(SandboxSpec spec, int size) {
        return new WarmPool(spec, size, Math.max(1, size), Exhausted.COLD_START, Duration.ZERO);
    }

    /**
     * A copy with another exhaustion policy.
     *
     * @param policy  what to do when empty
     * @param timeout how long {@link Exhausted#WAIT} waits
     * @return the new settings
     */
    public WarmPool whenEmpty(Exhausted policy, Duration timeout) {
        return new WarmPool(spec, minSize, maxSize, policy, timeout);
    }

    /**
     * A copy with another maximum size.
     *
     * @param max upper bound on waiting plus starting sandboxes
     * @return the new settings
     */
    public WarmPool maxSize(int max) {
        return new WarmPool(spec, minSize, max, whenEmpty, waitTimeout);
    }
}
