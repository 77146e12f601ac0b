package dev.sandboxkit;

import java.util.Objects;

/**
 * How a {@link SandboxProcess#follow} ended: the process's status, where each stream's delivery stopped (to
 * follow on from there later) and how many bytes the listener missed because they fell out of the retained
 * window between two reads. Immutable.
 */
public final class FollowResult {
    private final ProcessStatus status;
    private final long stdoutOffset;
    private final long stderrOffset;
    private final long stdoutDropped;
    private final long stderrDropped;

    private FollowResult(ProcessStatus status, long stdoutOffset, long stderrOffset, long stdoutDropped,
                         long stderrDropped) {
        this.status = Objects.requireNonNull(status, "status");
        if (stdoutOffset < 0 || stderrOffset < 0 || stdoutDropped < 0 || stderrDropped < 0) {
            throw new IllegalArgumentException("offsets and counts must not be negative");
        }
        this.stdoutOffset = stdoutOffset;
        this.stderrOffset = stderrOffset;
        this.stdoutDropped = stdoutDropped;
        this.stderrDropped = stderrDropped;
    }

    /**
     * Creates a result (for drivers and tests).
     *
     * @param status        the process's status at the end
     * @param stdoutOffset  the stdout offset after the last byte delivered
     * @param stderrOffset  the stderr offset after the last byte delivered
     * @param stdoutDropped stdout bytes skipped because they were no longer retained
     * @param stderrDropped stderr bytes skipped because they were no longer retained
     * @return the result
     */
    public static FollowResult of(ProcessStatus status, long stdoutOffset, long stderrOffset, long stdoutDropped,
                                  long stderrDropped) {
        return new FollowResult(status, stdoutOffset, stderrOffset, stdoutDropped, stderrDropped);
    }

    /**
     * The process's status when following stopped: not {@link ProcessStatus.State#RUNNING} unless the handle was
     * closed meanwhile.
     *
     * @return the status
     */
    public ProcessStatus status() {
        return status;
    }

    /**
     * Where delivery of a stream stopped.
     *
     * @param stream the stream
     * @return the offset after the last byte delivered
     */
    public long nextOffset(ExecStream stream) {
        return stream == ExecStream.STDOUT ? stdoutOffset : stderrOffset;
    }

    /**
     * How many bytes of a stream the listener missed: written, but dropped from the retained window before they
     * were read.
     *
     * @param stream the stream
     * @return the count
     */
    public long droppedBytes(ExecStream stream) {
        return stream == ExecStream.STDOUT ? stdoutDropped : stderrDropped;
    }

    @Override
    public String toString() {
        return "FollowResult[" + status + ", stdout at " + stdoutOffset + " (dropped " + stdoutDropped
                + "), stderr at " + stderrOffset + " (dropped " + stderrDropped + ")]";
    }
}
