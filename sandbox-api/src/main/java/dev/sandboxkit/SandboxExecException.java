package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

/**
 * An exec could not be started or its output could not be read. A non-zero exit code is not an exception: it is {@link ExecResult#exitCode()}.
 */
public class SandboxExecException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what went wrong
     */
    public SandboxExecException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a cause.
     *
     * @param message what went wrong
     * @param cause   the underlying failure
     */
    public SandboxExecException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }

}
