package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.docker.DockerDriverProvider;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDescriptor;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SandboxLabels;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;

/**
 * The real Docker engine for the multi-manager scenarios. Unusable: the tests FAIL; they are skipped only
 * with {@code -Dsandboxkit.skipDockerTests=true}, and never when {@code CI=true} (same rule as sandbox-docker).
 */
final class Docker {
    static final String IMAGE = System.getProperty("sandboxkit.test.image", "sandboxkit-test:latest");
    static final SandboxSpec SPEC = SandboxSpec.builder().image(IMAGE).pullPolicy(PullPolicy.NEVER).build();
    /** The test image plus util-linux script(1), built by scripts/build-test-images.sh: background terminals. */
    static final SandboxSpec SCRIPT_SPEC = SandboxSpec.builder()
            .image(System.getProperty("sandboxkit.test.scriptImage", "sandboxkit-test-script:latest"))
            .pullPolicy(PullPolicy.NEVER).build();
    private static String problem;
    private static boolean checked;

    private Docker() {
    }

    static synchronized void require() {
        if (!checked) {
            checked = true;
            try (SandboxDriver probe = driver("probe", Path.of(System.getProperty("java.io.tmpdir")))) {
                probe.ping();
            } catch (RuntimeException e) {
                problem = e.toString();
            }
        }
        if (problem == null) {
            return;
        }
        boolean ci = "true".equalsIgnoreCase(System.getenv("CI"));
        if (!ci && Boolean.getBoolean("sandboxkit.skipDockerTests")) {
            Assumptions.abort("Docker tests skipped (-Dsandboxkit.skipDockerTests=true): " + problem);
        }
        Assertions.fail("the Docker engine needed by the multi-manager scenarios is not usable: " + problem
                + ". Start it with scripts/setup-docker.sh (engine and test images)"
                + (ci ? " (CI=true: never skipped)" : "; pass -Dsandboxkit.skipDockerTests=true to skip locally"));
    }

    /** A Docker driver instance, as the manager would create it. */
    static SandboxDriver driver(String instanceId, Path workspaceRoot) {
        return new DockerDriverProvider().create(new DriverContext(instanceId, workspaceRoot.toAbsolutePath().normalize(),
                Clock.systemUTC(), Map.of()));
    }

    /** The managed containers of a fleet. */
    static List<SandboxDescriptor> containers(SandboxDriver driver, String fleet) {
        return driver.list(Map.of(SandboxLabels.MANAGED, "true", SandboxLabels.FLEET, fleet));
    }

    /** Removes whatever a test left behind in its fleet. */
    static void removeFleet(SandboxDriver driver, String fleet) {
        for (SandboxDescriptor c : containers(driver, fleet)) {
            try {
                driver.remove(c.id());
            } catch (RuntimeException ignored) {
                // already gone
            }
        }
    }
}
