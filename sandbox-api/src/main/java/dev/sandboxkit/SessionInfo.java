package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * A snapshot of a session, as the manager sees it ({@link SandboxManager#session(String)}). A final class rather
 * than a record, so that it can gain fields without breaking callers; the library builds it.
 *
 * <p>It shares fields with the store's {@link dev.sandboxkit.spi.SessionRecord} but is not a copy of it by
 * accident: the record is the SPI's row (with the driver name, version, lease, spec fingerprint and sandbox start
 * time a store must keep), this is the caller's view, which shows none of the store's bookkeeping and can change
 * without touching store implementations.
 */
public final class SessionInfo {
    private final String sessionId;
    private final SessionState state;
    private final @Nullable String sandboxId;
    private final String workspace;
    private final @Nullable String owner;
    private final Instant createdAt;
    private final Instant lastActivity;
    private final SandboxSpec spec;
    private final Map<String, String> attributes;

    private SessionInfo(@Nullable String sessionId, @Nullable SessionState state, @Nullable String sandboxId, @Nullable String workspace, @Nullable String owner,
                        @Nullable Instant createdAt, @Nullable Instant lastActivity, @Nullable SandboxSpec spec, @Nullable Map<String, String> attributes) {
        Objects.requireNonNull(sessionId, "sessionId");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(lastActivity, "lastActivity");
        Objects.requireNonNull(workspace, "workspace");
        Objects.requireNonNull(spec, "spec");
        attributes = Map.copyOf(attributes == null ? Map.of() : attributes);
        this.sessionId = sessionId;
        this.state = state;
        this.sandboxId = sandboxId;
        this.workspace = workspace;
        this.owner = owner;
        this.createdAt = createdAt;
        this.lastActivity = lastActivity;
        this.spec = spec;
        this.attributes = attributes;
    }

    /**
     * The caller's session id.
     *
     * @return the caller's session id
     */
    public String sessionId() {
        return sessionId;
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
     * The running container's id, or {@code null} unless {@link SessionState#ACTIVE}.
     *
     * @return the running container's id, or {@code null} unless {@link SessionState#ACTIVE}
     */
    public @Nullable String sandboxId() {
        return sandboxId;
    }

    /**
     * Where the durable workdir lives (a host path for Docker, a PVC for Kubernetes).
     *
     * @return where the durable workdir lives (a host path for Docker, a PVC for Kubernetes)
     */
    public String workspace() {
        return workspace;
    }

    /**
     * Instance id of the manager responsible for the session, or {@code null}.
     *
     * @return instance id of the manager responsible for the session, or {@code null}
     */
    public @Nullable String owner() {
        return owner;
    }

    /**
     * When the session was first created.
     *
     * @return when the session was first created
     */
    public Instant createdAt() {
        return createdAt;
    }

    /**
     * The last acquire, exec or keep-alive.
     *
     * @return the last acquire, exec or keep-alive
     */
    public Instant lastActivity() {
        return lastActivity;
    }

    /**
     * The spec the session's containers are created from.
     *
     * @return the spec the session's containers are created from
     */
    public SandboxSpec spec() {
        return spec;
    }

    /**
     * Small data stored with the session, for example the post-create hook's {@code postCreate.exitCode} and {@code
     * postCreate.output}.
     *
     * @return small data stored with the session, for example the post-create hook's {@code postCreate.exitCode} and
     *         {@code postCreate.output}
     */
    public Map<String, String> attributes() {
        return attributes;
    }

    @Override
    public boolean equals(Object other) {
        return this == other || (other instanceof SessionInfo o
                && Objects.equals(sessionId, o.sessionId) && Objects.equals(state, o.state) &&
                Objects.equals(sandboxId, o.sandboxId) && Objects.equals(workspace, o.workspace) &&
                Objects.equals(owner, o.owner) && Objects.equals(createdAt, o.createdAt) &&
                Objects.equals(lastActivity, o.lastActivity) && Objects.equals(spec, o.spec) &&
                Objects.equals(attributes, o.attributes));
    }

    @Override
    public int hashCode() {
        return Objects.hash(sessionId, state, sandboxId, workspace, owner, createdAt, lastActivity, spec, attributes);
    }

    @Override
    public String toString() {
        return "SessionInfo[" + "sessionId=" + sessionId + ", state=" + state + ", sandboxId=" + sandboxId +
                ", workspace=" + workspace + ", owner=" + owner + ", createdAt=" + createdAt +
                ", lastActivity=" + lastActivity + ", spec=" + spec + ", attributes=" + attributes + "]";
    }

    /**
     * Starts a builder; unset values are {@code null}, {@code 0} or {@code false} unless stated.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds a {@link SessionInfo}. Not thread-safe; last write wins. */
    public static final class Builder {
        private @Nullable String sessionId;
        private @Nullable SessionState state;
        private @Nullable String sandboxId;
        private @Nullable String workspace;
        private @Nullable String owner;
        private @Nullable Instant createdAt;
        private @Nullable Instant lastActivity;
        private @Nullable SandboxSpec spec;
        private @Nullable Map<String, String> attributes;

        private Builder() {
        }


        /**
         * Sets sessionId: the caller's session id.
         *
         * @param value the value
         * @return this builder
         */
        public Builder sessionId(@Nullable String value) {
            this.sessionId = value;
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
         * Sets sandboxId: the running container's id, or {@code null} unless {@link SessionState#ACTIVE}.
         *
         * @param value the value
         * @return this builder
         */
        public Builder sandboxId(@Nullable String value) {
            this.sandboxId = value;
            return this;
        }

        /**
         * Sets workspace: where the durable workdir lives (a host path for Docker, a PVC for Kubernetes).
         *
         * @param value the value
         * @return this builder
         */
        public Builder workspace(@Nullable String value) {
            this.workspace = value;
            return this;
        }

        /**
         * Sets owner: instance id of the manager responsible for the session, or {@code null}.
         *
         * @param value the value
         * @return this builder
         */
        public Builder owner(@Nullable String value) {
            this.owner = value;
            return this;
        }

        /**
         * Sets createdAt: when the session was first created.
         *
         * @param value the value
         * @return this builder
         */
        public Builder createdAt(@Nullable Instant value) {
            this.createdAt = value;
            return this;
        }

        /**
         * Sets lastActivity: the last acquire, exec or keep-alive.
         *
         * @param value the value
         * @return this builder
         */
        public Builder lastActivity(@Nullable Instant value) {
            this.lastActivity = value;
            return this;
        }

        /**
         * Sets spec: the spec the session's containers are created from.
         *
         * @param value the value
         * @return this builder
         */
        public Builder spec(@Nullable SandboxSpec value) {
            this.spec = value;
            return this;
        }

        /**
         * Sets attributes: small data stored with the session, for example the post-create hook's {@code
         * postCreate.exitCode} and {@code postCreate.output}.
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
        public SessionInfo build() {
            return new SessionInfo(sessionId, state, sandboxId, workspace, owner, createdAt, lastActivity, spec,
                    attributes);
        }
    }
}
