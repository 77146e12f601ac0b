package dev.sandboxkit.docker;

import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.testkit.tck.ComputeDriverTck;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;

import java.util.HashMap;
import java.util.Map;

/**
 * The compute kit through a TLS engine ({@link TlsEngine}: a second dockerd with {@code --tlsverify} on
 * {@code tcp://127.0.0.1}), on the default exec path (the command channel): every lifecycle call (docker-java)
 * and every exec (the raw client) goes over TLS with a client certificate.
 */
@Tag("tls")
@DisplayName("Docker driver conformance over TLS (tcp://127.0.0.1, --tlsverify)")
class TlsDockerDriverTckTest extends ComputeDriverTck {
    // Compute kit only: TLS changes the transport to the engine, not the workdirs (DockerDriverTckTest runs that kit).

    @BeforeAll
    static void tlsEngine() {
        TlsEngine.get();
    }

    @Override
    protected SandboxDriver createDriver(DriverContext context) {
        return new DockerDriverProvider().create(withTls(context));
    }

    static DriverContext withTls(DriverContext context) {
        TlsEngine engine = TlsEngine.get();
        Map<String, String> properties = new HashMap<>(context.properties());
        properties.putAll(engine.properties(engine.clientDir));
        return new DriverContext(context.instanceId(), context.workspaceRoot(), context.clock(), properties);
    }
}
