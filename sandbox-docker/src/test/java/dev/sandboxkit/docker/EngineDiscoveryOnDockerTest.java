package dev.sandboxkit.docker;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.docker.internal.engine.Certificates;
import dev.sandboxkit.docker.internal.engine.DockerHost;
import dev.sandboxkit.docker.internal.engine.EngineDiscovery;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static dev.sandboxkit.docker.DockerTestSupport.context;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Discovery against the real sockets of this machine, one test per kind that exists here: the rootful Docker
 * socket, a rootless-style {@code $XDG_RUNTIME_DIR/docker.sock} (a link to the real one in a temporary runtime dir),
 * a Docker context pointing at the real socket, and Podman's socket found as {@code $XDG_RUNTIME_DIR/podman/podman.sock}.
 * Each found engine then runs a container and an exec. Plus the remote-engine rule.
 */
@Tag("slow")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EngineDiscoveryOnDockerTest {
    private static final Path SYSTEM_SOCKET = Path.of("/var/run/docker.sock");
    private final String instanceId = DockerTestSupport.newInstanceId();
    private Path temp;

    @BeforeAll
    void setUp() throws IOException {
        DockerTestSupport.requireEngine();
        temp = Files.createTempDirectory("sandboxkit-discovery");
    }

    @AfterAll
    void tearDown() {
        DockerTestSupport.deleteTree(temp);
    }

    @Test
    void theSystemSocketWhenNothingIsConfigured() {
        DockerHost host = works(EngineDiscovery.of(Map.of(), temp, null, null));
        assertThat(host.socketPath()).isEqualTo(SYSTEM_SOCKET);
    }

    @Test
    void theRootlessSocketBeforeTheSystemOne() throws IOException {
        Path xdg = Files.createDirectories(temp.resolve("xdg-docker"));
        Files.createSymbolicLink(xdg.resolve("docker.sock"), SYSTEM_SOCKET);
        DockerHost host = works(EngineDiscovery.of(Map.of("XDG_RUNTIME_DIR", xdg.toString()), temp,
                List.of(temp.resolve("no-such.sock")), List.of()));
        assertThat(host.socketPath()).isEqualTo(xdg.resolve("docker.sock"));
    }

    @Test
    void aDockerContextPointingAtTheSocket() throws IOException {
        Path config = Files.createDirectories(temp.resolve("config"));
        // Made by the docker CLI itself, so the layout and the name hash are Docker's.
        DockerTestSupport.cliWithEnv(Map.of("DOCKER_CONFIG", config.toString()), "context", "create", "local-test",
                "--docker", "host=unix://" + SYSTEM_SOCKET);
        DockerTestSupport.cliWithEnv(Map.of("DOCKER_CONFIG", config.toString()), "context", "use", "local-test");
        DockerHost host = works(EngineDiscovery.of(Map.of("DOCKER_CONFIG", config.toString()), temp,
                List.of(temp.resolve("no-such.sock")), List.of()));
        assertThat(host.source()).contains("local-test");
        assertThat(host.socketPath()).isEqualTo(SYSTEM_SOCKET);
    }

    @Test
    void podmansRootlessSocketWhenNoDockerAnswers() throws IOException {
        PodmanSupport.require();
        Path xdg = Files.createDirectories(temp.resolve("xdg-podman"));
        Files.createDirectories(xdg.resolve("podman"));
        Files.createSymbolicLink(xdg.resolve("podman/podman.sock"), Path.of(PodmanSupport.SOCKET));
        DockerHost host = works(EngineDiscovery.of(Map.of("XDG_RUNTIME_DIR", xdg.toString()), temp,
                List.of(temp.resolve("no-such.sock")), List.of()));
        assertThat(host.socketPath()).isEqualTo(xdg.resolve("podman/podman.sock"));
    }

    @Test
    void nothingAnsweringIsUnavailableNamingEveryCandidate() {
        EngineDiscovery none = EngineDiscovery.of(Map.of("XDG_RUNTIME_DIR", temp.resolve("nothing").toString()), temp,
                List.of(temp.resolve("no-docker.sock")), List.of(temp.resolve("no-podman.sock")));
        assertThatThrownBy(() -> new DockerSandboxDriver(context(instanceId, temp.resolve("ws")), none))
                .isInstanceOf(SandboxUnavailableException.class)
                .hasMessageContaining(temp.resolve("nothing/docker.sock").toString())
                .hasMessageContaining(temp.resolve("no-docker.sock").toString())
                .hasMessageContaining(temp.resolve("nothing/podman/podman.sock").toString())
                .hasMessageContaining(temp.resolve("no-podman.sock").toString());
    }

    @Test
    void aRemoteTlsEngineIsRefusedBecauseWorkdirsAreHostDirectories() throws Exception {
        Path certs = Certificates.write(Files.createDirectories(temp.resolve("certs")));
        // TEST-NET-1: never this host, never contacted (the refusal comes first).
        Map<String, String> remote = Map.of("docker.host", "tcp://192.0.2.10:2376", "docker.tlsVerify", "true",
                "docker.certPath", certs.toString());
        assertThatThrownBy(() -> new DockerDriverProvider().create(context(instanceId, temp.resolve("ws"), remote)))
                .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("remote")
                .hasMessageContaining("named volume").hasMessageContaining(temp.resolve("ws").toString());
        SandboxManager.Builder builder = SandboxManager.builder().driver("docker").workspaceRoot(temp.resolve("ws"));
        remote.forEach(builder::driverProperty);
        assertThatThrownBy(builder::build).isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("named volume");
        assertThatThrownBy(() -> new DockerDriverProvider().create(context(instanceId, temp.resolve("ws"),
                Map.of("docker.host", "tcp://192.0.2.10:2375")))).isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("refusing plain TCP");
    }

    /** A driver on the discovered engine starts a container and runs an exec in it. */
    private DockerHost works(EngineDiscovery discovery) {
        DockerHost host = discovery.resolve(context(instanceId, temp));
        try (DockerSandboxDriver driver = new DockerSandboxDriver(context(instanceId, temp.resolve("ws")), discovery)) {
            driver.ping();
            String id = DockerTestSupport.start(driver, instanceId, "d-" + System.nanoTime(),
                    DockerTestSupport.spec().build());
            try {
                assertThat(new String(driver.exec(id, ExecRequest.of("echo", "found")).stdoutBytes(),
                        StandardCharsets.UTF_8)).isEqualTo("found\n");
            } finally {
                driver.remove(id);
            }
        }
        return host;
    }
}
