package dev.sandboxkit.docker;

import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.testkit.tck.SandboxDriverTck;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

/**
 * The conformance kit a third time, under gVisor ({@code runsc}, registered with the engine by
 * {@code scripts/setup-env.sh}), with every exec an engine exec (ExecMode.PLAIN).
 */
@DisplayName("Docker driver conformance under gVisor (runsc), plain execs")
class DockerRunscPlainExecTckTest extends SandboxDriverTck {

    @BeforeAll
    static void runscRegistered() {
        DockerTestSupport.requireRuntime("runsc");
    }

    @Override
    protected SandboxDriver createDriver(DriverContext context) {
        return new DockerDriverProvider().create(context);
    }

    @Override
    protected SandboxSpec spec() {
        return super.spec().toBuilder().runtime("runsc").execMode(dev.sandboxkit.ExecMode.PLAIN).build();
    }
}
