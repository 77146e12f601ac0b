package dev.sandboxkit.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A clock that only moves when a test moves it, so idle TTLs and lifetimes can be tested without
 * sleeping. Thread-safe. Pair it with {@link ManualScheduler} to run the reaper at the new time.
 */
public final class ManualClock extends Clock {
    private final AtomicReference<Instant> now;
    private final ZoneId zone;

    /** A clock at 2026-01-01T00:00:00Z. */
    public ManualClock() {
        this(Instant.parse("2026-01-01T00:00:00Z"));
    }

    /**
     * A clock at the given instant.
     *
     * @param start the initial instant
     */
    public ManualClock(Instant start) {
        this(new AtomicReference<>(Objects.requireNonNull(start, "start")), ZoneOffset.UTC);
    }

    private ManualClock(AtomicReference<Instant> now, ZoneId zone) {
        this.now = now;
        this.zone = zone;
    }

    /**
     * Moves time forward.
     *
     * @param amount how far; must not be negative
     * @return the new instant
     */
    public Instant advance(Duration amount) {
        if (amount.isNegative()) {
            throw new IllegalArgumentException("time only moves forward: " + amount);
        }
        return now.updateAndGet(t -> t.plus(amount));
    }

    /**
     * Sets the time; it may not move backwards.
     *
     * @param instant the new instant
     */
    public void set(Instant instant) {
        now.updateAndGet(t -> {
            if (instant.isBefore(t)) {
                throw new IllegalArgumentException("time only moves forward: " + instant + " < " + t);
            }
            return instant;
        });
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    @Override
    public ZoneId getZone() {
        return zone;
    }

    @Override
    public Clock withZone(ZoneId newZone) {
        return new ManualClock(now, newZone);
    }

    @Override
    public String toString() {
        return "ManualClock[" + now.get() + "]";
    }
}
