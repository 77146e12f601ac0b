package dev.sandboxkit.internal;

import dev.sandboxkit.EgressPolicy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.TrustManagerFactory;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Credential injection: the proxy adds the policy's header to a plain-HTTP request (the sandbox's own value of it is
 * dropped), and with {@code tlsUpstream} speaks TLS to the host, its certificate checked against the host name, while
 * the sandbox speaks plain HTTP to the proxy. The TLS server runs on 127.0.0.1 with a certificate for
 * {@code allowed.test} made by the JDK's keytool; the proxy trusts exactly that certificate.
 */
class EgressCredentialTest {
    private static final String STOREPASS = "changeit";

    @TempDir
    Path dir;
    private final ExecutorService io = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "egress-credential-test");
        t.setDaemon(true);
        return t;
    });
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();
    private final AtomicReference<String> upstreamSaw = new AtomicReference<>("");
    private ServerSocket plain;
    private SSLServerSocket tls;
    private EgressProxy proxy;

    @BeforeEach
    void start() throws Exception {
        Path keystore = dir.resolve("allowed.p12");
        Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "allowed", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=allowed.test", "-ext", "SAN=dns:allowed.test", "-validity", "2",
                "-keystore", keystore.toString(), "-storetype", "PKCS12", "-storepass", STOREPASS)
                .redirectErrorStream(true).start();
        String said = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(keytool.waitFor(60, TimeUnit.SECONDS) && keytool.exitValue() == 0).as("keytool: %s", said).isTrue();
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keystore)) {
            ks.load(in, STOREPASS.toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, STOREPASS.toCharArray());
        SSLContext server = SSLContext.getInstance("TLS");
        server.init(kmf.getKeyManagers(), null, null);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks); // the test's certificate is the only trust anchor
        SSLContext client = SSLContext.getInstance("TLS");
        client.init(null, tmf.getTrustManagers(), null);

        plain = new ServerSocket(0, 10, InetAddress.getLoopbackAddress());
        tls = (SSLServerSocket) server.getServerSocketFactory().createServerSocket(0, 10, InetAddress.getLoopbackAddress());
        serve(plain, "plain");
        serve(tls, "over tls");
        proxy = new EgressProxy(EgressProxy.Settings.DEFAULTS, io, timers, Clock.systemUTC(), host -> {
            if (host.equals("allowed.test") || host.equals("other.test")) {
                return List.of(InetAddress.getLoopbackAddress());
            }
            throw new UnknownHostException(host);
        }, new RecordingEgressListener(), client.getSocketFactory());
    }

    @AfterEach
    void stop() throws IOException {
        plain.close();
        tls.close();
        io.shutdownNow();
        timers.shutdownNow();
    }

    private void serve(ServerSocket server, String body) {
        TestUpstream.serve(server, io, body, upstreamSaw);
    }

    private String exchange(EgressPolicy policy, String request) throws IOException {
        try (ServerSocket pair = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             Socket sandbox = new Socket(InetAddress.getLoopbackAddress(), pair.getLocalPort())) {
            proxy.serve("s1", "sbx-s1", new SocketPortConnection(pair.accept()), () -> policy);
            sandbox.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            sandbox.getOutputStream().flush();
            sandbox.setSoTimeout(30_000);
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            sandbox.getInputStream().transferTo(got);
            return got.toString(StandardCharsets.ISO_8859_1);
        }
    }

    @Test
    void theHostAddsTheCredentialAndTheSandboxsOwnValueIsDropped() throws IOException {
        EgressPolicy policy = EgressPolicy.builder().allowHost("allowed.test")
                .header("allowed.test", "Authorization", "Bearer host-secret").build();
        String reply = exchange(policy, "GET http://allowed.test:" + plain.getLocalPort() + "/v1 HTTP/1.1\r\n"
                + "Host: allowed.test\r\nauthorization: Bearer sandbox-guess\r\n\r\n");
        assertThat(reply).startsWith("HTTP/1.1 200").endsWith("plain");
        assertThat(upstreamSaw.get()).contains("Authorization: Bearer host-secret\r\n")
                .doesNotContain("sandbox-guess");
        assertThat(policy.toString()).doesNotContain("host-secret");
    }

    @Test
    void aCredentialGoesOnlyToItsHost() throws IOException {
        EgressPolicy policy = EgressPolicy.builder().allowHost("allowed.test").allowHost("other.test")
                .header("allowed.test", "Authorization", "Bearer host-secret").build();
        exchange(policy, "GET http://other.test:" + plain.getLocalPort() + "/ HTTP/1.1\r\nHost: other.test\r\n\r\n");
        assertThat(upstreamSaw.get()).startsWith("GET / HTTP/1.1").doesNotContain("host-secret");
    }

    @Test
    void tlsUpstreamSpeaksTlsToTheHostWhileTheSandboxSpeaksHttp() throws IOException {
        EgressPolicy policy = EgressPolicy.builder().allowHost("allowed.test").tlsUpstream("allowed.test")
                .header("allowed.test", "Authorization", "Bearer host-secret").build();
        String reply = exchange(policy, "GET http://allowed.test:" + tls.getLocalPort() + "/v1 HTTP/1.1\r\n"
                + "Host: allowed.test\r\n\r\n");
        assertThat(reply).startsWith("HTTP/1.1 200").endsWith("over tls");
        assertThat(upstreamSaw.get()).startsWith("GET /v1 HTTP/1.1").contains("Authorization: Bearer host-secret");
    }

    @Test
    void aCertificateForAnotherNameFailsTheRequestWith502() throws IOException {
        EgressPolicy policy = EgressPolicy.builder().allowHost("other.test").tlsUpstream("other.test").build();
        String reply = exchange(policy, "GET http://other.test:" + tls.getLocalPort() + "/ HTTP/1.1\r\n\r\n");
        assertThat(reply).startsWith("HTTP/1.1 502").contains("TLS to other.test");
    }
}
