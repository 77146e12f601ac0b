package dev.sandboxkit.docker;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.testkit.tck.ComputeDriverTck;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;

/**
 * The compute kit on Podman with {@link ExecMode#PLAIN}: every exec is a Podman exec, so the raw client's
 * exec create, start, stream demultiplexing and inspect run against Podman's answers ({@link DockerPodmanTckTest}
 * runs the command channel).
 */
@Tag("podman")
@DisplayName("Docker driver conformance on Podman, plain execs")
class DockerPodmanPlainExecTckTest extends ComputeDriverTck {
    // Compute kit only: the exec path changes how commands run, not the workdirs (DockerPodmanTckTest runs that kit).

    @BeforeAll
    static void podmanServing() {
        PodmanSupport.require();
    }

    @Override
    protected SandboxDriver createDriver(DriverContext context) {
        return PodmanSupport.driver(context);
    }

    @Override
    protected SandboxSpec spec() {
        return super.spec().toBuilder().execMode(ExecMode.PLAIN).build();
    }
}
