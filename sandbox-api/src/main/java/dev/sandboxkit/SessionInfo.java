package dev.sandboxkit;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * A snapshot of a session, as the manager sees it.
 *
 * @param sessionId    the caller's session id
 * @param state        lifecycle state
 * @param sandboxId    the running container's id, or {@code null} unless {@link SessionState#ACTIVE}
 * @param workspace    where the durable workdir lives (a host path for Docker, a PVC for Kubernetes)
 * @param owner        instance id of the manager responsible for the session, or {@code null}
 * @param createdAt    when the session was first created
 * @param lastActivity the last acquire, exec or keep-alive
 * @param spec         the spec the session's containers are created from
 * @param attributes   small data stored with the session, for example the post-create hook's
 *                     {@code postCreate.exitCode} and {@code postCreate.output}
 */
public record SessionInfo(
        String sessionId,
        SessionState state,
        String sandboxId,
        String workspace,
        String owner,
        Instant createdAt,
        Instant lastActivity,
        SandboxSpec spec,
        Map<String, String> attributes) {

    /** Validates. */
    public SessionInfo {
        Objects.requireNonNull(sessionId, "sessionId");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(lastActivity, "lastActivity");
        attributes = Map.copyOf(attributes == null ? Map.of() : attributes);
    }
}
