package dev.sandboxkit.spi;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * A session workdir a driver can list ({@link SandboxDriver#listWorkspaces}), so that the orphan sweep can delete
 * the ones no session record refers to.
 *
 * @param location  the workdir's location, as {@link SandboxDriver#createWorkspace} returned it
 * @param labels    its labels: at least {@link SandboxLabels#MANAGED}, {@link SandboxLabels#SESSION} (the id it was
 *                  created for) and {@link SandboxLabels#OWNER} (the instance that created it)
 * @param createdAt when it was created
 */
public record WorkspaceDescriptor(String location, Map<String, String> labels, Instant createdAt) {

    /** Validates and copies. */
    public WorkspaceDescriptor {
        Objects.requireNonNull(location, "location");
        labels = Map.copyOf(labels);
        Objects.requireNonNull(createdAt, "createdAt");
    }
}
