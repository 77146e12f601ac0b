package dev.sandboxkit.docker;

import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.testkit.tck.SandboxDriverTck;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;

import java.util.HashMap;
import java.util.Map;

/**
 * Both conformance kits on the Docker driver with {@code docker.workdirs=volume}: one named volume per session
 * instead of host directories, on the real local engine. Tests gated on {@code HOST_WORKSPACE} skip through the
 * kit's own capability check; a missing engine fails (no skip when CI=true).
 */
@Tag("volume")
@DisplayName("Docker driver conformance, named-volume workdirs")
class DockerVolumeTckTest extends SandboxDriverTck {
    // Both kits: the workspace backend is another one, and the sandboxes mount a volume instead of a directory.

    @BeforeAll
    static void engine() {
        DockerTestSupport.requireEngine();
    }

    @Override
    protected SandboxDriver createDriver(DriverContext context) {
        Map<String, String> properties = new HashMap<>(context.properties());
        properties.put(DockerSettings.WORKDIRS_KEY, "volume");
        return new DockerDriverProvider().create(new DriverContext(context.instanceId(), context.workspaceRoot(),
                context.clock(), properties));
    }
}
