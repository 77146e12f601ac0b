package dev.sandboxkit;

/**
 * A stateful shell in a sandbox, opened with {@link Sandbox#shell()}: the working directory and the
 * exported environment carry over from one command to the next, as in a terminal, while
 * {@link Sandbox#exec(ExecRequest)} stays stateless.
 *
 * <p><b>What carries over:</b> the working directory ({@code cd}) and exported variables ({@code export},
 * including what {@code . venv/bin/activate} exports, and {@code unset} of a variable an earlier command
 * exported). Each command runs in a fresh {@code /bin/sh} that restores this state first, so non-exported
 * shell variables, functions, aliases, options and traps last for one command only; so does unsetting a
 * variable that the image or the spec defines. {@code exit} ends the command, not the session.
 *
 * <p><b>Per command:</b> a request's env is visible to that command only and is never saved (use it for
 * secrets); stdin, timeout, output caps and the listener work as for {@link Sandbox#exec(ExecRequest)}.
 * A command killed by its timeout saves no state: the session keeps the state from before it. Commands of
 * one session run one at a time; concurrent calls wait for each other.
 *
 * <p><b>Lifetime:</b> a running command counts as activity (it resets the idle clock and the sandbox is not
 * reaped under it); an open, idle session does not keep the sandbox alive. The state lives in the sandbox
 * (under {@code /tmp}), so when the sandbox is reaped, replaced (changed spec, maximum lifetime) or
 * destroyed, the session ends: its next command throws {@link ShellSessionEndedException}, and
 * {@link Sandbox#shell()} opens a new one (resuming the sandbox). {@link #close()} discards the state.
 * Thread-safe.
 */
public interface ShellSession extends AutoCloseable {

    /**
     * Runs a script in the session's shell.
     *
     * @param script shell script, for example {@code cd src && export DEBUG=1}
     * @return the result; a non-zero exit code or a timeout is reported here, not thrown
     * @throws ShellSessionEndedException if the session ended (sandbox reaped, replaced or destroyed, or closed)
     * @throws SandboxExecException       if the command could not be run or its output not read
     */
    default ExecResult exec(String script) {
        return exec(ExecRequest.shell(script));
    }

    /**
     * Runs a request in the session's shell. A request made with {@link ExecRequest#shell(String)} runs its
     * script in the session's shell; any other argv runs as one simple command there, each argument quoted
     * (so {@code ExecRequest.of("cd", "src")} changes the session's directory). The request's working
     * directory must not be set: the session has its own.
     *
     * @param request what to run, with its env (this command only), stdin, timeout, caps and listener
     * @return the result
     * @throws IllegalArgumentException   if the request sets a working directory
     * @throws ShellSessionEndedException if the session ended
     * @throws SandboxExecException       if the command could not be run or its output not read
     */
    ExecResult exec(ExecRequest request);

    /**
     * Whether the session can still run commands: not closed, and its sandbox is the one it was opened in.
     *
     * @return {@code true} while open
     */
    boolean isOpen();

    /** Ends the session and discards its state. Idempotent; never throws for a sandbox that is gone. */
    @Override
    void close();
}
