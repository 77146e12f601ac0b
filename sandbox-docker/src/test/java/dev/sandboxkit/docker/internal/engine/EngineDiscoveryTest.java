package dev.sandboxkit.docker.internal.engine;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.docker.DockerTlsException;
import dev.sandboxkit.spi.DriverContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Discovery without a real engine: each source on a temporary HOME / DOCKER_CONFIG and an environment map, their
 * precedence, and the probed sockets (fake engines on temporary unix sockets).
 */
class EngineDiscoveryTest {
    @TempDir
    Path temp;
    private Path home;
    private final Map<String, String> env = new HashMap<>();
    private final List<FakeEngine> fakes = new ArrayList<>();

    @BeforeEach
    void setUp() throws IOException {
        home = Files.createDirectories(temp.resolve("home"));
    }

    @AfterEach
    void tearDown() throws IOException {
        for (FakeEngine f : fakes) {
            f.close();
        }
    }

    private EngineDiscovery discovery(List<Path> docker, List<Path> podman) {
        return new EngineDiscovery(env, home, docker, podman);
    }

    private EngineDiscovery discovery() {
        return discovery(List.of(temp.resolve("var-run-docker.sock")), List.of(temp.resolve("run-podman.sock")));
    }

    private static DriverContext context(Map<String, String> properties) {
        return new DriverContext("t", Path.of("/tmp/ws"), Clock.systemUTC(), properties);
    }

    private static DriverContext none() {
        return context(Map.of());
    }

    /** A fake engine answering /_ping with 200, linked at {@code where}. */
    private Path pingable(Path where) throws IOException {
        FakeEngine f = new FakeEngine(line -> FakeEngine.response(200, "OK"), false);
        fakes.add(f);
        Files.createDirectories(where.getParent());
        Files.createSymbolicLink(where, f.host().socketPath());
        return where;
    }

    // --- one test per source

    @Test
    void explicitProperty() {
        env.put("DOCKER_HOST", "unix:///from/env.sock");
        DockerHost h = discovery().resolve(context(Map.of("docker.host", "unix:///explicit.sock")));
        assertThat(h.uri()).hasToString("unix:///explicit.sock");
        assertThat(h.source()).contains("docker.host");
    }

    @Test
    void dockerHostEnvironment() {
        env.put("DOCKER_HOST", "unix:///from/env.sock");
        DockerHost h = discovery().resolve(none());
        assertThat(h.uri()).hasToString("unix:///from/env.sock");
        assertThat(h.source()).isEqualTo("DOCKER_HOST");
        assertThat(h.isTls()).isFalse();
    }

    @Test
    void currentContextFromConfigJson() throws IOException {
        context("work", "unix:///ctx/docker.sock", false);
        Files.writeString(home.resolve(".docker/config.json"), "{\"auths\":{},\"currentContext\":\"work\"}");
        DockerHost h = discovery().resolve(none());
        assertThat(h.uri()).hasToString("unix:///ctx/docker.sock");
        assertThat(h.source()).contains("Docker context 'work'").contains("config.json");
    }

    @Test
    void dockerContextEnvironmentOverridesConfigJson() throws IOException {
        context("work", "unix:///ctx/work.sock", false);
        context("other", "unix:///ctx/other.sock", false);
        Files.writeString(home.resolve(".docker/config.json"), "{\"currentContext\":\"work\"}");
        env.put("DOCKER_CONTEXT", "other");
        assertThat(discovery().resolve(none()).uri()).hasToString("unix:///ctx/other.sock");
    }

    @Test
    void dockerConfigMovesTheConfigDirectory() throws IOException {
        Path config = Files.createDirectories(temp.resolve("elsewhere"));
        env.put("DOCKER_CONFIG", config.toString());
        writeContext(config, "work", "unix:///ctx/elsewhere.sock", false);
        Files.writeString(config.resolve("config.json"), "{\"currentContext\":\"work\"}");
        assertThat(discovery().resolve(none()).uri()).hasToString("unix:///ctx/elsewhere.sock");
    }

    @Test
    void contextWithTlsMaterialIsATlsEngine() throws Exception {
        Path tls = context("secure", "tcp://127.0.0.1:2376", false);
        Certificates.write(tls); // ca.pem, cert.pem, key.pem
        env.put("DOCKER_CONTEXT", "secure");
        DockerHost h = discovery().resolve(none());
        assertThat(h.isTls()).isTrue();
        assertThat(h.tls().toString()).contains(tls.resolve("ca.pem").toString());
        assertThat(h.dockerJavaHost()).isEqualTo("tcp://127.0.0.1:2376");
    }

