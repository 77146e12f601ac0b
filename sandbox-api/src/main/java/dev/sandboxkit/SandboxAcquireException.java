package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

/**
 * A sandbox could not be acquired: the image is missing and may not be pulled, the backend refused
 * the container, the session is single-use and already released, or another live manager holds it.
 * {@link #isRetryable()} tells whether waiting may help (for example, the other owner's lease expiring).
 */
public class SandboxAcquireException extends SandboxException {
    private static final long serialVersionUID = 1L;

    private final boolean retryable;

    /**
     * Creates a non-retryable exception.
     *
     * @param message what went wrong
     */
    public SandboxAcquireException(String message) {
        this(message, null, false);
    }

    /**
     * Creates a non-retryable exception with a cause.
     *
     * @param message what went wrong
     * @param cause   the underlying failure
     */
    public SandboxAcquireException(String message, @Nullable Throwable cause) {
        this(message, cause, false);
    }

    /**
     * Creates an exception.
     *
     * @param message   what went wrong
     * @param cause     the underlying failure, or {@code null}
     * @param retryable whether the same acquire may succeed later
     */
    public SandboxAcquireException(String message, @Nullable Throwable cause, boolean retryable) {
        super(message, cause);
        this.retryable = retryable;
    }

    @Override
    public boolean isRetryable() {
        return retryable;
    }
}
