package dev.sandboxkit.internal;

/** A compare-and-set lost to a concurrent writer: the lifecycle step starts over from a fresh read. */
final class StaleRecord extends RuntimeException {
    private static final long serialVersionUID = 1L;

    StaleRecord() {
        super("session record changed concurrently", null, false, false);
    }
}