    @Test
    void contextThatSkipsVerificationIsRefused() throws IOException {
        context("insecure", "tcp://127.0.0.1:2376", true);
        env.put("DOCKER_CONTEXT", "insecure");
        assertThatThrownBy(() -> discovery().resolve(none())).isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("SkipTLSVerify");
    }

    @Test
    void missingContextIsAConfigurationError() {
        env.put("DOCKER_CONTEXT", "ghost");
        assertThatThrownBy(() -> discovery().resolve(none())).isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("'ghost'").hasMessageContaining(EngineDiscovery.sha256("ghost"));
    }

    @Test
    void defaultContextMeansTheSockets() throws IOException {
        Files.createDirectories(home.resolve(".docker"));
        Files.writeString(home.resolve(".docker/config.json"), "{\"currentContext\":\"default\"}");
        Path sock = pingable(temp.resolve("var-run-docker.sock"));
        assertThat(discovery().resolve(none()).socketPath()).isEqualTo(sock);
    }

    @Test
    void rootlessSocket() throws IOException {
        Path xdg = Files.createDirectories(temp.resolve("xdg"));
        env.put("XDG_RUNTIME_DIR", xdg.toString());
        Path sock = pingable(xdg.resolve("docker.sock"));
        pingable(temp.resolve("var-run-docker.sock"));
        DockerHost h = discovery().resolve(none());
        assertThat(h.socketPath()).isEqualTo(sock);
        assertThat(h.source()).contains(sock.toString());
    }

    @Test
    void systemSocket() throws IOException {
        env.put("XDG_RUNTIME_DIR", temp.resolve("xdg-empty").toString());
        Path sock = pingable(temp.resolve("var-run-docker.sock"));
        pingable(temp.resolve("xdg-empty/podman/podman.sock"));
        assertThat(discovery().resolve(none()).socketPath()).isEqualTo(sock);
    }

    @Test
    void rootlessPodmanSocket() throws IOException {
        Path xdg = Files.createDirectories(temp.resolve("xdg"));
        env.put("XDG_RUNTIME_DIR", xdg.toString());
        Path sock = pingable(xdg.resolve("podman/podman.sock"));
        pingable(temp.resolve("run-podman.sock"));
        assertThat(discovery().resolve(none()).socketPath()).isEqualTo(sock);
    }

    @Test
    void systemPodmanSocket() throws IOException {
        Path sock = pingable(temp.resolve("run-podman.sock"));
        assertThat(discovery().resolve(none()).socketPath()).isEqualTo(sock);
    }

    // --- precedence and failures

    @Test
    void precedenceIsPropertyThenEnvironmentThenContextThenSockets() throws IOException {
        context("work", "unix:///ctx/docker.sock", false);
        env.put("DOCKER_CONTEXT", "work");
        env.put("DOCKER_HOST", "unix:///env.sock");
        pingable(temp.resolve("var-run-docker.sock"));
        Map<String, String> explicit = Map.of("docker.host", "unix:///explicit.sock");
        assertThat(discovery().resolve(context(explicit)).uri()).hasToString("unix:///explicit.sock");
        assertThat(discovery().resolve(none()).uri()).hasToString("unix:///env.sock");
        env.remove("DOCKER_HOST");
        assertThat(discovery().resolve(none()).uri()).hasToString("unix:///ctx/docker.sock");
        env.remove("DOCKER_CONTEXT");
        assertThat(discovery().resolve(none()).socketPath()).isEqualTo(temp.resolve("var-run-docker.sock"));
    }

    @Test
    void configuredEnginesAreUsedAsGivenEvenWhenDown() throws IOException {
        pingable(temp.resolve("var-run-docker.sock"));
        env.put("DOCKER_HOST", "unix:///nothing/there.sock");
        assertThat(discovery().resolve(none()).uri()).hasToString("unix:///nothing/there.sock");
        assertThat(discovery().unavailableReason(none())).hasValueSatisfying(r ->
                assertThat(r).contains("/nothing/there.sock").contains("DOCKER_HOST"));
    }

