package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.docker.ManagerOnDockerTest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;

/**
 * The hostile-workspace suite again under gVisor: the sandbox's links, FIFOs and races reach the host through
 * gVisor's gofer instead of the host kernel directly, and the host-side defences must not depend on which.
 */
@Tag("gvisor")
@DisplayName("Files API against a hostile container under gVisor (runsc)")
class HostileWorkspaceOnRunscTest extends HostileWorkspaceTest {

    @BeforeAll
    static void runscRegistered() {
        ManagerOnDockerTest.EngineCheck.requireRuntime("runsc");
    }

    @Override
    SandboxSpec.Builder spec() {
        return super.spec().runtime("runsc");
    }

    @Override
    boolean specialFilesReachTheHost() {
        return false;
    }
}
