package dev.sandboxkit;

import java.util.Objects;

/**
 * How {@link Sandbox#start(ExecRequest, ProcessOptions)} runs a background process. Immutable; the {@code with*}
 * methods return copies. A final class rather than a record, so that it can gain options (a terminal, say)
 * without breaking callers.
 */
public final class ProcessOptions {
    /** Output bytes kept per stream unless set: 1 MiB. */
    public static final int DEFAULT_RETAINED_BYTES = 1024 * 1024;
    /** The least that can be kept per stream: 64 KiB. */
    public static final int MIN_RETAINED_BYTES = 64 * 1024;
    /**
     * The most that can be kept per stream: 256 MiB. Both streams live in the sandbox's {@code /tmp} tmpfs
     * (64 MiB unless {@link SandboxSpec} sizes it), which must hold them.
     */
    public static final int MAX_RETAINED_BYTES = 256 * 1024 * 1024;

    private static final ProcessOptions DEFAULTS = new ProcessOptions(true, DEFAULT_RETAINED_BYTES);

    private final boolean countsAsActivity;
    private final int retainedBytes;

    private ProcessOptions(boolean countsAsActivity, int retainedBytes) {
        if (retainedBytes < MIN_RETAINED_BYTES || retainedBytes > MAX_RETAINED_BYTES) {
            throw new IllegalArgumentException("retainedBytes must be " + MIN_RETAINED_BYTES + ".."
                    + MAX_RETAINED_BYTES + ": " + retainedBytes);
        }
        this.countsAsActivity = countsAsActivity;
        this.retainedBytes = retainedBytes;
    }

    /**
     * The defaults: counts as activity, 1 MiB kept per stream.
     *
     * @return the default options
     */
    public static ProcessOptions defaults() {
        return DEFAULTS;
    }

    /**
     * Whether the process, while it runs, holds off the idle TTL as a running exec does. Turn it off for servers
     * that run forever, so that an unused sandbox is still reaped (which kills them).
     *
     * @param counts {@code false} to let the sandbox be reaped while the process runs
     * @return a copy with the setting
     */
    public ProcessOptions withCountsAsActivity(boolean counts) {
        return new ProcessOptions(counts, retainedBytes);
    }

    /**
     * How many of the newest output bytes the sandbox keeps per stream. The window moves on in quarters of it
     * ({@code bytes / 4}, rounded down): the sandbox never keeps more than {@code bytes}, and at least three
     * quarters are readable. Older bytes are dropped, and reads say so.
     *
     * @param bytes {@value #MIN_RETAINED_BYTES}..{@value #MAX_RETAINED_BYTES}, kept as given
     * @return a copy with the setting
     */
    public ProcessOptions withRetainedBytes(int bytes) {
        return new ProcessOptions(countsAsActivity, bytes);
    }

    /**
     * Whether the running process counts as activity.
     *
     * @return {@code true} unless turned off
     */
    public boolean countsAsActivity() {
        return countsAsActivity;
    }

    /**
     * Output bytes kept per stream.
     *
     * @return the retained window
     */
    public int retainedBytes() {
        return retainedBytes;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ProcessOptions p && p.countsAsActivity == countsAsActivity
                && p.retainedBytes == retainedBytes;
    }

    @Override
    public int hashCode() {
        return Objects.hash(countsAsActivity, retainedBytes);
    }

    @Override
    public String toString() {
        return "ProcessOptions[countsAsActivity=" + countsAsActivity + ", retainedBytes=" + retainedBytes + "]";
    }
}
