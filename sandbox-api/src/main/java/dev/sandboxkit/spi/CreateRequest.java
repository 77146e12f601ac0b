package dev.sandboxkit.spi;

import dev.sandboxkit.SandboxSpec;

import java.util.Map;
import java.util.Objects;

/**
 * Everything a driver needs to start one session's container.
 *
 * @param sessionId the session
 * @param spec      the container's spec
 * @param workspace the workdir location returned by {@link SandboxDriver#createWorkspace}
 * @param labels    labels to put on every backend resource ({@link SandboxLabels} and the spec's)
 */
public record CreateRequest(String sessionId, SandboxSpec spec, String workspace, Map<String, String> labels) {

    /** Validates and copies. */
    public CreateRequest {
        Objects.requireNonNull(sessionId, "sessionId");
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(workspace, "workspace");
        labels = Map.copyOf(labels);
    }
}
