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
 * The compute kit as in {@link TlsDockerDriverTckTest}, with {@link ExecMode#PLAIN}: every exec is an engine exec over
 * TLS.
 */
@Tag("tls")
@DisplayName("Docker driver conformance over TLS, plain execs")
class TlsDockerPlainExecTckTest extends ComputeDriverTck {
    // Compute kit only: TLS and the exec path change how commands travel, not the workdirs (see DockerDriverTckTest).

    @BeforeAll
    static void tlsEngine() {
        TlsEngine.get();
    }

    @Override
    protected SandboxDriver createDriver(DriverContext context) {
        return new DockerDriverProvider().create(TlsDockerDriverTckTest.withTls(context));
    }

    @Override
    protected SandboxSpec spec() {
        return super.spec().toBuilder().execMode(ExecMode.PLAIN).build();
    }
}
