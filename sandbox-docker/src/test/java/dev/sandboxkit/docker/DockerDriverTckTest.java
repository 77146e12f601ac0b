package dev.sandboxkit.docker;

import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.testkit.tck.SandboxDriverTck;
import org.junit.jupiter.api.DisplayName;

/**
 * The Docker driver against both conformance kits, on the real local engine and the local test image
 * ({@code sandboxkit.test.image}, built by {@code scripts/build-test-images.sh}). A missing engine fails
 * these tests: there is no skip.
 */
@DisplayName("Docker driver conformance")
class DockerDriverTckTest extends SandboxDriverTck {
    // Both kits: the reference variant (runc, host-directory workdirs, the command channel, the local socket).

    @Override
    protected SandboxDriver createDriver(DriverContext context) {
        return new DockerDriverProvider().create(context);
    }
}
