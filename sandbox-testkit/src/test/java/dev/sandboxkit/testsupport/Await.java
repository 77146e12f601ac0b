package dev.sandboxkit.testsupport;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waits on what happened, never on how long it took. Races and soaks run a number of rounds rather than for a fixed
 * time, so a loaded machine does the same work, only more slowly; the deadline bounds a run that can never get
 * there, and its failure says how far it got. Shared by the modules' real-engine tests (sandbox-testkit's test-jar).
 */
public final class Await {
    private Await() {
    }

    /** A round of work that may throw. */
    @FunctionalInterface
    public interface Round {
        /**
         * Does one round.
         *
         * @throws Exception whatever the round throws fails the run
         */
        void run() throws Exception;
    }

    /**
     * Polls {@code condition} until it holds.
     *
     * @param deadline how long to wait at most
     * @param condition what must become true
     * @param what what is awaited, for the failure
     * @throws AssertionError if the deadline passes first
     */
    public static void until(Duration deadline, BooleanSupplier condition, Supplier<String> what) {
        long end = System.nanoTime() + deadline.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("not within " + deadline + ": " + what.get());
            }
            pause(20);
        }
    }

    /**
     * Runs {@code round} again and again until {@code enough} holds (checked before each round).
     *
     * @param deadline how long the rounds may take at most (generous: it only bounds a run that cannot finish)
     * @param enough whether enough has happened
     * @param progress how far the run got, for the failure
     * @param round one round of work
     * @return the number of rounds run
     * @throws AssertionError if the deadline passes before enough has happened
     * @throws Exception what a round threw
     */
    public static int repeatUntil(Duration deadline, BooleanSupplier enough, Supplier<String> progress, Round round)
            throws Exception {
        long end = System.nanoTime() + deadline.toNanos();
        int rounds = 0;
        while (!enough.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("not enough happened within " + deadline + " (" + rounds + " rounds): "
                        + progress.get());
            }
            round.run();
            rounds++;
        }
        return rounds;
    }

    static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting", e);
        }
    }
}
