package dev.sandboxkit.docker;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.testkit.tck.ComputeDriverTck;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;

/**
 * The Docker driver against the compute kit with {@link ExecMode#PLAIN}: every exec is an engine exec.
 * {@link DockerDriverTckTest} runs the default ({@link ExecMode#AUTO}), which on the test image is the
 * command channel, so the kit's exec group covers both paths.
 */
@Tag("slow")
@DisplayName("Docker driver conformance, plain execs")
class DockerPlainExecTckTest extends ComputeDriverTck {
    // Compute kit only: the exec path changes how commands run, not the workdirs (DockerDriverTckTest runs that kit).

    @Override
    protected SandboxDriver createDriver(DriverContext context) {
        return new DockerDriverProvider().create(context);
    }

    @Override
    protected SandboxSpec spec() {
        return super.spec().toBuilder().execMode(ExecMode.PLAIN).build();
    }
}
