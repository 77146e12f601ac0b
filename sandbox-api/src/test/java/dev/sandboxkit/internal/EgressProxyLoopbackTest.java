package dev.sandboxkit.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxkit.EgressPolicy;
import dev.sandboxkit.spi.PortConnection;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Drives EgressProxy.serve with a loopback socket pair standing in for the sandbox side; upstreams are real. */
class EgressProxyLoopbackTest {

    private final ExecutorService io = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "egress-test-io");
        t.setDaemon(true);
        return t;
    });
    private final AtomicReference<String> upstreamSaw = new AtomicReference<>("");
    private ServerSocket upstream;
    private EgressProxy proxy;

    private final java.util.concurrent.ScheduledExecutorService timers =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
    private final RecordingEgressListener listener = new RecordingEgressListener();

    @BeforeEach
    void setUp() throws IOException {
        upstream = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        TestUpstream.serve(upstream, io, "hello", upstreamSaw);
        proxy = new EgressProxy(EgressProxy.Settings.DEFAULTS, io, timers, Clock.systemUTC(), host -> {
            if (host.equals("allowed.test") || host.equals("denied.test")) {
                return List.of(InetAddress.getLoopbackAddress());
            }
            throw new UnknownHostException(host);
        }, listener);
    }

    @AfterEach
    void tearDown() throws IOException {
        upstream.close();
        io.shutdownNow();
        timers.shutdownNow();
    }

    private String exchange(EgressPolicy policy, String request) throws IOException {
        try (ServerSocket pair = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             Socket client = new Socket(InetAddress.getLoopbackAddress(), pair.getLocalPort())) {
            Socket sandboxSide = pair.accept();
            proxy.serve("s1", "sbx-s1", new SocketPortConnection(sandboxSide), () -> policy);
            client.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            client.getOutputStream().flush();
            client.setSoTimeout(30_000);
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            client.getInputStream().transferTo(got);
            return got.toString(StandardCharsets.ISO_8859_1);
        }
    }

    @Test
    void allowedPlainHttpIsRewrittenToOriginForm() throws IOException {
        EgressPolicy policy = EgressPolicy.builder().allowHost("allowed.test").build();
        String reply = exchange(policy, "GET http://allowed.test:" + upstream.getLocalPort()
                + "/x?y=1 HTTP/1.1\r\nHost: allowed.test\r\nProxy-Authorization: nope\r\n\r\n");
        assertThat(reply).startsWith("HTTP/1.1 200 OK").endsWith("hello");
        assertThat(upstreamSaw.get()).startsWith("GET /x?y=1 HTTP/1.1\r\n")
                .contains("Connection: close").doesNotContain("Proxy-Authorization");
        assertThat(proxy.counters("s1").allowed()).isEqualTo(1);
        assertThat(listener.heard).startsWith("allowed s1 sbx-s1 allowed.test:" + upstream.getLocalPort());
    }

    @Test
    void connectTunnelsBytes() throws IOException {
        EgressPolicy policy = EgressPolicy.parse("allowed.test");
        String reply = exchange(policy, "CONNECT allowed.test:" + upstream.getLocalPort()
                + " HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n");
        assertThat(reply).startsWith("HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 200 OK").endsWith("hello");
    }

    @Test
    void deniedHostGets403NamingItAndAnEvent() throws IOException {
        EgressPolicy policy = EgressPolicy.parse("pypi.org, *.pythonhosted.org");
        String reply = exchange(policy, "CONNECT denied.test:443 HTTP/1.1\r\n\r\n");
        assertThat(reply).startsWith("HTTP/1.1 403 Forbidden").contains(
                "denied.test:443 is not in this sandbox's egress allow-list (allowed: pypi.org, *.pythonhosted.org)");
        assertThat(proxy.counters("s1").denied()).isEqualTo(1);
        assertThat(listener.heard).containsExactly("denied s1 sbx-s1 denied.test:443");
    }

    @ParameterizedTest
    @ValueSource(strings = {"localhost", "127.0.0.1", "0.0.0.0", "[::1]", "[::ffff:127.0.0.1]", "2130706433",
        "0177.0.0.1", "0x7f.1", "127.1", "allowed.test@evil", "evil@allowed.test"})
    void hostileSpellingsAreRefused(String host) throws IOException {
        String reply = exchange(EgressPolicy.parse("allowed.test"), "CONNECT " + host + ":"
                + upstream.getLocalPort() + " HTTP/1.1\r\n\r\n");
        assertThat(reply).as(host).matches("(?s)HTTP/1.1 40[03] .*");
    }

    @Test
    void policyIsReadPerConnection() throws IOException {
        AtomicReference<EgressPolicy> policy = new AtomicReference<>(EgressPolicy.denyAll());
        assertThat(exchange(policy.get(), "CONNECT allowed.test:" + upstream.getLocalPort() + " HTTP/1.1\r\n\r\n"))
                .startsWith("HTTP/1.1 403");
        policy.set(EgressPolicy.parse("allowed.test"));
        assertThat(exchange(policy.get(), "GET http://allowed.test:" + upstream.getLocalPort() + "/ HTTP/1.1\r\n\r\n"))
                .startsWith("HTTP/1.1 200 OK");
    }
}
