package dev.sandboxkit.docker;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.SandboxSpec;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;

/**
 * The conformance kit on Podman with {@link ExecMode#PLAIN}: every exec is a Podman exec, so the raw client's
 * exec create, start, stream demultiplexing and inspect run against Podman's answers ({@link DockerPodmanTckTest}
 * runs the command channel).
 */
@Tag("podman")
@DisplayName("Docker driver conformance on Podman, plain execs")
class DockerPodmanPlainExecTckTest extends DockerPodmanTckTest {

    @Override
    protected SandboxSpec spec() {
        return super.spec().toBuilder().execMode(ExecMode.PLAIN).build();
    }
}
