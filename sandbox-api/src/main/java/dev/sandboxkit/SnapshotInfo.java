package dev.sandboxkit;

import java.time.Instant;
import java.util.Objects;

/**
 * A workdir snapshot, as listed by {@link SandboxManager#snapshots(String)}.
 *
 * @param id        the snapshot
 * @param sessionId the session whose workdir it copies
 * @param createdAt when it was taken
 * @param sizeBytes the bytes of its regular files
 * @param kept      whether it outlives its session ({@link SandboxManager#keepSnapshot}); otherwise it is deleted
 *                  when the session is destroyed
 */
public record SnapshotInfo(SnapshotId id, String sessionId, Instant createdAt, long sizeBytes, boolean kept) {

    /** Validates. */
    public SnapshotInfo {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(sessionId, "sessionId");
        Objects.requireNonNull(createdAt, "createdAt");
        if (sizeBytes < 0) {
            throw new IllegalArgumentException("sizeBytes must be >= 0");
        }
    }
}
