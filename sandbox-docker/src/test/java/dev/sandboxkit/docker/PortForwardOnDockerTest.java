package dev.sandboxkit.docker;

import com.github.dockerjava.api.DockerClient;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ForwardOptions;
import dev.sandboxkit.PortForward;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Port forwarding on the real engine, with the sandbox on network {@code none}: BusyBox {@code httpd} inside
 * answers through {@link Sandbox#forward(int)} from the host; the forward closes on reap, destroy and manager
 * close; a non-loopback bind needs the opt-in and then a token. Time for the idle TTL is a manual clock.
 */
@Tag("slow")
@DisplayName("Port forwarding on the real Docker engine")
class PortForwardOnDockerTest {
    private static final String IMAGE = System.getProperty("sandboxkit.test.image", "sandboxkit-test:latest");
    private static final SandboxSpec SPEC = SandboxSpec.builder().image(IMAGE).pullPolicy(PullPolicy.NEVER).build();
    private static final Duration TTL = Duration.ofMinutes(10);
    private static final Duration REAPER = Duration.ofSeconds(10);
    private static final int HTTP_PORT = 8080;
    private static DockerClient docker;

    @TempDir
    Path root;
    private ManualClock clock;
    private ManualScheduler scheduler;
    private SandboxManager manager;

    @BeforeAll
    static void engine() {
        docker = ManagerOnDockerTest.EngineCheck.requireEngine();
    }

    @AfterAll
    static void closeEngine() throws Exception {
        if (docker != null) {
            docker.close();
        }
    }

    @BeforeEach
    void start() {
        clock = new ManualClock();
        scheduler = new ManualScheduler(clock);
        manager = SandboxManager.builder().driver("docker").workspaceRoot(root).clock(clock).scheduler(scheduler)
                .idleTimeout(TTL).reaperInterval(REAPER).build();
    }

    @AfterEach
    void stop() {
        manager.close();
    }

    /** Writes the site into the workdir and starts httpd in the background (it daemonizes without -f). */
    private static void startHttpd(Sandbox sandbox, byte[] big) {
        sandbox.files().write("www/index.html", "hello from the sandbox\n".getBytes(StandardCharsets.UTF_8));
        sandbox.files().write("www/big.bin", big);
        ExecResult r = sandbox.exec(ExecRequest.shell("setsid httpd -p " + HTTP_PORT
                + " -h /workspace/www </dev/null >/dev/null 2>&1 &"));
        assertThat(r.isSuccess()).as("httpd started: %s", r).isTrue();
        awaitListening(sandbox, HTTP_PORT);
    }

    /** Until something accepts on the port inside (the start above returns before httpd binds). */
    private static void awaitListening(Sandbox sandbox, int port) {
        ExecResult r = sandbox.exec(ExecRequest.shell("i=0; while [ $i -lt 100 ]; do nc 127.0.0.1 " + port
                + " </dev/null >/dev/null 2>&1 && exit 0; i=$((i+1)); sleep 0.05; done; exit 1")
                .withTimeout(Duration.ofSeconds(30)));
        assertThat(r.exitCode()).as("port %d listening inside", port).isZero();
    }

    private static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        ThreadLocalRandom.current().nextBytes(b);
        return b;
    }

    /** An HTTP/1.0 GET over a raw socket (the module reads no HTTP client): status code and body. */
    private record Response(int status, byte[] body) {
    }

    private static Response get(PortForward forward, String path) {
        byte[] whole = rawGet(forward.localAddress(), path);
        int split = indexOf(whole, "\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        assertThat(split).as("an HTTP head in %s", new String(whole, StandardCharsets.ISO_8859_1)).isPositive();
        String head = new String(whole, 0, split, StandardCharsets.ISO_8859_1);
        int status = Integer.parseInt(head.split(" ", 3)[1]);
        return new Response(status, Arrays.copyOfRange(whole, split + 4, whole.length));
    }

    private static int indexOf(byte[] data, byte[] part) {
        outer:
        for (int i = 0; i + part.length <= data.length; i++) {
            for (int j = 0; j < part.length; j++) {
                if (data[i + j] != part[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static void assertRefused(InetSocketAddress address) {
        assertThatThrownBy(() -> {
            try (Socket s = new Socket()) {
                s.connect(address, 5_000);
                // A freed loopback port can be picked as the client's own source port, and TCP then connects the
                // socket to itself (seen repeatedly in CI). The kernel never picks a port a listener holds, so
                // this means nothing listens: refused.
                if (s.getLocalPort() == address.getPort() && s.getLocalAddress().equals(s.getInetAddress())) {
                    throw new ConnectException("connected to itself: nothing listens on " + address);
                }
            }
        }).isInstanceOf(ConnectException.class);
    }

    @Test
    @DisplayName("httpd in a network-none sandbox answers GET / through forward(port); the sandbox stays on none")
    void httpGetThroughForward() throws Exception {
        Sandbox sandbox = manager.acquire("fwd-get", SPEC);
        startHttpd(sandbox, randomBytes(10));
        try (PortForward forward = sandbox.forward(HTTP_PORT)) {
            assertThat(forward.localAddress().getAddress().getHostAddress()).isEqualTo("127.0.0.1");
            assertThat(forward.localAddress().getPort()).isPositive();
            assertThat(forward.containerPort()).isEqualTo(HTTP_PORT);
            assertThat(forward.token()).isEmpty();
            assertThat(forward.isOpen()).isTrue();

            Response r = get(forward, "/");
            assertThat(r.status()).isEqualTo(200);
            assertThat(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo("hello from the sandbox\n");
        }
        String id = sandbox.info().sandboxId();
        assertThat(docker.inspectContainerCmd(id).exec().getHostConfig().getNetworkMode()).isEqualTo("none");
        assertThat(docker.inspectContainerCmd(id).exec().getNetworkSettings().getNetworks()).containsOnlyKeys("none");
        // Inside: nothing but loopback.
        ExecResult ifaces = sandbox.exec(ExecRequest.shell("ls /sys/class/net"));
        assertThat(ifaces.stdout().trim()).isEqualTo("lo");
    }

    @Test
    @DisplayName("20 concurrent connections each get their full, correct body (some of 300 KB)")
    void twentyConcurrentConnections() throws Exception {
        Sandbox sandbox = manager.acquire("fwd-many", SPEC);
        byte[] big = randomBytes(300 * 1024);
        startHttpd(sandbox, big);
        byte[] small = "hello from the sandbox\n".getBytes(StandardCharsets.UTF_8);
        // Each connection on its own thread, all at once; even ones fetch the big file.
        ExecutorService clients = Executors.newFixedThreadPool(20);
        try (PortForward forward = sandbox.forward(HTTP_PORT)) {
            CyclicBarrier together = new CyclicBarrier(20);
            List<Future<Response>> responses = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                String path = i % 2 == 0 ? "/big.bin" : "/";
                responses.add(clients.submit(() -> {
                    together.await(30, TimeUnit.SECONDS);
                    return get(forward, path);
                }));
            }
            for (int i = 0; i < 20; i++) {
                Response r = responses.get(i).get(120, TimeUnit.SECONDS);
                assertThat(r.status()).as("response %d", i).isEqualTo(200);
                byte[] want = i % 2 == 0 ? big : small;
                assertThat(r.body().length).as("length of response %d", i).isEqualTo(want.length);
                assertThat(Arrays.equals(r.body(), want)).as("body of response %d", i).isTrue();
            }
        } finally {
            clients.shutdownNow();
        }
    }

    private static byte[] rawGet(InetSocketAddress address, String path) {
        try (Socket s = new Socket()) {
            s.connect(address, 10_000);
            s.setSoTimeout(60_000);
            s.getOutputStream().write(("GET " + path + " HTTP/1.0\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            if (ThreadLocalRandom.current().nextBoolean()) {
                s.shutdownOutput(); // half-close: the answer must still come back whole
            }
            return s.getInputStream().readAllBytes();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    @DisplayName("after the idle reap the forward is closed and connecting is refused; an idle forward does not hold the TTL")
    void closedOnReap() {
        assertEndedBy("fwd-reap", sandbox -> {
            advanceUntilReaped("fwd-reap");
            assertThat(manager.session("fwd-reap").orElseThrow().state()).isEqualTo(SessionState.SUSPENDED);
        });
    }

    @Test
    @DisplayName("an open connection holds off the idle reap like a running exec; once closed, the TTL runs again")
    void openConnectionIsActivity() throws Exception {
        Sandbox sandbox = manager.acquire("fwd-active", SPEC);
        // A listener that keeps its connection open until the client closes (its stdin never ends: nc would
        // half-close the connection at the end of its stdin, and the relay ends when the service closes its side).
        sandbox.exec(ExecRequest.shell("setsid sh -c 'sleep 600 | nc -l -p 9100' </dev/null >/dev/null 2>&1 &"));
        awaitExec(sandbox, listening(9100)); // bound (nc -l serves one connection)
        try (PortForward forward = sandbox.forward(9100); Socket s = new Socket()) {
            s.connect(forward.localAddress(), 10_000);
            s.getOutputStream().write("ping\n".getBytes(StandardCharsets.US_ASCII));
            awaitExec(sandbox, "ps -o args | grep -q '^nc 127.0.0.1 9100'");

            scheduler.advance(TTL.plus(REAPER).plus(REAPER));
            assertThat(manager.session("fwd-active").orElseThrow().state()).isEqualTo(SessionState.ACTIVE);
            assertThat(forward.isOpen()).isTrue();

            s.close();
            awaitExec(sandbox, "! ps -o args | grep -q '^nc 127.0.0.1 9100'");
            advanceUntilReaped("fwd-active");
            assertThat(manager.session("fwd-active").orElseThrow().state()).isEqualTo(SessionState.SUSPENDED);
            assertThat(forward.isOpen()).isFalse();
        }
    }

    /**
     * Moves time past the TTL until the session is reaped: the relay of a connection the client just closed
     * ends on the I/O threads a moment later, and only then stops counting as activity.
     */
    private void advanceUntilReaped(String sessionId) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            scheduler.advance(TTL.plus(REAPER).plus(REAPER));
            if (manager.session(sessionId).orElseThrow().state() == SessionState.SUSPENDED
                    || System.nanoTime() - until > 0) {
                return;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    /** A shell test that a socket listens on the port (IPv4 or dual-stack), without connecting to it. */
    private static String listening(int port) {
        return String.format("cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -q ':%04X 0*:0000 0A'", port);
    }

    private static void awaitExec(Sandbox sandbox, String condition) {
        ExecResult r = sandbox.exec(ExecRequest.shell("i=0; while [ $i -lt 200 ]; do if " + condition
                + "; then exit 0; fi; i=$((i+1)); sleep 0.05; done; exit 1").withTimeout(Duration.ofSeconds(30)));
        assertThat(r.exitCode()).as("condition %s", condition).isZero();
    }

    @Test
    @DisplayName("a relay never outlives its connection: reset by the client or cut by close(), even when the service holds on")
    void relayEndsWithItsConnection() throws Exception {
        Sandbox sandbox = manager.acquire("fwd-relay", SPEC);
        // A service that ignores its input and never closes: nc stays in the relay until it is killed.
        sandbox.exec(ExecRequest.shell("setsid nc -ll -p 9300 -e sleep 600 </dev/null >/dev/null 2>&1 &"));
        awaitExec(sandbox, listening(9300));
        String relay = "ps -o args | grep -q '^nc 127.0.0.1 9300'";
        try (PortForward forward = sandbox.forward(9300)) {
            Socket s = new Socket();
            s.connect(forward.localAddress(), 10_000);
            s.getOutputStream().write("hello\n".getBytes(StandardCharsets.US_ASCII));
            awaitExec(sandbox, relay);
            s.setSoLinger(true, 0);
            s.close(); // a reset: the client is gone (a plain close is a half-close, relayed as such)
            awaitExec(sandbox, "! " + relay);

            Socket t = new Socket();
            t.connect(forward.localAddress(), 10_000);
            t.getOutputStream().write("hello\n".getBytes(StandardCharsets.US_ASCII));
            awaitExec(sandbox, relay);
            forward.close();
            awaitExec(sandbox, "! " + relay);
            t.setSoTimeout(15_000);
            assertThat(readToEnd(t.getInputStream())).isEmpty();
            t.close();
            assertRefused(forward.localAddress());
        }
    }

    /** Uses a forward once, ends the sandbox (or manager) as told, and checks the forward went with it. */
    private void assertEndedBy(String sessionId, java.util.function.Consumer<Sandbox> end) {
        Sandbox sandbox = manager.acquire(sessionId, SPEC);
        startHttpd(sandbox, randomBytes(10));
        PortForward forward = sandbox.forward(HTTP_PORT);
        assertThat(get(forward, "/").status()).isEqualTo(200);
        end.accept(sandbox);
        assertThat(forward.isOpen()).isFalse();
        assertRefused(forward.localAddress());
    }

    @Test
    @DisplayName("destroy closes the forward: connecting is refused")
    void closedOnDestroy() {
        assertEndedBy("fwd-destroy", Sandbox::destroy);
    }

    @Test
    @DisplayName("manager close closes the forward: connecting is refused")
    void closedOnManagerClose() {
        assertEndedBy("fwd-close", sandbox -> manager.close());
    }

    @Test
    @DisplayName("a non-loopback bind needs the opt-in; then a wrong token never reaches the sandbox and the right one does")
    void beyondLoopbackNeedsOptInAndToken() throws Exception {
        Sandbox sandbox = manager.acquire("fwd-token", SPEC);
        InetAddress any = InetAddress.getByName("0.0.0.0");
        assertThatThrownBy(() -> sandbox.forward(9200, ForwardOptions.defaults().withBindAddress(any)))
                .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("exposeBeyondLoopback");

        // One connection's worth of listener that writes what it receives into the workdir.
        sandbox.exec(ExecRequest.shell(
                "setsid sh -c 'sleep 600 | nc -l -p 9200 > /workspace/got.txt' </dev/null >/dev/null 2>&1 &"));
        awaitExec(sandbox, listening(9200));
        try (PortForward forward = sandbox.forward(9200,
                ForwardOptions.defaults().withBindAddress(any).exposeBeyondLoopback())) {
            String token = forward.token().orElseThrow();
            assertThat(token).hasSize(43).matches("[A-Za-z0-9_-]+");
            InetSocketAddress local = new InetSocketAddress("127.0.0.1", forward.localAddress().getPort());

            for (String wrong : List.of(token.substring(1) + "x", "", token + "x", "GET / HTTP/1.0")) {
                try (Socket s = new Socket()) {
                    s.connect(local, 10_000);
                    s.setSoTimeout(10_000);
                    s.getOutputStream().write((wrong + "\nsecret payload\n").getBytes(StandardCharsets.US_ASCII));
                    assertThat(readToEnd(s.getInputStream())).as("answer to a wrong token").isEmpty();
                }
            }
            // Still listening (no connection reached it) and nothing written.
            ExecResult state = sandbox.exec(ExecRequest.shell(
                    listening(9200) + " && wc -c < /workspace/got.txt"));
            assertThat(state.stdout().trim()).isEqualTo("0");

            try (Socket s = new Socket()) {
                s.connect(local, 10_000);
                s.setSoTimeout(10_000);
                OutputStream out = s.getOutputStream();
                out.write((token + "\r\nright payload\n").getBytes(StandardCharsets.US_ASCII));
                s.shutdownOutput();
                readToEnd(s.getInputStream());
            }
            awaitExec(sandbox, "[ \"$(cat /workspace/got.txt)\" = 'right payload' ]");
        }
        assertThat(Files.readString(Path.of(sandbox.info().workspace(), "got.txt"))).isEqualTo("right payload\n");
    }

    @Test
    @DisplayName("once close() returned the port refuses at once, and the same port can be forwarded again right away"
            + " (20 rounds)")
    void closeFreesThePortBeforeReturning() throws Exception {
        Sandbox sandbox = manager.acquire("fwd-reuse", SPEC);
        startHttpd(sandbox, randomBytes(10));
        int port;
        try (PortForward first = sandbox.forward(HTTP_PORT)) {
            port = first.localAddress().getPort();
        }
        for (int round = 0; round < 20; round++) {
            // The failure: a re-forward right after close() hit "Address already in use".
            PortForward forward = sandbox.forward(HTTP_PORT, ForwardOptions.defaults().withLocalPort(port));
            assertThat(forward.localAddress().getPort()).as("round %d", round).isEqualTo(port);
            if (round % 2 == 0) {
                assertThat(get(forward, "/").status()).as("round %d", round).isEqualTo(200);
            }
            forward.close();
            assertThat(forward.isOpen()).isFalse();
            // Straight after close(): nothing may accept any more (the accept loop used to for a few ms).
            assertRefused(forward.localAddress());
        }
    }

    @Test
    @DisplayName("a local port held by another listener is a retryable error that says it is in use")
    void portInUseIsRetryable() throws Exception {
        Sandbox sandbox = manager.acquire("fwd-busy", SPEC);
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            int port = taken.getLocalPort();
            assertThatThrownBy(() -> sandbox.forward(HTTP_PORT, ForwardOptions.defaults().withLocalPort(port)))
                    .isInstanceOf(dev.sandboxkit.SandboxUnavailableException.class)
                    .hasMessageContaining("127.0.0.1:" + port + " is in use")
                    .satisfies(e -> assertThat(((dev.sandboxkit.SandboxException) e).isRetryable()).isTrue());
        }
        // Freed: the same port works now.
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            int port = probe.getLocalPort();
            probe.close();
            try (PortForward forward = sandbox.forward(HTTP_PORT, ForwardOptions.defaults().withLocalPort(port))) {
                assertThat(forward.localAddress().getPort()).isEqualTo(port);
            }
        }
    }

    @Test
    @DisplayName("a connection to a port where nothing listens is closed (no hang), and the forward stays open")
    void nothingListening() throws Exception {
        Sandbox sandbox = manager.acquire("fwd-none", SPEC);
        try (PortForward forward = sandbox.forward(9999); Socket s = new Socket()) {
            s.connect(forward.localAddress(), 10_000);
            s.setSoTimeout(15_000); // a hang fails here instead of blocking the build
            s.getOutputStream().write("GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertThat(readToEnd(s.getInputStream())).isEmpty();
            assertThat(forward.isOpen()).isTrue();
        }
    }

    private static byte[] readToEnd(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        int n;
        try {
            while ((n = in.read(buf)) >= 0) {
                out.write(buf, 0, n);
            }
        } catch (java.net.SocketException reset) {
            // a reset is an end too
        }
        return out.toByteArray();
    }
}
