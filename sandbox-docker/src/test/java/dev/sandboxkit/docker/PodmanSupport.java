package dev.sandboxkit.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Version;
import com.github.dockerjava.api.model.VersionComponent;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The local Podman service the Podman tests run against ({@code scripts/setup-podman.sh} starts it). Missing means
 * the tests FAIL; outside CI, {@code -Dsandboxkit.skipPodmanTests=true} (or {@code skipDockerTests}) skips them.
 */
final class PodmanSupport {
    /** Where setup-podman.sh serves Podman's API ({@code -Dsandboxkit.test.podmanSocket} moves it). */
    static final String SOCKET = System.getProperty("sandboxkit.test.podmanSocket", "/run/sandboxkit-podman.sock");
    static final String HOST = "unix://" + SOCKET;
    private static String problem;
    private static boolean checked;

    private PodmanSupport() {
    }

    /** Fails (or, when explicitly allowed outside CI, skips) unless Podman serves {@link #SOCKET} with the test image. */
    static synchronized void require() {
        if (!checked) {
            checked = true;
            problem = probe();
        }
        if (problem == null) {
            return;
        }
        boolean skipAllowed = (Boolean.getBoolean("sandboxkit.skipPodmanTests")
                || Boolean.getBoolean("sandboxkit.skipDockerTests")) && !"true".equals(System.getenv("CI"));
        if (skipAllowed) {
            Assumptions.abort("Podman tests skipped (-Dsandboxkit.skipPodmanTests=true): " + problem);
        }
        Assertions.fail("the Podman service these tests need is not usable: " + problem + ". scripts/setup-podman.sh"
                + " starts it; -Dsandboxkit.skipPodmanTests=true skips them (not honoured when CI=true).");
    }

    private static String probe() {
        if (!Files.exists(Path.of(SOCKET))) {
            return "no socket at " + SOCKET;
        }
        try (DockerClient podman = dockerClient()) {
            Version version = podman.versionCmd().exec();
            List<VersionComponent> components = version.getComponents() == null ? List.of() : version.getComponents();
            if (components.stream().noneMatch(c -> c.getName() != null && c.getName().startsWith("Podman"))) {
                return "the service at " + SOCKET + " is not Podman (components: " + components + ")";
            }
            try {
                podman.inspectImageCmd(DockerTestSupport.IMAGE).exec();
            } catch (RuntimeException e) {
                return "Podman has no " + DockerTestSupport.IMAGE + " (setup-podman.sh loads it from Docker): " + e;
            }
            return null;
        } catch (IOException | RuntimeException e) {
            return "Podman at " + HOST + " unreachable: " + e;
        }
    }

    /** The Docker driver pointed at Podman, with the context's other settings. */
    static SandboxDriver driver(DriverContext context) {
        Map<String, String> properties = new HashMap<>(context.properties());
        properties.put("docker.host", HOST);
        return new DockerDriverProvider().create(new DriverContext(context.instanceId(), context.workspaceRoot(),
                context.clock(), properties));
    }

    /** A docker-java client on Podman's socket, for test setup and cleanup (not the code under test). */
    static DockerClient dockerClient() {
        return DockerClientImpl.getInstance(
                DefaultDockerClientConfig.createDefaultConfigBuilder().withDockerHost(HOST).withDockerTlsVerify(false).build(),
                new ZerodepDockerHttpClient.Builder().dockerHost(URI.create(HOST)).build());
    }
}
