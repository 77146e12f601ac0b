package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

/**
 * The root of every exception sandboxkit throws. Unchecked: a subclass tells what the caller can do.
 *
 * <ul>
 *   <li>{@link SandboxConfigurationException}: fix the configuration; retrying will not help.</li>
 *   <li>{@link SandboxUnavailableException}: the backend or store is unreachable; retry later.</li>
 *   <li>{@link SandboxNotFoundException}: the session or sandbox does not exist (any more).</li>
 *   <li>{@link SandboxAcquireException}: a sandbox could not be started (image, resources, ownership).</li>
 *   <li>{@link SandboxTimeoutException}: a lifecycle step did not finish in time.</li>
 *   <li>{@link SandboxExecException}: an exec could not be run or its output not read. A
 *       non-zero exit code is never an exception.</li>
 *   <li>{@link SessionStoreException}: the session store failed.</li>
 *   <li>{@link SandboxFileException}: a files-API call was refused or failed; see its reason.</li>
 * </ul>
 */
public class SandboxException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception.
     *
     * @param message what went wrong
     */
    public SandboxException(String message) {
        super(message);
    }

    /**
     * Creates an exception with a cause.
     *
     * @param message what went wrong
     * @param cause   the underlying failure
     */
    public SandboxException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }

    /**
     * Whether the same call may succeed if retried later, unchanged.
     *
     * @return {@code true} for transient failures
     */
    public boolean isRetryable() {
        return false;
    }
}