    @Test
    void aSocketThatDoesNotAnswerIsPassedOver() throws IOException {
        // A socket nobody listens on (refused) and one that accepts but never answers (timeout).
        Path dead = temp.resolve("dead.sock");
        try (var server = java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
            server.bind(java.net.UnixDomainSocketAddress.of(dead));
        }
        FakeEngine silent = new FakeEngine((String line, OutputStream out) -> sleep(5_000), false);
        fakes.add(silent);
        Path good = pingable(temp.resolve("podman.sock"));
        long t0 = System.nanoTime();
        DockerHost h = discovery(List.of(dead, silent.host().socketPath()), List.of(good)).resolve(none());
        assertThat(h.socketPath()).isEqualTo(good);
        assertThat((System.nanoTime() - t0) / 1_000_000).isBetween(1_500L, 4_000L); // the silent one's ~2 s
    }

    @Test
    void noneAnsweringListsEveryCandidateAndWhy() throws IOException {
        Path xdg = Files.createDirectories(temp.resolve("xdg"));
        env.put("XDG_RUNTIME_DIR", xdg.toString());
        Path dead = temp.resolve("var-run-docker.sock");
        try (var server = java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
            server.bind(java.net.UnixDomainSocketAddress.of(dead));
        }
        FakeEngine notDocker = new FakeEngine(line -> FakeEngine.response(404, "{}"), false);
        fakes.add(notDocker);
        Files.createDirectories(xdg.resolve("podman"));
        Files.createSymbolicLink(xdg.resolve("podman/podman.sock"), notDocker.host().socketPath());
        assertThatThrownBy(() -> discovery().resolve(none())).isInstanceOf(SandboxUnavailableException.class)
                .hasMessageContaining(xdg.resolve("docker.sock") + " (rootless Docker, $XDG_RUNTIME_DIR): no such socket")
                .hasMessageContaining(dead + " (Docker): ")
                .hasMessageContaining(xdg.resolve("podman/podman.sock") + " (rootless Podman, $XDG_RUNTIME_DIR): "
                        + "GET /_ping answered HTTP 404")
                .hasMessageContaining(temp.resolve("run-podman.sock") + " (Podman): no such socket")
                .hasMessageContaining("DOCKER_HOST");
        assertThat(discovery().unavailableReason(none())).isEmpty(); // socket files exist: create() probes them
        Files.delete(dead);
        Files.delete(xdg.resolve("podman/podman.sock"));
        assertThat(discovery().unavailableReason(none())).hasValueSatisfying(r -> assertThat(r)
                .contains(dead.toString()).contains(temp.resolve("run-podman.sock").toString()));
    }

    // --- TLS settings

    @Test
    void dockerTlsVerifyAndCertPath() throws Exception {
        Path certs = Certificates.write(Files.createDirectories(temp.resolve("certs")));
        env.put("DOCKER_HOST", "tcp://127.0.0.1:2376");
        env.put("DOCKER_TLS_VERIFY", "1");
        env.put("DOCKER_CERT_PATH", certs.toString());
        DockerHost h = discovery().resolve(none());
        assertThat(h.isTls()).isTrue();
        assertThat(h.port()).isEqualTo(2376);
        assertThat(h.tls().toString()).contains(certs.resolve("key.pem").toString());
    }

    @Test
    void certPathDefaultsToTheDockerConfigDirectory() throws Exception {
        Certificates.write(Files.createDirectories(home.resolve(".docker")));
        env.put("DOCKER_HOST", "tcp://localhost:2376");
        env.put("DOCKER_TLS_VERIFY", "1");
        assertThat(discovery().resolve(none()).tls().toString()).contains(home.resolve(".docker/ca.pem").toString());
    }

    @Test
    void propertiesOverrideTheEnvironmentsTlsSettings() throws Exception {
        Path certs = Certificates.write(Files.createDirectories(temp.resolve("certs")));
        env.put("DOCKER_TLS_VERIFY", "1");
        env.put("DOCKER_CERT_PATH", temp.resolve("nowhere").toString());
        DockerHost plain = discovery().resolve(context(Map.of("docker.host", "tcp://127.0.0.1:2375",
                "docker.tlsVerify", "false")));
        assertThat(plain.isTls()).isFalse();
        assertThat(plain.port()).isEqualTo(2375);
        DockerHost tls = discovery().resolve(context(Map.of("docker.host", "tcp://127.0.0.1:2376",
                "docker.certPath", certs.toString())));
        assertThat(tls.isTls()).isTrue();
        Path elsewhere = Files.createDirectories(temp.resolve("elsewhere"));
        Files.move(certs.resolve("ca.pem"), elsewhere.resolve("my-ca.pem"));
        DockerHost explicitFiles = discovery().resolve(context(Map.of("docker.host", "tcp://127.0.0.1:2376",
                "docker.tlsVerify", "true", "docker.certPath", certs.toString(),
                "docker.tlsCaCert", elsewhere.resolve("my-ca.pem").toString())));
        assertThat(explicitFiles.tls().toString()).contains("my-ca.pem");
    }

