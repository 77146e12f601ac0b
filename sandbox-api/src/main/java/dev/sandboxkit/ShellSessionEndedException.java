package dev.sandboxkit;

/**
 * A {@link ShellSession} can no longer run commands: it was closed, or its sandbox was reaped, replaced or
 * destroyed, taking the session's state with it. Open a new session with {@link Sandbox#shell()}.
 */
public class ShellSessionEndedException extends SandboxExecException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message why the session ended
     */
    public ShellSessionEndedException(String message) {
        super(message);
    }
}
