package dev.sandboxkit;

/**
 * A handle on one session's sandbox, returned by {@link SandboxManager#acquire}. Thread-safe: several
 * threads may exec at once. The handle survives idle reaping: the next exec resumes transparently
 * with a fresh container on the same workdir. It stops working once the session is destroyed.
 *
 * <p>{@link #close()} releases the handle, so a try-with-resources block suits single-use
 * ({@linkplain SandboxSpec#ephemeral() ephemeral}) sandboxes.
 */
public interface Sandbox extends AutoCloseable {

    /**
     * The session this sandbox belongs to.
     *
     * @return the session id
     */
    String sessionId();

    /**
     * Runs a command and waits for it. Resumes the session first if it was reaped.
     *
     * @param request what to run
     * @return the result; a non-zero exit code or a timeout is reported here, not thrown. If the container is
     *         removed while the command runs, the result says {@link ExecResult.Termination#KILLED} (or
     *         {@code LIFETIME_EXCEEDED} when the janitor killed it for its maximum lifetime)
     * @throws SandboxNotFoundException    if the session was destroyed, is being destroyed, or was released
     *                                     (ephemeral)
     * @throws SandboxAcquireException     if the session had to be resumed and that failed, for example because
     *                                     another live manager holds it (retryable)
     * @throws SandboxUnavailableException if the backend cannot be reached (retryable)
     * @throws SandboxExecException        if the command could not be run or its output not read
     * @throws SessionStoreException       if resuming needed the store and it failed
     * @throws SandboxUnsupportedException if the request asks for a terminal ({@link ExecRequest#withTty}) and the
     *                                     driver has none
     */
    ExecResult exec(ExecRequest request);

    /**
     * Runs a program with arguments, without a shell.
     *
     * @param argv program and arguments
     * @return the result
     */
    default ExecResult exec(String... argv) {
        return exec(ExecRequest.of(argv));
    }

    /**
     * A fresh snapshot of the session.
     *
     * @return the session's info
     * @throws SandboxNotFoundException if the session no longer exists
     */
    SessionInfo info();

    /**
     * Host-side access to this session's workdir: read, write, list, delete, tar upload and download. Works
     * while the session is suspended (no container is started) and never follows what the sandbox planted.
     *
     * @return the files API for this session; calls throw {@link SandboxNotFoundException} once it is destroyed
     */
    SandboxFiles files();

    /**
     * Opens a stateful shell session: the working directory and exported variables carry over between its
     * commands (see {@link ShellSession} for what carries over and when the session ends). Resumes the
     * session first if it was reaped. Works on every driver whose image has {@code /bin/sh}; each command is
     * one exec (on Docker, on the command channel when the sandbox has one).
     *
     * @return the new shell session; close it when done
     * @throws SandboxNotFoundException if the session was destroyed or released (ephemeral)
     * @throws SandboxExecException     if the sandbox could not set up the session's state (no {@code /bin/sh},
     *                                  no writable {@code /tmp} or {@code /dev/shm})
     */
    ShellSession shell();

    /**
     * Starts a command on a pseudo-terminal and returns at once: raw bytes in and out, resize, wait for the exit
     * (see {@link Terminal}). Resumes the session first if it was reaped. The request's env, working directory
     * and timeout apply; {@link ExecRequest#stdin()} bytes, if any, are typed first; its output caps and
     * listener do not (read {@link Terminal#output()}).
     *
     * <pre>{@code
     * try (Terminal t = sandbox.terminal(ExecRequest.of("sh", "-i").withTty(TerminalSize.of(120, 40)))) {
     *     t.input().write("echo hi
".getBytes(UTF_8));
     *     ... read t.output() ...
     * }
     * }</pre>
     *
     * @param request what to run; it must carry a terminal size ({@link ExecRequest#withTty})
     * @return the running terminal; close it when done
     * @throws IllegalArgumentException     if the request has no {@link ExecRequest#tty()}
     * @throws SandboxUnsupportedException  if the sandbox's driver has no terminals
     * @throws SandboxNotFoundException     if the session was destroyed or released (ephemeral)
     * @throws SandboxExecException         if the command could not be started
     */
    default Terminal terminal(ExecRequest request) {
        throw new SandboxUnsupportedException("this sandbox handle has no terminals");
    }

    /** Resets the idle clock without running anything. */
    void keepAlive();

    /**
     * Ends this use of the sandbox, so that one try-with-resources block fits both modes.
     * <ul>
     *   <li><b>Ephemeral</b>: the container is hard-killed and the workdir purged at once; the session is never
     *       used again.</li>
     *   <li><b>Persistent</b>: nothing is stopped. The container keeps running until the idle TTL, counted from the
     *       last activity (a release is not activity), the handle stays usable, and the next acquire or exec
     *       reuses the container at once. Call {@link #destroy()} to remove it now.</li>
     * </ul>
     *
     * @throws SandboxException for an ephemeral session whose purge did not finish (see
     *                          {@link SandboxManager#destroy})
     */
    void release();

    /** Removes the container and the workdir. Idempotent. */
    void destroy();

    /** Same as {@link #release()}. */
    @Override
    default void close() {
        release();
    }
}
