package dev.sandboxkit.internal;

import java.time.Clock;
import java.time.Instant;

/**
 * Time as the store records it: instants at millisecond precision, and when an ownership lease taken at one of
 * them runs out.
 */
final class Leases {
    private final Clock clock;
    private final long leaseMillis;

    Leases(Clock clock, long leaseMillis) {
        this.clock = clock;
        this.leaseMillis = leaseMillis;
    }

    /**
     * The clock's instant at millisecond precision: what any store can keep exactly, so that a record read
     * back equals the one written (handles compare session incarnations by creation instant).
     */
    Instant now() {
        return Instant.ofEpochMilli(clock.millis());
    }

    /** When a lease taken at {@code now} runs out. */
    Instant lease(Instant now) {
        return now.plusMillis(leaseMillis);
    }
}
