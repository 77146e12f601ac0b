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
 * @param labels    labels to put on every backend resource: the spec's labels plus {@link SandboxLabels}'
 * @param phases    where the driver reports phase timings (image check, create, start)
 */
public record CreateRequest(String sessionId, SandboxSpec spec, String workspace, Map<String, String> labels,
                            PhaseRecorder phases) {

    /** Validates and copies. */
    public CreateRequest {
        Objects.requireNonNull(sessionId, "sessionId");
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(workspace, "workspace");
        labels = Map.copyOf(labels);
        phases = phases == null ? PhaseRecorder.NONE : phases;
    }

    /**
     * A request whose phase timings are not recorded.
     *
     * @param sessionId the session
     * @param spec      the container's spec
     * @param workspace the workdir location
     * @param labels    labels for every backend resource
     */
    public CreateRequest(String sessionId, SandboxSpec spec, String workspace, Map<String, String> labels) {
        this(sessionId, spec, workspace, labels, PhaseRecorder.NONE);
    }
}
