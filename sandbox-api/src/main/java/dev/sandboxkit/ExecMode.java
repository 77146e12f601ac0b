package dev.sandboxkit;

/**
 * How a driver runs the commands of a sandbox. Callers see the same results in every mode (exit code,
 * separate stdout and stderr, env, working directory, stdin then EOF, timeout kills, caps, streaming);
 * the modes differ in speed only. Drivers without a fast path treat every mode as {@link #PLAIN}.
 *
 * <p>Docker: a plain exec costs one engine exec (about 40 ms: {@code runc exec}); the command channel
 * is one long-lived exec per sandbox running a small POSIX shell supervisor that carries many commands
 * (a few milliseconds each). The channel needs {@code /bin/sh}, {@code mkfifo} and a writable
 * {@code /tmp} or {@code /dev/shm} in the image.
 */
public enum ExecMode {
    /**
     * The default: the command channel when the sandbox can run it (probed once per sandbox, on its first
     * exec), otherwise plain execs. A request the channel cannot carry (see the driver's documentation,
     * for Docker: stdin over 4 MiB, arguments over 64 KiB, env names that are not shell identifiers) and
     * an exec beyond the channels a sandbox may hold at once use a plain exec.
     */
    AUTO,
    /**
     * Like {@link #AUTO}, but a sandbox that cannot run the command channel fails the exec with a
     * {@link SandboxExecException} naming the reason instead of falling back to plain execs. For tests
     * and for images known to support it.
     */
    CHANNEL,
    /** One backend exec per command (for Docker: create, start, inspect), never the command channel. */
    PLAIN
}
