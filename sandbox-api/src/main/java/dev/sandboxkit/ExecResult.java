package dev.sandboxkit;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;

/**
 * The outcome of one exec. A non-zero {@link #exitCode()} is data, not an exception.
 *
 * @param exitCode        the process's exit code; 126/127 for a command that cannot run, 137 when killed
 * @param stdoutBytes     captured stdout, at most the request's limit
 * @param stderrBytes     captured stderr, at most the request's limit
 * @param stdoutTruncated whether stdout was longer than its limit
 * @param stderrTruncated whether stderr was longer than its limit
 * @param termination     how the process ended
 * @param duration        wall time of the exec as seen by the library
 */
public record ExecResult(
        int exitCode,
        byte[] stdoutBytes,
        byte[] stderrBytes,
        boolean stdoutTruncated,
        boolean stderrTruncated,
        Termination termination,
        Duration duration) {

    /** How an exec ended. */
    public enum Termination {
        /** The process exited on its own. */
        EXITED,
        /** The request's timeout passed and the process was killed. */
        TIMED_OUT,
        /** The sandbox reached its maximum lifetime and was killed during the exec. */
        LIFETIME_EXCEEDED,
        /** The sandbox was destroyed or removed while the exec ran. */
        KILLED
    }

    /** Validates and copies. */
    public ExecResult {
        stdoutBytes = stdoutBytes == null ? new byte[0] : stdoutBytes.clone();
        stderrBytes = stderrBytes == null ? new byte[0] : stderrBytes.clone();
        Objects.requireNonNull(termination, "termination");
        Objects.requireNonNull(duration, "duration");
    }

    /**
     * Captured stdout, copied.
     *
     * @return bytes
     */
    @Override
    public byte[] stdoutBytes() {
        return stdoutBytes.clone();
    }

    /**
     * Captured stderr, copied.
     *
     * @return bytes
     */
    @Override
    public byte[] stderrBytes() {
        return stderrBytes.clone();
    }

    /**
     * Captured stdout decoded as UTF-8.
     *
     * @return text
     */
    public String stdout() {
        return new String(stdoutBytes, StandardCharsets.UTF_8);
    }

    /**
     * Captured stderr decoded as UTF-8.
     *
     * @return text
     */
    public String stderr() {
        return new String(stderrBytes, StandardCharsets.UTF_8);
    }

    /**
     * Whether the process was killed because the request's timeout passed.
     *
     * @return {@code true} if timed out
     */
    public boolean timedOut() {
        return termination == Termination.TIMED_OUT;
    }

    /**
     * Whether the sandbox's maximum lifetime ended the exec.
     *
     * @return {@code true} if the lifetime limit killed it
     */
    public boolean lifetimeExceeded() {
        return termination == Termination.LIFETIME_EXCEEDED;
    }

    /**
     * Whether the process exited on its own with code 0.
     *
     * @return {@code true} on success
     */
    public boolean isSuccess() {
        return termination == Termination.EXITED && exitCode == 0;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ExecResult r && exitCode == r.exitCode && Arrays.equals(stdoutBytes, r.stdoutBytes)
                && Arrays.equals(stderrBytes, r.stderrBytes) && stdoutTruncated == r.stdoutTruncated
                && stderrTruncated == r.stderrTruncated && termination == r.termination && duration.equals(r.duration);
    }

    @Override
    public int hashCode() {
        return Objects.hash(exitCode, Arrays.hashCode(stdoutBytes), Arrays.hashCode(stderrBytes), termination, duration);
    }

    @Override
    public String toString() {
        return "ExecResult[exitCode=" + exitCode + ", termination=" + termination + ", stdout=" + stdoutBytes.length
                + " bytes" + (stdoutTruncated ? " (truncated)" : "") + ", stderr=" + stderrBytes.length + " bytes"
                + (stderrTruncated ? " (truncated)" : "") + ", duration=" + duration + "]";
    }
}
