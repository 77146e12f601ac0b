package dev.sandboxkit.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxkit.EgressPolicy;
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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class EgressProxyTest {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    private static final byte[] BODY = new byte[256 * 1024];

    static {
        Arrays.fill(BODY, (byte) 'x');
    }

    private final ExecutorService io = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "egress-test-io");
        t.setDaemon(true);
        return t;
    });
    private final List<String> upstreamHeads = new CopyOnWriteArrayList<>();
    private ServerSocket httpServer;
    private ServerSocket echoServer;
    private ServerSocket proxySide;
    private EgressProxy proxy;

    private final java.util.concurrent.ScheduledExecutorService timers =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
    private final RecordingEgressListener listener = new RecordingEgressListener();

    @BeforeEach
    void start() throws IOException {
        httpServer = new ServerSocket(0, 200, LOOPBACK);
        echoServer = new ServerSocket(0, 200, LOOPBACK);
        proxySide = new ServerSocket(0, 3000, LOOPBACK);
        acceptLoop(httpServer, s -> {
            upstreamHeads.add(new String(readHead(s.getInputStream()), StandardCharsets.ISO_8859_1));
            OutputStream out = s.getOutputStream();
            out.write(("HTTP/1.1 200 OK\r\nContent-Length: " + BODY.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(BODY);
            out.flush();
        });
        acceptLoop(echoServer, s -> s.getInputStream().transferTo(s.getOutputStream()));
        proxy = new EgressProxy(EgressProxy.Settings.DEFAULTS, io, timers, Clock.systemUTC(), host -> {
            if (host.equals("allowed.test") || host.equals("denied.test")) {
                return List.of(LOOPBACK);
            }
            throw new UnknownHostException(host);
        }, listener);
    }

    @AfterEach
    void stop() throws IOException {
        httpServer.close();
        echoServer.close();
        proxySide.close();
        io.shutdownNow();
        timers.shutdownNow();
    }

    interface Conn {
        void run(Socket s) throws IOException;
    }

    private void acceptLoop(ServerSocket server, Conn handler) {
        io.execute(() -> {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    io.execute(() -> {
                        try (s) {
                            handler.run(s);
                        } catch (IOException ignored) {
                            // test upstream: client went away
                        }
                    });
                } catch (IOException e) {
                    return;
                }
            }
        });
    }

    /** Opens a socket pair: the returned socket is the sandbox process; the other end is served by the proxy. */
    private Socket open(String session, EgressPolicy policy) throws IOException {
        return open(session, () -> policy);
    }

    private Socket open(String session, java.util.function.Supplier<EgressPolicy> policy) throws IOException {
        Socket client = new Socket(LOOPBACK, proxySide.getLocalPort());
        Socket server = proxySide.accept();
        proxy.serve(session, "sbx-" + session, new SocketPortConnection(server), policy);
        client.setSoTimeout(60_000);
        return client;
    }

    private static byte[] readHead(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) >= 0) {
            b.write(c);
            byte[] a = b.toByteArray();
            int n = a.length;
            if (n >= 4 && a[n - 4] == '\r' && a[n - 3] == '\n' && a[n - 2] == '\r' && a[n - 1] == '\n') {
                break;
            }
        }
        return b.toByteArray();
    }

    private static String exchange(Socket s, String request) throws IOException {
        try (s) {
            s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    private String get(String session, EgressPolicy policy, String host) throws IOException {
        return exchange(open(session, policy), "GET http://" + host + ":" + httpServer.getLocalPort()
                + "/simple/?q=1 HTTP/1.1\r\nHost: " + host + "\r\nProxy-Authorization: secret\r\n"
                + "Proxy-Connection: keep-alive\r\n\r\n");
    }

    @Test
    void allowedPlainHttpIsRelayedInOriginFormWithoutProxyHeaders() throws IOException {
        String response = get("s1", EgressPolicy.parse("allowed.test"), "allowed.test");
        assertThat(response).startsWith("HTTP/1.1 200 OK").endsWith(new String(BODY, StandardCharsets.US_ASCII));
        assertThat(upstreamHeads).hasSize(1);
        assertThat(upstreamHeads.get(0)).startsWith("GET /simple/?q=1 HTTP/1.1\r\n").contains("Connection: close")
                .doesNotContainIgnoringCase("proxy-");
        assertThat(proxy.counters("s1").allowed()).isEqualTo(1);
        assertThat(proxy.counters("s1").bytesIn()).isGreaterThan(BODY.length);
    }

    @Test
    void allowedConnectTunnelsBothWays() throws IOException {
        Socket s = open("s1", EgressPolicy.parse("allowed.test:" + echoServer.getLocalPort()));
        try (s) {
            OutputStream out = s.getOutputStream();
            out.write(("CONNECT allowed.test:" + echoServer.getLocalPort() + " HTTP/1.1\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(new String(readHead(s.getInputStream()), StandardCharsets.US_ASCII))
                    .startsWith("HTTP/1.1 200 Connection established");
            out.write("ping".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            s.shutdownOutput();
            assertThat(new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII)).isEqualTo("ping");
        }
    }

    @Test
    void deniedHostGets403NamingTargetAndAllowList() throws IOException {
        String response = get("s1", EgressPolicy.parse("allowed.test,pypi.org"), "denied.test");
        assertThat(response).startsWith("HTTP/1.1 403 Forbidden")
                .contains("denied.test:" + httpServer.getLocalPort()).contains("allowed.test, pypi.org");
        assertThat(upstreamHeads).isEmpty();
        assertThat(proxy.counters("s1").denied()).isEqualTo(1);
    }

    @Test
    void hostileSpellingsOfLoopbackAreDenied() throws IOException {
        EgressPolicy policy = EgressPolicy.parse("allowed.test");
        for (String host : List.of("localhost", "127.0.0.1", "0.0.0.0", "[::1]", "[::ffff:127.0.0.1]",
                "2130706433", "0177.0.0.1", "0x7f.1", "127.1", "LOCALHOST", "localhost.", "allowed.test@evil")) {
            String response = exchange(open("s1", policy), "CONNECT " + host + ":" + echoServer.getLocalPort()
                    + " HTTP/1.1\r\n\r\n");
            assertThat(response).as(host).startsWith("HTTP/1.1 403");
        }
        assertThat(upstreamHeads).isEmpty();
    }

    @Test
    void malformedRequestGets400() throws IOException {
        assertThat(exchange(open("s1", EgressPolicy.denyAll()), "HELLO\r\n\r\n")).startsWith("HTTP/1.1 400");
        assertThat(exchange(open("s1", EgressPolicy.denyAll()), "GET /relative HTTP/1.1\r\n\r\n"))
                .startsWith("HTTP/1.1 400");
    }

    @Test
    void unreachableUpstreamGets502() throws IOException {
        int closedPort;
        try (ServerSocket tmp = new ServerSocket(0, 1, LOOPBACK)) {
            closedPort = tmp.getLocalPort();
        }
        assertThat(exchange(open("s1", EgressPolicy.parse("allowed.test")),
                "CONNECT allowed.test:" + closedPort + " HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 502");
    }

    @Test
    void policyChangeAppliesToTheNextConnection() throws IOException {
        AtomicReference<EgressPolicy> policy = new AtomicReference<>(EgressPolicy.denyAll());
        String request = "GET http://allowed.test:" + httpServer.getLocalPort() + "/ HTTP/1.1\r\n\r\n";
        assertThat(exchange(open("s1", policy::get), request)).startsWith("HTTP/1.1 403");
        policy.set(EgressPolicy.parse("allowed.test"));
        assertThat(exchange(open("s1", policy::get), request)).startsWith("HTTP/1.1 200");
    }

    @Test
    void fiftyParallelDownloads() throws Exception {
        EgressPolicy policy = EgressPolicy.parse("allowed.test");
        ExecutorService clients = Executors.newFixedThreadPool(50);
        try {
            List<Future<String>> results = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                results.add(clients.submit(() -> get("s1", policy, "allowed.test")));
            }
            for (Future<String> f : results) {
                assertThat(f.get(120, TimeUnit.SECONDS)).startsWith("HTTP/1.1 200").hasSizeGreaterThan(BODY.length);
            }
        } finally {
            clients.shutdownNow();
        }
        assertThat(proxy.counters("s1").allowed()).isEqualTo(50);
    }

    @Test
    void floodOnOneSessionIsHeldAtItsLimitWhileAnotherSessionStillDownloads() throws IOException {
        EgressPolicy policy = EgressPolicy.parse("allowed.test");
        List<Socket> held = new ArrayList<>();
        int refused = 0;
        try {
            for (int i = 0; i < 2000; i++) {
                Socket s = open("flood", policy); // never sends a head: holds its slot
                held.add(s);
                if (i >= 64) {
                    String r = new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
                    assertThat(r).startsWith("HTTP/1.1 429");
                    refused++;
                    s.close();
                }
            }
            assertThat(refused).isEqualTo(2000 - 64);
            assertThat(get("other", policy, "allowed.test")).startsWith("HTTP/1.1 200");
        } finally {
            for (Socket s : held) {
                s.close();
            }
        }
    }
}
