package dev.sandboxkit.kubernetes;

import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.DriverContext;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;

/**
 * Shared by the integration tests of {@code -Pkubernetes-it}, which run against the cluster of
 * {@code KUBECONFIG} (or {@code ~/.kube/config}, or the in-cluster service account). They never skip:
 * an unreachable cluster fails them, loudly.
 *
 * <p>System properties: {@code sandboxkit.test.image} (default {@code busybox:1.36}; the cluster must be
 * able to pull it, or have it loaded, as with {@code kind load docker-image}),
 * {@code sandboxkit.test.pullPolicy} ({@code IF_MISSING} by default), and every driver setting as
 * {@code sandboxkit.kubernetes.<key>}, for example {@code -Dsandboxkit.kubernetes.namespace=sandboxkit-it}.
 */
final class ClusterSupport {
    static final String DEFAULT_IMAGE = "busybox:1.36";

    private ClusterSupport() {
    }

    static String image() {
        return System.getProperty("sandboxkit.test.image", DEFAULT_IMAGE);
    }

    static SandboxSpec.Builder spec() {
        return SandboxSpec.builder().image(image())
                .pullPolicy(PullPolicy.valueOf(System.getProperty("sandboxkit.test.pullPolicy", "IF_MISSING")));
    }

    /** A driver configured like the provider would configure it, from {@code sandboxkit.kubernetes.*}. */
    static KubernetesSandboxDriver driver(String owner) {
        return (KubernetesSandboxDriver) new KubernetesDriverProvider()
                .create(new DriverContext(owner, Path.of(System.getProperty("java.io.tmpdir")), Clock.systemUTC(), Map.of()));
    }

    /** Fails (never skips) when the cluster cannot be reached. */
    static void requireCluster() {
        try (KubernetesSandboxDriver d = driver("it-probe")) {
            try {
                d.ping();
            } catch (RuntimeException e) {
                throw new AssertionError("-Pkubernetes-it needs a reachable Kubernetes cluster (KUBECONFIG="
                        + System.getenv("KUBECONFIG") + ", API " + d.client().getMasterUrl() + ", namespace "
                        + d.namespace() + "): " + e.getMessage(), e);
            }
        }
    }
}
