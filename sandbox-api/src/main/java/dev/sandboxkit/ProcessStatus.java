package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

import java.util.Objects;

/**
 * The state of a {@link SandboxProcess} at one moment: running, exited with a code, killed by a signal, or lost.
 * Immutable. Read from the container on every {@link SandboxProcess#status()}, so it is never
 * {@link State#RUNNING} for a process whose container is gone.
 */
public final class ProcessStatus {
    /** What became of a process. */
    public enum State {
        /** The command runs (or is just starting). */
        RUNNING,
        /** The command ended on its own; see {@link #exitCode()}. */
        EXITED,
        /**
         * The command was ended by a signal sent through {@link SandboxProcess#signal}, {@link SandboxProcess#kill}
         * or the request's timeout; see {@link #signal()}. A signal from elsewhere (a {@code kill} in another exec,
         * the OOM killer) shows as {@link #EXITED} with 128 + its number, as a shell reports it.
         */
        SIGNALED,
        /**
         * Nothing can be known any more: its container is gone (reaped, destroyed, replaced after a resume), it
         * was {@linkplain SandboxProcess#remove() removed}, it never existed in this sandbox, or its supervisor was
         * killed from inside the sandbox. {@link #reason()} says which, where known.
         */
        LOST
    }

    private static final ProcessStatus RUNNING = new ProcessStatus(State.RUNNING, -1, 0, null);

    private final State state;
    private final int exitCode;
    private final int signal;
    private final @Nullable String reason;

    private ProcessStatus(State state, int exitCode, int signal, @Nullable String reason) {
        this.state = state;
        this.exitCode = exitCode;
        this.signal = signal;
        this.reason = reason;
    }

    /**
     * A running process.
     *
     * @return the status
     */
    public static ProcessStatus running() {
        return RUNNING;
    }

    /**
     * A process that ended with an exit code.
     *
     * @param exitCode 0..255
     * @return the status
     */
    public static ProcessStatus exited(int exitCode) {
        if (exitCode < 0 || exitCode > 255) {
            throw new IllegalArgumentException("exit code must be 0..255: " + exitCode);
        }
        return new ProcessStatus(State.EXITED, exitCode, 0, null);
    }

    /**
     * A process ended by a signal.
     *
     * @param signal the signal number, 1..64
     * @return the status
     */
    public static ProcessStatus signaled(int signal) {
        if (signal < 1 || signal > 64) {
            throw new IllegalArgumentException("signal must be 1..64: " + signal);
        }
        return new ProcessStatus(State.SIGNALED, -1, signal, null);
    }

    /**
     * A process that can no longer be reached.
     *
     * @param reason why, in words (for example that its sandbox was reaped)
     * @return the status
     */
    public static ProcessStatus lost(String reason) {
        Objects.requireNonNull(reason, "reason");
        return new ProcessStatus(State.LOST, -1, 0, reason);
    }

    /**
     * What became of the process.
     *
     * @return the state
     */
    public State state() {
        return state;
    }

    /**
     * The exit code.
     *
     * @return 0..255 when {@link State#EXITED}, else -1
     */
    public int exitCode() {
        return exitCode;
    }

    /**
     * The signal that ended the process.
     *
     * @return its number when {@link State#SIGNALED}, else 0
     */
    public int signal() {
        return signal;
    }

    /**
     * Why the process is lost.
     *
     * @return the reason when {@link State#LOST}, else null
     */
    public @Nullable String reason() {
        return reason;
    }

    /**
     * Whether the process runs.
     *
     * @return {@code true} for {@link State#RUNNING}
     */
    public boolean isRunning() {
        return state == State.RUNNING;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ProcessStatus s && s.state == state && s.exitCode == exitCode && s.signal == signal
                && Objects.equals(s.reason, reason);
    }

    @Override
    public int hashCode() {
        return Objects.hash(state, exitCode, signal, reason);
    }

    @Override
    public String toString() {
        switch (state) {
            case EXITED:
                return "EXITED(" + exitCode + ")";
            case SIGNALED:
                return "SIGNALED(" + signal + ")";
            case LOST:
                return "LOST(" + reason + ")";
            default:
                return "RUNNING";
        }
    }
}
