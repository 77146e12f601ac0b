package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

/**
 * A lifecycle step (start, readiness, removal) did not finish within its time limit. An exec that runs past its own timeout is not an exception: see {@link ExecResult#timedOut()}.
 */
public class SandboxTimeoutException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what went wrong
     */
    public SandboxTimeoutException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a cause.
     *
     * @param message what went wrong
     * @param cause   the underlying failure
     */
    public SandboxTimeoutException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }

}
