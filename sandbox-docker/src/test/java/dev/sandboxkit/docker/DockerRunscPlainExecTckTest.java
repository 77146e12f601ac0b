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
 * The compute kit under gVisor ({@code runsc}) with every exec an engine exec ({@link ExecMode#PLAIN});
 * {@link DockerRunscTckTest} runs the command channel.
 */
@Tag("gvisor")
@DisplayName("Docker driver conformance under gVisor (runsc), plain execs")
class DockerRunscPlainExecTckTest extends ComputeDriverTck {
    // Compute kit only: the exec path changes how commands run, not the workdirs (DockerRunscTckTest runs that kit).

    @BeforeAll
    static void runscRegistered() {
        DockerTestSupport.requireRuntime("runsc");
    }

    @Override
    protected SandboxDriver createDriver(DriverContext context) {
        return DockerRunscTckTest.withoutBackgroundProcesses(new DockerDriverProvider().create(context));
    }

    @Override
    protected SandboxSpec spec() {
        return super.spec().toBuilder().runtime("runsc").execMode(ExecMode.PLAIN).build();
    }
}
