package dev.sandboxkit.docker;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.SandboxSpec;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;

/**
 * The conformance kit under gVisor ({@code runsc}) with every exec an engine exec ({@link ExecMode#PLAIN});
 * {@link DockerRunscTckTest} runs the command channel.
 */
@Tag("gvisor")
@DisplayName("Docker driver conformance under gVisor (runsc), plain execs")
class DockerRunscPlainExecTckTest extends DockerRunscTckTest {

    @Override
    protected SandboxSpec spec() {
        return super.spec().toBuilder().execMode(ExecMode.PLAIN).build();
    }
}
