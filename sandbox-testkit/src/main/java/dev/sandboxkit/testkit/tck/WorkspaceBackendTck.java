package dev.sandboxkit.testkit.tck;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

/**
 * The conformance kit for the workspace half of a driver ({@link dev.sandboxkit.spi.WorkspaceBackend}): creating,
 * deleting and seeding workdirs, what survives a reap, isolation, the files API, snapshots, templates, and export and
 * import through the archive tier. Extend it in a test class and return a new driver from
 * {@link #createDriver(dev.sandboxkit.spi.DriverContext)}:
 *
 * <pre>{@code
 * class MyDriverWorkspaceTckTest extends WorkspaceBackendTck {
 *     @Override
 *     protected SandboxDriver createDriver(DriverContext context) {
 *         return new MyDriver(context);
 *     }
 * }
 * }</pre>
 *
 * <p>The driver is a whole {@link dev.sandboxkit.spi.SandboxDriver}: most tests check a workdir through a sandbox
 * that mounts it (a file written through the files API is read by an exec, a restored snapshot is seen by the next
 * command), so this kit runs plain execs and reads; the compute half itself is {@link ComputeDriverTck}'s. How the
 * tests run (a real manager on a manual clock, capabilities, the commands the image needs, clean-up) is described in
 * the {@linkplain dev.sandboxkit.testkit.tck package}.
 */
public abstract class WorkspaceBackendTck extends DriverKit {

    /** For subclasses. */
    protected WorkspaceBackendTck() {
    }

    @Nested
    @DisplayName("workdir")
    class Workdir extends WorkdirConformance {
        Workdir() {
            super(WorkspaceBackendTck.this);
        }
    }

    @Nested
    @DisplayName("workdir snapshots")
    class Snapshots extends SnapshotConformance {
        Snapshots() {
            super(WorkspaceBackendTck.this);
        }
    }

    @Nested
    @DisplayName("workdir templates")
    class Templates extends TemplateConformance {
        Templates() {
            super(WorkspaceBackendTck.this);
        }
    }

    @Nested
    @DisplayName("workdir archives (WORKSPACE_ARCHIVE)")
    class Archives extends ArchiveConformance {
        Archives() {
            super(WorkspaceBackendTck.this);
        }
    }
}
