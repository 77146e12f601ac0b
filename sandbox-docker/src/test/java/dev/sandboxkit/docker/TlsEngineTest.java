package dev.sandboxkit.docker;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.docker.internal.engine.DockerHost;
import dev.sandboxkit.docker.internal.engine.EngineClient;
import dev.sandboxkit.docker.internal.engine.EngineDiscovery;
import dev.sandboxkit.spi.DriverContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static dev.sandboxkit.docker.DockerTestSupport.context;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The driver against the TLS engine ({@link TlsEngine}) beyond the conformance kit: each way of configuring
 * it (properties, {@code DOCKER_TLS_VERIFY}/{@code DOCKER_CERT_PATH}, a Docker context), other key formats,
 * large streams through the TLS records, and the typed errors for certificates on either side, on the lifecycle
 * client (docker-java) and on the exec client alike.
 */
@Tag("tls")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TlsEngineTest {
    private TlsEngine engine;
    private Path root;
    private final String instanceId = DockerTestSupport.newInstanceId();

    @BeforeAll
    void start() throws IOException {
        engine = TlsEngine.get();
        root = Files.createTempDirectory("sandboxkit-tls-test");
    }

    @AfterAll
    void cleanUp() {
        if (engine != null) {
            String left = engine.cli("ps", "-aq", "--filter", "label=dev.sandboxkit.owner=" + instanceId);
            for (String id : left.split("\\s+")) {
                if (!id.isBlank()) {
                    engine.cli("rm", "-f", id);
                }
            }
        }
        if (root != null) {
            DockerTestSupport.deleteTree(root);
        }
    }

    private DockerSandboxDriver driver(Path certDir) {
        return (DockerSandboxDriver) new DockerDriverProvider().create(context(instanceId, root.resolve("ws"),
                engine.properties(certDir)));
    }

    @Test
    void lifecycleAndExecWithAnEcClientKey() {
        try (DockerSandboxDriver driver = driver(engine.ecClientDir)) {
            driver.ping();
            roundTrip(driver, "ec");
        }
    }

    @Test
    void largeStreamsCrossTheTlsRecordsIntact() {
        try (DockerSandboxDriver driver = driver(engine.clientDir)) {
            byte[] stdin = new byte[3 * 1024 * 1024 + 17];
            new java.util.Random(7).nextBytes(stdin);
            for (ExecMode mode : List.of(ExecMode.CHANNEL, ExecMode.PLAIN)) {
                String id = DockerTestSupport.start(driver, instanceId, "big-" + mode,
                        DockerTestSupport.spec().execMode(mode).build());
                try {
                    ExecResult r = driver.exec(id, ExecRequest.shell("cat; dd if=/dev/zero bs=65536 count=80 2>/dev/null")
                            .withStdin(stdin).withOutputLimit(16 * 1024 * 1024).withTimeout(Duration.ofSeconds(60)));
                    assertThat(r.exitCode()).as(mode.toString()).isZero();
                    byte[] out = r.stdoutBytes();
                    assertThat(out).as(mode.toString()).hasSize(stdin.length + 80 * 65536);
                    assertThat(Arrays.copyOf(out, stdin.length)).as(mode.toString()).isEqualTo(stdin);
                } finally {
                    driver.remove(id);
                }
            }
        }
    }

    @Test
    void dockerTlsVerifyAndCertPathFromTheEnvironment() {
        Map<String, String> env = Map.of("DOCKER_HOST", engine.host(), "DOCKER_TLS_VERIFY", "1",
                "DOCKER_CERT_PATH", engine.clientDir.toString());
        EngineDiscovery discovery = EngineDiscovery.of(env, root, List.of(), List.of());
        try (DockerSandboxDriver driver = new DockerSandboxDriver(context(instanceId, root.resolve("ws")), discovery)) {
            driver.ping();
            roundTrip(driver, "env");
        }
    }

    @Test
    void aDockerContextWithTlsMaterial() throws IOException {
        Path config = Files.createDirectories(root.resolve("docker-config"));
        String id = sha256("tls-test");
        Path meta = Files.createDirectories(config.resolve("contexts/meta").resolve(id));
        Files.writeString(meta.resolve("meta.json"), "{\"Name\":\"tls-test\",\"Metadata\":{},\"Endpoints\":{\"docker\":"
                + "{\"Host\":\"" + engine.host() + "\",\"SkipTLSVerify\":false}}}");
        Path tls = Files.createDirectories(config.resolve("contexts/tls").resolve(id).resolve("docker"));
        for (String f : List.of("ca.pem", "cert.pem", "key.pem")) {
            Files.copy(engine.clientDir.resolve(f), tls.resolve(f));
        }
        Files.writeString(config.resolve("config.json"), "{\"currentContext\":\"tls-test\"}");
        // The docker CLI agrees that this is a context it can use (same layout, same hash).
        assertThat(DockerTestSupport.cliWithEnv(Map.of("DOCKER_CONFIG", config.toString()), "context", "ls",
                "--format", "{{.Name}} {{.DockerEndpoint}}")).contains("tls-test " + engine.host());
        EngineDiscovery discovery = EngineDiscovery.of(Map.of("DOCKER_CONFIG", config.toString()), root, List.of(),
                List.of());
        try (DockerSandboxDriver driver = new DockerSandboxDriver(context(instanceId, root.resolve("ws")), discovery)) {
            driver.ping();
            roundTrip(driver, "ctx");
        }
    }

    @Test
    void throughTheManager() {
        SandboxManager.Builder builder = SandboxManager.builder().driver("docker").workspaceRoot(root.resolve("mgr"))
                .instanceId(instanceId + "-m");
        engine.properties(engine.clientDir).forEach(builder::driverProperty);
        try (SandboxManager manager = builder.build()) {
            try (Sandbox s = manager.acquire("tls-session", DockerTestSupport.spec().build())) {
                ExecResult r = s.exec(ExecRequest.shell("echo over-tls > f && cat f"));
                assertThat(r.stdout()).isEqualTo("over-tls\n");
                assertThat(new String(s.files().readBytes("f"), StandardCharsets.UTF_8)).isEqualTo("over-tls\n");
            }
            manager.destroy("tls-session");
        }
    }

    @Test
    void aClientCertificateFromAnotherCaIsRefusedByTheEngine() {
        assertRefused(engine.rogueClientDir, DockerTlsException.Reason.CLIENT_REJECTED, "refused this client");
    }

    @Test
    void noClientCertificateIsRefusedByTheEngine() throws IOException {
        Path caOnly = Files.createDirectories(root.resolve("ca-only"));
        Files.copy(engine.clientDir.resolve("ca.pem"), caOnly.resolve("ca.pem"));
        assertRefused(caOnly, DockerTlsException.Reason.CLIENT_REJECTED, "refused this client");
    }

    @Test
    void anEngineCertificateFromAnotherCaIsNotTrusted() {
        assertRefused(engine.wrongCaDir, DockerTlsException.Reason.ENGINE_NOT_TRUSTED, "not trusted");
    }

    @Test
    void aManagerOnAnUntrustedEngineFailsToBuild() {
        SandboxManager.Builder builder = SandboxManager.builder().driver("docker").workspaceRoot(root.resolve("bad"));
        engine.properties(engine.wrongCaDir).forEach(builder::driverProperty);
        assertThatThrownBy(builder::build).isInstanceOfSatisfying(DockerTlsException.class, e -> {
            assertThat(e.reason()).isEqualTo(DockerTlsException.Reason.ENGINE_NOT_TRUSTED);
            assertThat(e.isRetryable()).isFalse();
        }).hasMessageContaining(engine.host());
    }

    /**
     * The engine's certificate names 127.0.0.1 and localhost; reached as 127.0.0.2 (a relay on another loopback
     * address), the right CA's certificate for the wrong name must be refused on both clients.
     */
    @Test
    void anEngineCertificateForAnotherHostNameIsNotTrusted() throws IOException {
        try (ServerSocket relay = new ServerSocket()) {
            relay.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.2"), 0));
            Thread accept = new Thread(() -> relayTo(relay, engine.port), "tls-name-relay");
            accept.setDaemon(true);
            accept.start();
            Map<String, String> props = new java.util.HashMap<>(engine.properties(engine.clientDir));
            props.put("docker.host", "tcp://127.0.0.2:" + relay.getLocalPort());
            assertRefused(props, "tcp://127.0.0.2:" + relay.getLocalPort(),
                    DockerTlsException.Reason.ENGINE_NOT_TRUSTED, "not trusted");
        }
    }

    /** Copies each accepted connection to the engine's port and back, until the relay closes. */
    private static void relayTo(ServerSocket relay, int port) {
        while (!relay.isClosed()) {
            try {
                Socket in = relay.accept();
                Socket out = new Socket(InetAddress.getLoopbackAddress(), port);
                pump(in, out);
                pump(out, in);
            } catch (IOException closed) {
                return;
            }
        }
    }

    private static void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            try (from; to) {
                from.getInputStream().transferTo(to.getOutputStream());
            } catch (IOException ignored) {
                // one side closed: both go
            }
        }, "tls-name-relay-pump");
        t.setDaemon(true);
        t.start();
    }

    private void assertRefused(Path certDir, DockerTlsException.Reason reason, String text) {
        assertRefused(engine.properties(certDir), engine.host(), reason, text);
    }

    /** The same typed error from docker-java (ping, list) and from the raw exec client. */
    private void assertRefused(Map<String, String> props, String host, DockerTlsException.Reason reason,
                               String text) {
        try (DockerSandboxDriver driver = (DockerSandboxDriver) new DockerDriverProvider()
                .create(context(instanceId, root.resolve("ws"), props))) {
            assertThatThrownBy(driver::ping).isInstanceOfSatisfying(DockerTlsException.class,
                    e -> assertThat(e.reason()).isEqualTo(reason)).hasMessageContaining(text)
                    .hasMessageContaining(host);
            assertThatThrownBy(() -> driver.list(Map.of())).isInstanceOf(DockerTlsException.class);
            assertThatThrownBy(() -> driver.exec("0123456789ab", ExecRequest.of("true")))
                    .isInstanceOfSatisfying(DockerTlsException.class, e -> assertThat(e.reason()).isEqualTo(reason))
                    .hasMessageContaining(text);
        }
        DockerHost resolved = DockerHost.resolve(new DriverContext("t", root, java.time.Clock.systemUTC(), props));
        try (EngineClient client = new EngineClient(resolved)) {
            assertThatThrownBy(() -> {
                try {
                    client.call("GET", "/version", null);
                } catch (IOException e) {
                    throw resolved.unreachable(e);
                }
            }).isInstanceOfSatisfying(DockerTlsException.class, e -> assertThat(e.reason()).isEqualTo(reason));
        }
    }

    /** Create, exec with stdin (EOF must reach `cat` through the TLS half-close), remove. */
    private void roundTrip(DockerSandboxDriver driver, String session) {
        String id = DockerTestSupport.start(driver, instanceId, session, DockerTestSupport.spec().build());
        try {
            ExecResult r = driver.exec(id, ExecRequest.of("cat").withStdin("through TLS".getBytes(StandardCharsets.UTF_8))
                    .withTimeout(Duration.ofSeconds(20)));
            assertThat(r.exitCode()).isZero();
            assertThat(r.stdout()).isEqualTo("through TLS");
            assertThat(r.timedOut()).isFalse();
            assertThat(driver.list(Map.of("dev.sandboxkit.owner", instanceId))).anySatisfy(d ->
                    assertThat(d.id()).isEqualTo(id));
        } finally {
            driver.remove(id);
        }
        assertThat(engine.cli("ps", "-aq", "--filter", "id=" + id)).isBlank();
    }

    private static String sha256(String s) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                    .digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
