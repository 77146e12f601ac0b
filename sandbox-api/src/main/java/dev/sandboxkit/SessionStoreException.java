package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

/**
 * The session store failed. When the store is unreachable (database down) the exception is
 * retryable and nothing was written; sessions the manager already holds keep serving execs.
 */
public class SessionStoreException extends SandboxException {
    private static final long serialVersionUID = 1L;

    private final boolean retryable;

    /**
     * Creates an exception.
     *
     * @param message   what went wrong
     * @param cause     the underlying failure, or {@code null}
     * @param retryable whether the same call may succeed later
     */
    public SessionStoreException(String message, @Nullable Throwable cause, boolean retryable) {
        super(message, cause);
        this.retryable = retryable;
    }

    @Override
    public boolean isRetryable() {
        return retryable;
    }
}
