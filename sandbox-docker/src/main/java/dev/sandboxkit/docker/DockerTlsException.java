package dev.sandboxkit.docker;

import dev.sandboxkit.SandboxConfigurationException;

import java.util.Objects;

/**
 * A TLS engine ({@code tcp://} with {@code docker.tlsVerify}, {@code DOCKER_TLS_VERIFY} or a context's TLS
 * material) could not be talked to securely: its certificate is not trusted or does not name the host, it
 * refused this client's certificate, or the certificate files cannot be used. It is a configuration error
 * (not retryable): waiting does not change a certificate. Thrown by driver creation (unusable files) and by
 * any call that connects (lifecycle and exec alike).
 */
public final class DockerTlsException extends SandboxConfigurationException {
    private static final long serialVersionUID = 1L;

    /** What went wrong. */
    public enum Reason {
        /** The engine's certificate is not signed by the configured CA, is expired, or does not name the host. */
        ENGINE_NOT_TRUSTED,
        /** The engine refused this client: no client certificate, or one its CA did not sign. */
        CLIENT_REJECTED,
        /** The CA, certificate or key files are missing, unreadable, encrypted or malformed. */
        BAD_MATERIAL,
        /** Any other handshake failure (no common protocol or cipher, not a TLS endpoint). */
        HANDSHAKE_FAILED
    }

    private final Reason reason;

    /**
     * Creates the exception.
     *
     * @param reason  what went wrong
     * @param message the details, naming the engine or the file
     * @param cause   the underlying failure, or {@code null}
     */
    public DockerTlsException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    /**
     * What went wrong.
     *
     * @return the reason
     */
    public Reason reason() {
        return reason;
    }
}
