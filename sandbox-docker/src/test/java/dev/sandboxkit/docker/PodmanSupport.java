package dev.sandboxkit.docker;

import org.junit.jupiter.api.Assertions;

import java.nio.file.Files;
import java.nio.file.Path;

/** The local Podman service the Podman tests run against; missing means the tests FAIL (never skip). */
final class PodmanSupport {
    static final String SOCKET = "/run/sandboxkit-podman.sock";
    static final String HOST = "unix://" + SOCKET;

    private PodmanSupport() {
    }

    static void require() {
        if (!Files.exists(Path.of(SOCKET))) {
            Assertions.fail("no Podman service at " + SOCKET + "; scripts/setup-env.sh starts one (podman system service)");
        }
        String version = DockerTestSupport.dockerAt(HOST, "version", "--format", "{{range .Server.Components}}{{.Name}},{{end}}");
        if (!version.contains("Podman")) {
            Assertions.fail("the service at " + SOCKET + " is not Podman: " + version);
        }
        String image = DockerTestSupport.dockerAt(HOST, "image", "inspect", DockerTestSupport.IMAGE, "--format", "{{.Id}}");
        if (image.isBlank()) {
            Assertions.fail("Podman has no " + DockerTestSupport.IMAGE + "; scripts/build-test-images.sh loads it");
        }
    }
}
