package dev.sandboxkit.spi;

import dev.sandboxkit.SessionState;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * What a {@link SessionStore} keeps for one session. Immutable; the {@code with*} methods return copies
 * with the same {@link #version()}, which the store checks and increments on update.
 *
 * @param sessionId        the session id
 * @param driver           the driver name
 * @param state            lifecycle state
 * @param sandboxId        the live container's id, or {@code null}
 * @param workspace        the workdir location
 * @param spec             the spec, encoded by the engine (opaque to stores)
 * @param specFingerprint  a short hash of {@code spec}
 * @param ephemeral        whether the session is single-use
 * @param createdAt        when the session was created
 * @param lastActivity     last acquire, exec or keep-alive, as last flushed by the owner
 * @param sandboxStartedAt when the live container was started, or {@code null}
 * @param owner            instance id of the responsible manager, or {@code null}
 * @param leaseExpiry      when the owner's claim lapses unless renewed, or {@code null}
 * @param version          optimistic-concurrency version, starting at 1
 * @param attributes       small extra data (for example the post-create hook's output)
 */
public record SessionRecord(
        String sessionId,
        String driver,
        SessionState state,
        String sandboxId,
        String workspace,
        String spec,
        String specFingerprint,
        boolean ephemeral,
        Instant createdAt,
        Instant lastActivity,
        Instant sandboxStartedAt,
        String owner,
        Instant leaseExpiry,
        long version,
        Map<String, String> attributes) {

    /** Validates and copies. */
    public SessionRecord {
        Objects.requireNonNull(sessionId, "sessionId");
        Objects.requireNonNull(driver, "driver");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(workspace, "workspace");
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(specFingerprint, "specFingerprint");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(lastActivity, "lastActivity");
        if (version < 1) {
            throw new IllegalArgumentException("version must be >= 1, got: " + version);
        }
        attributes = Map.copyOf(attributes == null ? Map.of() : attributes);
    }

    /**
     * Whether another manager may take this session over at {@code now}: it has no owner, or the
     * owner's lease has lapsed.
     *
     * @param now the current instant
     * @return {@code true} if the owner's claim has lapsed
     */
    public boolean leaseExpired(Instant now) {
        return owner == null || leaseExpiry == null || !leaseExpiry.isAfter(now);
    }

    /**
     * A copy in another state, with another sandbox.
     *
     * @param newState     the state
     * @param newSandboxId the container id, or {@code null}
     * @param startedAt    when it started, or {@code null}
     * @return the copy
     */
    public SessionRecord withSandbox(SessionState newState, String newSandboxId, Instant startedAt) {
        return new SessionRecord(sessionId, driver, newState, newSandboxId, workspace, spec, specFingerprint,
                ephemeral, createdAt, lastActivity, startedAt, owner, leaseExpiry, version, attributes);
    }

    /**
     * A copy with another owner and lease.
     *
     * @param newOwner owner instance id, or {@code null}
     * @param expiry   lease expiry, or {@code null}
     * @return the copy
     */
    public SessionRecord withOwner(String newOwner, Instant expiry) {
        return new SessionRecord(sessionId, driver, state, sandboxId, workspace, spec, specFingerprint,
                ephemeral, createdAt, lastActivity, sandboxStartedAt, newOwner, expiry, version, attributes);
    }

    /**
     * A copy with another last-activity instant.
     *
     * @param instant last activity
     * @return the copy
     */
    public SessionRecord withLastActivity(Instant instant) {
        return new SessionRecord(sessionId, driver, state, sandboxId, workspace, spec, specFingerprint,
                ephemeral, createdAt, instant, sandboxStartedAt, owner, leaseExpiry, version, attributes);
    }

    /**
     * A copy with another spec.
     *
     * @param encodedSpec the encoded spec
     * @param fingerprint its fingerprint
     * @param isEphemeral whether it is single-use
     * @return the copy
     */
    public SessionRecord withSpec(String encodedSpec, String fingerprint, boolean isEphemeral) {
        return new SessionRecord(sessionId, driver, state, sandboxId, workspace, encodedSpec, fingerprint,
                isEphemeral, createdAt, lastActivity, sandboxStartedAt, owner, leaseExpiry, version, attributes);
    }

    /**
     * A copy with other attributes.
     *
     * @param newAttributes the attributes
     * @return the copy
     */
    public SessionRecord withAttributes(Map<String, String> newAttributes) {
        return new SessionRecord(sessionId, driver, state, sandboxId, workspace, spec, specFingerprint,
                ephemeral, createdAt, lastActivity, sandboxStartedAt, owner, leaseExpiry, version, newAttributes);
    }

    /**
     * A copy with another version; stores use it to return what they wrote.
     *
     * @param newVersion the version
     * @return the copy
     */
    public SessionRecord withVersion(long newVersion) {
        return new SessionRecord(sessionId, driver, state, sandboxId, workspace, spec, specFingerprint,
                ephemeral, createdAt, lastActivity, sandboxStartedAt, owner, leaseExpiry, newVersion, attributes);
    }
}
