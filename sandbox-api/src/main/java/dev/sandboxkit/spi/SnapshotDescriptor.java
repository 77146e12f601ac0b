package dev.sandboxkit.spi;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * A workdir snapshot held by a driver ({@link SandboxDriver#snapshotWorkspace}, {@link SandboxDriver#listSnapshots}).
 *
 * @param location  where the driver keeps it, given back to {@link SandboxDriver#restoreWorkspace} and
 *                  {@link SandboxDriver#deleteSnapshot}
 * @param labels    its labels: the engine sets {@link SandboxLabels#MANAGED}, {@link SandboxLabels#SESSION},
 *                  {@link SandboxLabels#OWNER}, {@link SandboxLabels#SNAPSHOT} and {@link SandboxLabels#KEPT}
 * @param createdAt when it was taken
 * @param sizeBytes the bytes of its regular files
 */
public record SnapshotDescriptor(String location, Map<String, String> labels, Instant createdAt, long sizeBytes) {

    /** Validates and copies. */
    public SnapshotDescriptor {
        Objects.requireNonNull(location, "location");
        labels = Map.copyOf(labels);
        Objects.requireNonNull(createdAt, "createdAt");
        if (sizeBytes < 0) {
            throw new IllegalArgumentException("sizeBytes must be >= 0");
        }
    }
}
