package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

/**
 * The sandbox's driver does not offer the feature asked for (see
 * {@link dev.sandboxkit.spi.ComputeDriver#computeCapabilities()} and
 * {@link dev.sandboxkit.spi.WorkspaceBackend#workspaceCapabilities()}): terminals, port forwarding, background
 * processes, workdir snapshots. A configuration error: retrying will not help; another driver may.
 */
public class SandboxUnsupportedException extends SandboxConfigurationException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message which feature, on which driver
     */
    public SandboxUnsupportedException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a cause.
     *
     * @param message which feature, on which driver
     * @param cause   the underlying failure
     */
    public SandboxUnsupportedException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
