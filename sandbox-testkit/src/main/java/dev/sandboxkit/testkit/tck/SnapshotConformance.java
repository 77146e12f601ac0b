package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SnapshotId;
import dev.sandboxkit.SnapshotInfo;
import dev.sandboxkit.spi.WorkspaceCapability;
import dev.sandboxkit.spi.SandboxLabels;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static dev.sandboxkit.testkit.tck.DriverKit.readFileRequest;
import static org.assertj.core.api.Assertions.assertThat;

/** {@link WorkspaceBackendTck}'s workdir snapshots group: restore and fork. */
abstract class SnapshotConformance extends KitSupport {
    SnapshotConformance(DriverKit kit) {
        super(kit);
    }

    @Test
    @DisplayName("snapshot, change, restore: the workdir comes back and the next exec resumes on it")
    void restoreRoundTrip() {
        requireCapability(WorkspaceCapability.SNAPSHOTS);
        Sandbox sandbox = acquire();
        writeFile(sandbox, "kept.txt", "before");
        SnapshotId id = manager.snapshot(sandbox.sessionId());
        writeFile(sandbox, "kept.txt", "after");
        writeFile(sandbox, "added.txt", "later");

        manager.restore(sandbox.sessionId(), id);

        assertThat(readFile(sandbox, "kept.txt")).isEqualTo("before");
        assertThat(sandbox.exec(readFileRequest("added.txt")).exitCode()).isNotZero();
        assertThat(ids(Map.of(SandboxLabels.SESSION, sandbox.sessionId()))).hasSize(1);
    }

    @Test
    @DisplayName("a fork starts as a copy and then lives on its own")
    void forkCopies() {
        requireCapability(WorkspaceCapability.SNAPSHOTS);
        Sandbox source = acquire();
        writeFile(source, "shared.txt", "from the source");
        String target = newSessionId("tck-fork");

        Sandbox fork = manager.fork(source.sessionId(), target);

        assertThat(readFile(fork, "shared.txt")).isEqualTo("from the source");
        writeFile(fork, "shared.txt", "changed in the fork");
        assertThat(readFile(source, "shared.txt")).isEqualTo("from the source");
    }

    @Test
    @DisplayName("snapshots are labelled with their session and go with it unless kept")
    void deletedWithTheirSession() {
        requireCapability(WorkspaceCapability.SNAPSHOTS);
        Sandbox sandbox = acquire();
        writeFile(sandbox, "f.txt", "x");
        SnapshotId dropped = manager.snapshot(sandbox.sessionId());
        SnapshotId kept = manager.snapshot(sandbox.sessionId());
        manager.keepSnapshot(kept, true);
        assertThat(manager.snapshots(sandbox.sessionId())).extracting(SnapshotInfo::id)
                .containsExactlyInAnyOrder(dropped, kept);

        sandbox.destroy();

        assertThat(manager.snapshots(sandbox.sessionId())).extracting(SnapshotInfo::id).containsExactly(kept);
        manager.deleteSnapshot(kept);
        assertThat(manager.snapshots(sandbox.sessionId())).isEmpty();
    }
}
