package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

/**
 * The backend (Docker engine, Kubernetes API) could not be reached. The message names the endpoint tried. Retryable.
 */
public class SandboxUnavailableException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what went wrong
     */
    public SandboxUnavailableException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a cause.
     *
     * @param message what went wrong
     * @param cause   the underlying failure
     */
    public SandboxUnavailableException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }

    /** Always retryable: the condition is expected to pass. */
    @Override
    public boolean isRetryable() {
        return true;
    }
}
