package dev.sandboxkit.spi;

import dev.sandboxkit.SessionState;
import org.jspecify.annotations.Nullable;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * What a {@link SessionStore} keeps for one session. Immutable; the {@code with*} methods return copies
 * with the same {@link #version()}, which the store checks and increments on update.
 */
public final class SessionRecord {
    private final String sessionId;
    private final String driver;
    private final SessionState state;
    private final @Nullable String sandboxId;
    private final String workspace;
    private final String spec;
    private final String specFingerprint;
    private final boolean ephemeral;
    private final Instant createdAt;
    private final Instant lastActivity;
    private final @Nullable Instant sandboxStartedAt;
    private final @Nullable String owner;
    private final @Nullable Instant leaseExpiry;
    private final long version;
    private final Map<String, String> attributes;

    private SessionRecord(@Nullable String sessionId, @Nullable String driver, @Nullable SessionState state, @Nullable String sandboxId, @Nullable String workspace,
            @Nullable String spec, @Nullable String specFingerprint, boolean ephemeral, @Nullable Instant createdAt, @Nullable Instant lastActivity,
            @Nullable Instant sandboxStartedAt, @Nullable String owner, @Nullable Instant leaseExpiry, long version, @Nullable Map<String, String> attributes) {
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
        this.sessionId = sessionId;
        this.driver = driver;
        this.state = state;
        this.sandboxId = sandboxId;
        this.workspace = workspace;
        this.spec = spec;
        this.specFingerprint = specFingerprint;
        this.ephemeral = ephemeral;
        this.createdAt = createdAt;
        this.lastActivity = lastActivity;
        this.sandboxStartedAt = sandboxStartedAt;
        this.owner = owner;
        this.leaseExpiry = leaseExpiry;
        this.version = version;
        this.attributes = attributes;
    }

    /**
     * The session id.
     *
     * @return the session id
     */
    public String sessionId() {
        return sessionId;
    }

    /**
     * The driver name.
     *
     * @return the driver name
     */
    public String driver() {
        return driver;
    }

    /**
     * Lifecycle state.
     *
     * @return lifecycle state
     */
    public SessionState state() {
        return state;
    }

    /**
     * The live container's id, or {@code null}.
     *
     * @return the live container's id, or {@code null}
     */
    public @Nullable String sandboxId() {
        return sandboxId;
    }

    /**
     * The workdir location.
     *
     * @return the workdir location
     */
    public String workspace() {
        return workspace;
    }

    /**
     * The spec, encoded by the engine (opaque to stores).
     *
     * @return the spec, encoded by the engine (opaque to stores)
     */
    public String spec() {
        return spec;
    }

    /**
     * A short hash of {@code spec}.
     *
     * @return a short hash of {@code spec}
     */
    public String specFingerprint() {
        return specFingerprint;
    }

    /**
     * Whether the session is single-use.
     *
     * @return whether the session is single-use
     */
    public boolean ephemeral() {
        return ephemeral;
    }

    /**
     * When the session was created.
     *
     * @return when the session was created
     */
    public Instant createdAt() {
        return createdAt;
    }

    /**
     * Last acquire, exec or keep-alive, as last flushed by the owner.
     *
     * @return last acquire, exec or keep-alive, as last flushed by the owner
     */
    public Instant lastActivity() {
        return lastActivity;
    }

    /**
     * When the live container was started, or {@code null}.
     *
     * @return when the live container was started, or {@code null}
     */
    public @Nullable Instant sandboxStartedAt() {
        return sandboxStartedAt;
    }

    /**
     * Instance id of the responsible manager, or {@code null}.
     *
     * @return instance id of the responsible manager, or {@code null}
     */
    public @Nullable String owner() {
        return owner;
    }

    /**
     * When the owner's claim lapses unless renewed, or {@code null}.
     *
     * @return when the owner's claim lapses unless renewed, or {@code null}
     */
    public @Nullable Instant leaseExpiry() {
        return leaseExpiry;
    }

    /**
     * Optimistic-concurrency version, starting at 1.
     *
     * @return optimistic-concurrency version, starting at 1
     */
    public long version() {
        return version;
    }

    /**
     * Small extra data (for example the post-create hook's output).
     *
     * @return small extra data (for example the post-create hook's output)
     */
    public Map<String, String> attributes() {
        return attributes;
    }

    @Override
    public boolean equals(Object other) {
        return this == other || (other instanceof SessionRecord o
                && Objects.equals(sessionId, o.sessionId) && Objects.equals(driver, o.driver) &&
                Objects.equals(state, o.state) && Objects.equals(sandboxId, o.sandboxId) &&
                Objects.equals(workspace, o.workspace) && Objects.equals(spec, o.spec) &&
                Objects.equals(specFingerprint, o.specFingerprint) && ephemeral == o.ephemeral &&
                Objects.equals(createdAt, o.createdAt) && Objects.equals(lastActivity, o.lastActivity) &&
                Objects.equals(sandboxStartedAt, o.sandboxStartedAt) && Objects.equals(owner, o.owner) &&
                Objects.equals(leaseExpiry, o.leaseExpiry) && version == o.version &&
                Objects.equals(attributes, o.attributes));
    }

    @Override
    public int hashCode() {
        return Objects.hash(sessionId, driver, state, sandboxId, workspace, spec, specFingerprint, ephemeral, createdAt,
                lastActivity, sandboxStartedAt, owner, leaseExpiry, version, attributes);
    }

    @Override
    public String toString() {
        return "SessionRecord[" + "sessionId=" + sessionId + ", driver=" + driver + ", state=" + state +
                ", sandboxId=" + sandboxId + ", workspace=" + workspace + ", spec=" + spec +
                ", specFingerprint=" + specFingerprint + ", ephemeral=" + ephemeral +
                ", createdAt=" + createdAt + ", lastActivity=" + lastActivity +
                ", sandboxStartedAt=" + sandboxStartedAt + ", owner=" + owner + ", leaseExpiry=" + leaseExpiry +
                ", version=" + version + ", attributes=" + attributes + "]";
    }

    /**
     * Starts a builder; unset values are {@code null}, {@code 0} or {@code false} unless stated.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds a {@link SessionRecord}. Not thread-safe; last write wins. */
    public static final class Builder {
        private @Nullable String sessionId;
        private @Nullable String driver;
        private @Nullable SessionState state;
        private @Nullable String sandboxId;
        private @Nullable String workspace;
        private @Nullable String spec;
        private @Nullable String specFingerprint;
        private boolean ephemeral;
        private @Nullable Instant createdAt;
        private @Nullable Instant lastActivity;
        private @Nullable Instant sandboxStartedAt;
        private @Nullable String owner;
        private @Nullable Instant leaseExpiry;
        private long version = 1;
        private @Nullable Map<String, String> attributes;

        private Builder() {
        }


        /**
         * Sets sessionId: the session id.
         *
         * @param value the value
         * @return this builder
         */
        public Builder sessionId(@Nullable String value) {
            this.sessionId = value;
            return this;
        }

        /**
         * Sets driver: the driver name.
         *
         * @param value the value
         * @return this builder
         */
        public Builder driver(@Nullable String value) {
            this.driver = value;
            return this;
        }

        /**
         * Sets state: lifecycle state.
         *
         * @param value the value
         * @return this builder
         */
        public Builder state(@Nullable SessionState value) {
            this.state = value;
            return this;
        }

        /**
         * Sets sandboxId: the live container's id, or {@code null}.
         *
         * @param value the value
         * @return this builder
         */
        public Builder sandboxId(@Nullable String value) {
            this.sandboxId = value;
            return this;
        }

        /**
         * Sets workspace: the workdir location.
         *
         * @param value the value
         * @return this builder
         */
        public Builder workspace(@Nullable String value) {
            this.workspace = value;
            return this;
        }

        /**
         * Sets spec: the spec, encoded by the engine (opaque to stores).
         *
         * @param value the value
         * @return this builder
         */
        public Builder spec(@Nullable String value) {
            this.spec = value;
            return this;
        }

        /**
         * Sets specFingerprint: a short hash of {@code spec}.
         *
         * @param value the value
         * @return this builder
         */
        public Builder specFingerprint(@Nullable String value) {
            this.specFingerprint = value;
            return this;
        }

        /**
         * Sets ephemeral: whether the session is single-use.
         *
         * @param value the value
         * @return this builder
         */
        public Builder ephemeral(boolean value) {
            this.ephemeral = value;
            return this;
        }

        /**
         * Sets createdAt: when the session was created.
         *
         * @param value the value
         * @return this builder
         */
        public Builder createdAt(@Nullable Instant value) {
            this.createdAt = value;
            return this;
        }

        /**
         * Sets lastActivity: last acquire, exec or keep-alive, as last flushed by the owner.
         *
         * @param value the value
         * @return this builder
         */
        public Builder lastActivity(@Nullable Instant value) {
            this.lastActivity = value;
            return this;
        }

        /**
         * Sets sandboxStartedAt: when the live container was started, or {@code null}.
         *
         * @param value the value
         * @return this builder
         */
        public Builder sandboxStartedAt(@Nullable Instant value) {
            this.sandboxStartedAt = value;
            return this;
        }

        /**
         * Sets owner: instance id of the responsible manager, or {@code null}.
         *
         * @param value the value
         * @return this builder
         */
        public Builder owner(@Nullable String value) {
            this.owner = value;
            return this;
        }

        /**
         * Sets leaseExpiry: when the owner's claim lapses unless renewed, or {@code null}.
         *
         * @param value the value
         * @return this builder
         */
        public Builder leaseExpiry(@Nullable Instant value) {
            this.leaseExpiry = value;
            return this;
        }

        /**
         * Sets version: optimistic-concurrency version, starting at 1.
         *
         * @param value the value
         * @return this builder
         */
        public Builder version(long value) {
            this.version = value;
            return this;
        }

        /**
         * Sets attributes: small extra data (for example the post-create hook's output).
         *
         * @param value the value
         * @return this builder
         */
        public Builder attributes(@Nullable Map<String, String> value) {
            this.attributes = value;
            return this;
        }

        /**
         * Builds the value.
         *
         * @return the value
         */
        public SessionRecord build() {
            return new SessionRecord(sessionId, driver, state, sandboxId, workspace, spec, specFingerprint, ephemeral, createdAt,
                    lastActivity, sandboxStartedAt, owner, leaseExpiry, version, attributes);
        }
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
    public SessionRecord withSandbox(SessionState newState, @Nullable String newSandboxId, @Nullable Instant startedAt) {
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
    public SessionRecord withOwner(@Nullable String newOwner, @Nullable Instant expiry) {
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
     * A copy with another workdir location (a workdir unpacked from the archive tier on another host).
     *
     * @param newWorkspace the location
     * @return the copy
     */
    public SessionRecord withWorkspace(String newWorkspace) {
        return new SessionRecord(sessionId, driver, state, sandboxId, Objects.requireNonNull(newWorkspace, "workspace"),
                spec, specFingerprint, ephemeral, createdAt, lastActivity, sandboxStartedAt, owner, leaseExpiry, version,
                attributes);
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
