package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;

/**
 * The outcome of one exec. A non-zero {@link #exitCode()} is data, not an exception. Drivers build it with
 * {@link #builder()}; a final class rather than a record, so that it can gain fields without breaking them.
 */
public final class ExecResult {
    private final int exitCode;
    private final byte[] stdoutBytes;
    private final byte[] stderrBytes;
    private final boolean stdoutTruncated;
    private final boolean stderrTruncated;
    private final Termination termination;
    private final Duration duration;

    private ExecResult(int exitCode, byte @Nullable [] stdoutBytes, byte @Nullable [] stderrBytes, boolean stdoutTruncated,
                       boolean stderrTruncated, Termination termination, Duration duration) {
        stdoutBytes = stdoutBytes == null ? new byte[0] : stdoutBytes.clone();
        stderrBytes = stderrBytes == null ? new byte[0] : stderrBytes.clone();
        Objects.requireNonNull(termination, "termination");
        Objects.requireNonNull(duration, "duration");
        this.exitCode = exitCode;
        this.stdoutBytes = stdoutBytes;
        this.stderrBytes = stderrBytes;
        this.stdoutTruncated = stdoutTruncated;
        this.stderrTruncated = stderrTruncated;
        this.termination = termination;
        this.duration = duration;
    }

    /**
     * The process's exit code; 126/127 for a command that cannot run, 137 when killed.
     *
     * @return the process's exit code; 126/127 for a command that cannot run, 137 when killed
     */
    public int exitCode() {
        return exitCode;
    }

    /**
     * Whether stdout was longer than its limit.
     *
     * @return whether stdout was longer than its limit
     */
    public boolean stdoutTruncated() {
        return stdoutTruncated;
    }

    /**
     * Whether stderr was longer than its limit.
     *
     * @return whether stderr was longer than its limit
     */
    public boolean stderrTruncated() {
        return stderrTruncated;
    }

    /**
     * How the process ended.
     *
     * @return how the process ended
     */
    public Termination termination() {
        return termination;
    }

    /**
     * Wall time of the exec as seen by the library.
     *
     * @return wall time of the exec as seen by the library
     */
    public Duration duration() {
        return duration;
    }

    /**
     * Starts a builder; unset values are {@code null}, {@code 0} or {@code false} unless stated.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds a {@link ExecResult}. Not thread-safe; last write wins. */
    public static final class Builder {
        private int exitCode;
        private byte @Nullable [] stdoutBytes;
        private byte @Nullable [] stderrBytes;
        private boolean stdoutTruncated;
        private boolean stderrTruncated;
        private Termination termination = Termination.EXITED;
        private Duration duration = Duration.ZERO;

        private Builder() {
        }


        /**
         * Sets exitCode: the process's exit code; 126/127 for a command that cannot run, 137 when killed.
         *
         * @param value the value
         * @return this builder
         */
        public Builder exitCode(int value) {
            this.exitCode = value;
            return this;
        }

        /**
         * Sets stdoutBytes: captured stdout, at most the request's limit.
         *
         * @param value the value
         * @return this builder
         */
        public Builder stdoutBytes(byte @Nullable [] value) {
            this.stdoutBytes = value;
            return this;
        }

        /**
         * Sets stderrBytes: captured stderr, at most the request's limit.
         *
         * @param value the value
         * @return this builder
         */
        public Builder stderrBytes(byte @Nullable [] value) {
            this.stderrBytes = value;
            return this;
        }

        /**
         * Sets stdoutTruncated: whether stdout was longer than its limit.
         *
         * @param value the value
         * @return this builder
         */
        public Builder stdoutTruncated(boolean value) {
            this.stdoutTruncated = value;
            return this;
        }

        /**
         * Sets stderrTruncated: whether stderr was longer than its limit.
         *
         * @param value the value
         * @return this builder
         */
        public Builder stderrTruncated(boolean value) {
            this.stderrTruncated = value;
            return this;
        }

        /**
         * Sets termination: how the process ended.
         *
         * @param value the value
         * @return this builder
         */
        public Builder termination(Termination value) {
            this.termination = value;
            return this;
        }

        /**
         * Sets duration: wall time of the exec as seen by the library.
         *
         * @param value the value
         * @return this builder
         */
        public Builder duration(Duration value) {
            this.duration = value;
            return this;
        }

        /**
         * Builds the value.
         *
         * @return the value
         */
        public ExecResult build() {
            return new ExecResult(exitCode, stdoutBytes, stderrBytes, stdoutTruncated, stderrTruncated, termination,
                    duration);
        }
    }



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

    /**
     * Captured stdout, copied.
     *
     * @return bytes
     */
    public byte[] stdoutBytes() {
        return stdoutBytes.clone();
    }

    /**
     * Captured stderr, copied.
     *
     * @return bytes
     */
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
        return Objects.hash(exitCode, Arrays.hashCode(stdoutBytes), Arrays.hashCode(stderrBytes), termination,
                duration);
    }

    @Override
    public String toString() {
        return "ExecResult[exitCode=" + exitCode + ", termination=" + termination + ", stdout=" + stdoutBytes.length
                + " bytes" + (stdoutTruncated ? " (truncated)" : "") + ", stderr=" + stderrBytes.length + " bytes"
                + (stderrTruncated ? " (truncated)" : "") + ", duration=" + duration + "]";
    }
}
