package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

/**
 * The session or sandbox does not exist, or was destroyed. Using a destroyed session is reported this way.
 */
public class SandboxNotFoundException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what went wrong
     */
    public SandboxNotFoundException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a cause.
     *
     * @param message what went wrong
     * @param cause   the underlying failure
     */
    public SandboxNotFoundException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }

}
