package dev.sandboxkit.kubernetes;

import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.testkit.tck.SandboxDriverTck;
import org.junit.jupiter.api.BeforeAll;

/**
 * Both conformance kits, whole, against a real cluster ({@code mvn -pl sandbox-kubernetes verify -Pkubernetes-it}).
 * Every capability the driver declares is exercised, exec included. See {@link ClusterSupport} for settings.
 */
class KubernetesClusterTckIT extends SandboxDriverTck {
    // Both kits: the driver's one variant on a real cluster (pods and PVCs).

    @BeforeAll
    static void clusterMustBeReachable() {
        ClusterSupport.requireCluster();
    }

    @Override
    protected SandboxDriver createDriver(DriverContext context) {
        return ClusterSupport.driver(context.instanceId());
    }

    /** The kit's default pulls never (a local Docker image); a cluster pulls or has the image loaded. */
    @Override
    protected SandboxSpec spec() {
        return ClusterSupport.spec().build();
    }
}
