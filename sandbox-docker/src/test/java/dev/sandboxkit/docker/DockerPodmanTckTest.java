package dev.sandboxkit.docker;

import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.testkit.tck.SandboxDriverTck;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;

/**
 * Both conformance kits against Podman's Docker-compatible API ({@code podman system service}, started by
 * {@code scripts/setup-env.sh} on {@code /run/sandboxkit-podman.sock}), the same driver with nothing but another host.
 */
@Tag("podman")
@DisplayName("Docker driver conformance on Podman")
class DockerPodmanTckTest extends SandboxDriverTck {
    // Both kits: another engine runs the containers and owns the mounts, so either half can differ.

    @BeforeAll
    static void podmanServing() {
        PodmanSupport.require();
    }

    @Override
    protected SandboxDriver createDriver(DriverContext context) {
        return PodmanSupport.driver(context);
    }
}