    @Test
    void tlsWithoutACaIsRefused() {
        env.put("DOCKER_TLS_VERIFY", "1");
        env.put("DOCKER_CERT_PATH", temp.resolve("empty").toString());
        assertThatThrownBy(() -> discovery().resolve(context(Map.of("docker.host", "tcp://127.0.0.1:2376"))))
                .isInstanceOfSatisfying(DockerTlsException.class, e ->
                        assertThat(e.reason()).isEqualTo(DockerTlsException.Reason.BAD_MATERIAL))
                .hasMessageContaining(temp.resolve("empty/ca.pem").toString());
        assertThatThrownBy(() -> discovery().resolve(context(Map.of("docker.host", "https://127.0.0.1:2376",
                "docker.certPath", temp.toString())))).isInstanceOf(DockerTlsException.class);
    }

    @Test
    void aCertificateWithoutItsKeyIsRefused() throws Exception {
        Path certs = Certificates.write(Files.createDirectories(temp.resolve("certs")));
        Files.delete(certs.resolve("key.pem"));
        assertThatThrownBy(() -> discovery().resolve(context(Map.of("docker.host", "tcp://127.0.0.1:2376",
                "docker.tlsVerify", "true", "docker.certPath", certs.toString()))))
                .isInstanceOfSatisfying(DockerTlsException.class, e ->
                        assertThat(e.reason()).isEqualTo(DockerTlsException.Reason.BAD_MATERIAL))
                .hasMessageContaining("client key").hasMessageContaining(certs.resolve("key.pem").toString());
    }

    @Test
    void plainTcpIsAcceptedOnLoopbackOnly() {
        for (String local : List.of("tcp://127.0.0.1:2375", "tcp://localhost:2375", "http://[::1]:2375")) {
            assertThat(discovery().resolve(context(Map.of("docker.host", local))).isTls()).as(local).isFalse();
        }
        for (String remote : List.of("tcp://192.0.2.10:2375", "tcp://10.1.2.3", "http://198.51.100.7:2375")) {
            assertThatThrownBy(() -> discovery().resolve(context(Map.of("docker.host", remote)))).as(remote)
                    .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("refusing plain TCP")
                    .hasMessageContaining("loopback only");
        }
    }

    @Test
    void unsupportedSchemesNameTheAcceptedForms() {
        env.put("DOCKER_TLS_VERIFY", "1"); // TLS settings must not hide that the scheme itself is wrong
        for (String bad : List.of("ssh://user@host", "npipe:////./pipe/docker_engine", "unix://")) {
            assertThatThrownBy(() -> discovery().resolve(context(Map.of("docker.host", bad)))).as(bad)
                    .isInstanceOf(SandboxConfigurationException.class).isNotInstanceOf(DockerTlsException.class);
        }
        assertThatThrownBy(() -> discovery().resolve(context(Map.of("docker.host", "ssh://user@host"))))
                .hasMessageContaining("unix:///path/to/docker.sock").hasMessageContaining("tcp://host:port");
        env.remove("DOCKER_TLS_VERIFY");
        assertThatThrownBy(() -> discovery().resolve(context(Map.of("docker.host", "tcp://127.0.0.1:1",
                "docker.tlsVerify", "maybe")))).isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("docker.tlsVerify");
    }

    @Test
    void contextNamesHashLikeDockers() {
        // docker context create work; ls ~/.docker/contexts/meta
        assertThat(EngineDiscovery.sha256("default"))
                .isEqualTo("37a8eec1ce19687d132fe29051dca629d164e2c4958ba141d5f4133a33f0688f");
    }

    /** Writes a context's meta.json the way {@code docker context create} does; returns its TLS directory. */
    private Path context(String name, String host, boolean skipVerify) throws IOException {
        return writeContext(home.resolve(".docker"), name, host, skipVerify);
    }

    private static Path writeContext(Path config, String name, String host, boolean skipVerify) throws IOException {
        String id = EngineDiscovery.sha256(name);
        Path meta = Files.createDirectories(config.resolve("contexts/meta").resolve(id));
        Files.writeString(meta.resolve("meta.json"), "{\"Name\":\"" + name + "\",\"Metadata\":{},\"Endpoints\":{"
                + "\"docker\":{\"Host\":\"" + host + "\",\"SkipTLSVerify\":" + skipVerify + "}}}");
        return Files.createDirectories(config.resolve("contexts/tls").resolve(id).resolve("docker"));
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
