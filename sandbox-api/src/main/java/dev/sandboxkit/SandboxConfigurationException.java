package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

/**
 * The configuration is wrong or incomplete (no driver found, a bad option, an unsupported feature). Fix it; retrying will not help.
 */
public class SandboxConfigurationException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what went wrong
     */
    public SandboxConfigurationException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a cause.
     *
     * @param message what went wrong
     * @param cause   the underlying failure
     */
    public SandboxConfigurationException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }

}
