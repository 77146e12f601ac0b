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
     * Opens a local endpoint on {@code 127.0.0.1} (any free port) whose connections reach {@code containerPort}
     * on the sandbox's loopback, while the sandbox stays without a network. Same as
     * {@code forward(containerPort, ForwardOptions.defaults())}.
     *
     * @param containerPort the TCP port inside the sandbox, 1-65535
     * @return the open forward; close it when done
     * @see #forward(int, ForwardOptions)
     */
    default PortForward forward(int containerPort) {
        return forward(containerPort, ForwardOptions.defaults());
    }

    /**
     * Opens a local endpoint whose connections reach {@code containerPort} on the sandbox's loopback. Resumes the
     * session first if it was reaped. Nothing needs to listen in the sandbox yet: each connection is relayed
     * when it is accepted (a port where nothing listens closes that connection). See {@link PortForward} for its
     * lifetime, the idle TTL and the token protocol, and docs/processes.md, "Port forwarding", for the tunnel.
     * The manager's sandboxes implement this; the default, for other implementations of this interface (test
     * doubles), throws {@link SandboxConfigurationException}.
     *
     * @param containerPort the TCP port inside the sandbox, 1-65535
     * @param options       where to listen on the host
     * @return the open forward; close it when done
     * @throws IllegalArgumentException       if the port is out of range
     * @throws SandboxConfigurationException if the driver cannot forward ports ({@link SandboxUnsupportedException}),
     *                                       or the bind address is not
     *                                       loopback and {@link ForwardOptions#exposeBeyondLoopback()} is not set,
     *                                       or the local address cannot be bound (not an address of this host)
     * @throws SandboxUnavailableException   if the local port is in use (another forward or program holds it;
     *                                       retryable once it is freed)
     * @throws SandboxNotFoundException      if the session was destroyed or released (ephemeral)
     * @throws SandboxAcquireException       if the session had to be resumed and that failed
     */
    default PortForward forward(int containerPort, ForwardOptions options) {
        throw new SandboxUnsupportedException(getClass().getName() + " cannot forward ports");
    }

    /**
     * Starts a background process with the default {@link ProcessOptions}. Same as
     * {@code start(request, ProcessOptions.defaults())}.
     *
     * @param request what to run
     * @return the handle
     */
    default SandboxProcess start(ExecRequest request) {
        return start(request, ProcessOptions.defaults());
    }

    /**
     * Starts a background process and returns once it runs, without waiting for it to end. Resumes the session
     * first if it was reaped, and counts as activity like an exec. The process runs in the sandbox's live
     * container until it ends, is killed, or the container goes (idle reap, destroy, the lifetime limit, the
     * manager's close): see {@link SandboxProcess} for where its state lives and how to reattach.
     *
     * <p>From the request: the command, env (per-process, never persisted), working directory and stdin bytes
     * (written, then stdin is closed; with none, stdin stays open for {@link SandboxProcess#writeStdin}) apply;
     * a timeout kills the process's group when it is up ({@link ProcessStatus.State#SIGNALED} 9). Output limits
     * do not apply (the retained window of {@link ProcessOptions#retainedBytes()} does), and a listener is refused:
     * use {@link SandboxProcess#follow}. A command that cannot run is reported like an exec's: the process ends at
     * once with exit code 127 or 126.
     *
     * <p>With a terminal ({@link ExecRequest#withTty}) the process runs on a pseudo-terminal of that size, held
     * inside the container by {@code script(1)} (util-linux's, or BusyBox's applet) under the supervisor, so it
     * keeps everything above: its state in the container, reattach from anywhere, the bounded window, group kill.
     * Its output (stderr merged, with the terminal's {@code \r\n} and echo of what is typed) is the
     * {@link ExecStream#STDOUT} stream; {@link ExecStream#STDERR} carries only {@code script}'s own errors. Stdin
     * bytes are typed at the terminal; {@link SandboxProcess#closeStdin} sends it an end of file.
     * {@link SandboxProcess#resize} changes its size. The image needs {@code script} and {@code stty}.
     *
     * @param request what to run
     * @param options how to run it
     * @return the handle
     * @throws IllegalArgumentException    if the request has a listener
     * @throws SandboxNotFoundException    if the session was destroyed or released (ephemeral)
     * @throws SandboxExecException        if the sandbox cannot run background processes (it needs {@code /bin/sh},
     *                                     {@code setsid}, {@code mkfifo}, {@code dd} and a writable {@code /tmp} or
     *                                     {@code /dev/shm}; BusyBox has them all)
     * @throws SandboxUnsupportedException if the driver does not support background processes, or the request
     *                                     asks for a terminal and the image has no {@code script} (or no
     *                                     {@code stty}): the message says which
     * @throws SandboxUnavailableException if the backend cannot be reached (retryable)
     */
    SandboxProcess start(ExecRequest request, ProcessOptions options);

    /**
     * The session's background processes in its live container, running or ended (until
     * {@linkplain SandboxProcess#remove() removed}), oldest first. Never resumes the session.
     *
     * @return handles on them; empty if the session has no live container
     * @throws SandboxNotFoundException if the session was destroyed
     */
    java.util.List<SandboxProcess> processes();

    /**
     * A new handle on a background process of this session, by its id, without reading anything yet. A process
     * from a container that is gone (this session was reaped and resumed, say) reports
     * {@link ProcessStatus.State#LOST}.
     *
     * @param id the process's {@link SandboxProcess#id()}
     * @return the handle
     * @throws IllegalArgumentException if {@code id} is not a process id
     */
    SandboxProcess process(String id);

    /**
     * Starts a command on a pseudo-terminal and returns at once: raw bytes in and out, resize, wait for the exit
     * (see {@link Terminal}). Resumes the session first if it was reaped. The request's env, working directory
     * and timeout apply; {@link ExecRequest#stdin()} bytes, if any, are typed first; its output caps and
     * listener do not (read {@link Terminal#output()}).
     *
     * <pre>{@code
     * try (Terminal t = sandbox.terminal(ExecRequest.of("sh", "-i").withTty(TerminalSize.of(120, 40)))) {
     *     t.input().write("echo hi\n".getBytes(UTF_8));
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
