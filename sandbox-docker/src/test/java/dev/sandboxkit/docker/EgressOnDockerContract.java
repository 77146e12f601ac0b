package dev.sandboxkit.docker;

import dev.sandboxkit.EgressPolicy;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.EgressResolver;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Egress by allow-list on the real engine, what every runtime and workdir backend must show (the load and hostile
 * checks, which do not touch the workdir, are in {@link EgressLoadContract}): the sandbox on network {@code none} reaches the upstream test server on
 * 127.0.0.1 through the proxy endpoint inside it, by the names {@code allowed.test} and {@code denied.test} that the
 * manager's resolver maps to loopback. No packet leaves 127.0.0.0/8. Subclasses choose the runtime and the workdir
 * backend; idle time is a manual clock.
 */
abstract class EgressOnDockerContract {
    static final String IMAGE = System.getProperty("sandboxkit.test.image", "sandboxkit-test:latest");
    private static final Duration TTL = Duration.ofMinutes(10);
    private static final Duration REAPER = Duration.ofSeconds(10);
    static final long BIG = 100L * 1024 * 1024;
    /** Test names only; anything else does not resolve, so no lookup leaves the machine. */
    private static final EgressResolver LOOPBACK_NAMES = host -> {
        if (host.equals("allowed.test") || host.equals("denied.test") || host.equals("other.allowed.test")) {
            return List.of(InetAddress.getLoopbackAddress());
        }
        throw new UnknownHostException(host);
    };

    private static ServerSocket upstream;
    private static ExecutorService upstreamThreads;
    static int port;

    @TempDir
    Path root;
    private ManualClock clock;
    private ManualScheduler scheduler;
    SandboxManager manager;
    final List<SandboxEvent> events = new CopyOnWriteArrayList<>();

    /** The runtime the sandboxes run under; {@code null} for the engine's default (runc). */
    abstract @Nullable String runtime();

    /** Whether workdirs are named volumes rather than host directories. */
    abstract boolean volumes();

    /**
     * The upstream test server on 127.0.0.1: {@code /hello} answers {@code hello <Host header>}, {@code /big} streams
     * {@link #BIG} bytes. HTTP/1.0-style: one request per connection, closed after the answer.
     */
    @BeforeAll
    static void startUpstream() throws IOException {
        upstreamThreads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "egress-test-upstream");
            t.setDaemon(true);
            return t;
        });
        upstream = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
        port = upstream.getLocalPort();
        upstreamThreads.execute(() -> {
            while (!upstream.isClosed()) {
                try {
                    Socket s = upstream.accept();
                    upstreamThreads.execute(() -> answer(s));
                } catch (IOException closed) {
                    return;
                }
            }
        });
    }

    private static void answer(Socket socket) {
        try (socket) {
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(),
                    StandardCharsets.ISO_8859_1));
            String request = in.readLine();
            String host = "";
            for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
                if (line.regionMatches(true, 0, "Host:", 0, 5)) {
                    host = line.substring(5).strip();
                }
            }
            OutputStream out = new BufferedOutputStream(socket.getOutputStream(), 64 * 1024);
            if (request != null && request.contains(" /big ")) {
                out.write(("HTTP/1.1 200 OK\r\nContent-Length: " + BIG + "\r\nConnection: close\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                byte[] chunk = new byte[64 * 1024];
                Arrays.fill(chunk, (byte) 'x');
                for (long sent = 0; sent < BIG; sent += chunk.length) {
                    out.write(chunk);
                }
            } else {
                byte[] body = ("hello " + host + "\n").getBytes(StandardCharsets.UTF_8);
                out.write(("HTTP/1.1 200 OK\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                out.write(body);
            }
            out.flush();
        } catch (IOException clientWentAway) {
            // a test client that stopped reading
        }
    }

    @AfterAll
    static void stopUpstream() throws IOException {
        if (upstream != null) {
            upstream.close();
            upstreamThreads.shutdownNow();
        }
    }

    @BeforeEach
    void startManager() {
        DockerTestSupport.requireEngine();
        if (runtime() != null) {
            DockerTestSupport.requireRuntime(runtime());
        }
        clock = new ManualClock();
        scheduler = new ManualScheduler(clock);
        manager = builder(new SandboxConfig()).build();
    }

    /** A manager on the test engine, its clock and scheduler, resolving only the test names to loopback. */
    SandboxManager.Builder builder(SandboxConfig config) {
        SandboxManager.Builder b = SandboxManager.builder(config).driver("docker").workspaceRoot(root).clock(clock)
                .scheduler(scheduler).idleTimeout(TTL).reaperInterval(REAPER).egressResolver(LOOPBACK_NAMES)
                .listener(events::add);
        if (volumes()) {
            b.driverProperty("docker.workdirs", "volume");
        }
        return b;
    }

    @AfterEach
    void closeManager() {
        if (manager != null) {
            manager.close();
        }
    }

    SandboxSpec spec(String rules) {
        return SandboxSpec.builder().image(IMAGE).pullPolicy(PullPolicy.NEVER).runtime(runtime())
                .egress(EgressPolicy.parse(rules)).build();
    }

    static String url(String host, String path) {
        return "http://" + host + ":" + port + path;
    }

    static ExecResult sh(Sandbox sandbox, String script) {
        return sandbox.exec(ExecRequest.shell(script).withTimeout(Duration.ofMinutes(3)));
    }

    /** A raw proxy request from inside: the status line and body, as the sandbox's client sees them. */
    static String raw(Sandbox sandbox, String request) {
        String printf = request.replace("\r\n", "\\r\\n");
        return sh(sandbox, "printf '" + printf + "' | nc 127.0.0.1 3128").stdout();
    }

    @Test
    @DisplayName("HTTP and CONNECT to an allowed host go through; the variables point every tool at the endpoint")
    void allowedHostOverHttpAndConnect() {
        Sandbox sandbox = manager.acquire("egress-ok", spec("allowed.test"));

        ExecResult get = sh(sandbox, "wget -q -O - " + url("allowed.test", "/hello"));
        assertThat(get.exitCode()).as("wget: %s", get).isZero();
        assertThat(get.stdout()).isEqualTo("hello allowed.test:" + port + "\n");

        String tunnel = raw(sandbox, "CONNECT allowed.test:" + port + " HTTP/1.1\r\nHost: allowed.test:" + port
                + "\r\n\r\nGET /hello HTTP/1.0\r\nHost: tunnelled\r\n\r\n");
        assertThat(tunnel).startsWith("HTTP/1.1 200").contains("hello tunnelled");

        ExecResult env = sh(sandbox, "echo $HTTP_PROXY $https_proxy $NO_PROXY");
        assertThat(env.stdout()).contains("http://127.0.0.1:3128").contains("localhost");
        assertThat(manager.egressUsage("egress-ok").allowed()).isGreaterThanOrEqualTo(2);
        assertThat(manager.egressUsage("egress-ok").bytesIn()).isPositive();
    }

    @Test
    @DisplayName("a denied host gets a 403 naming it, an event and a count; a literal IP outside every CIDR too")
    void deniedHostAndLiteralIp() {
        Sandbox sandbox = manager.acquire("egress-deny", spec("allowed.test"));

        String denied = raw(sandbox, "GET " + url("denied.test", "/hello") + " HTTP/1.1\r\nHost: denied.test\r\n"
                + "Connection: close\r\n\r\n");
        assertThat(denied).startsWith("HTTP/1.1 403").contains("denied.test");
        ExecResult wget = sh(sandbox, "wget -q -O - " + url("127.0.0.1", "/hello"));
        assertThat(wget.exitCode()).isNotZero();
        assertThat(wget.stdout() + wget.stderr()).contains("403");

        assertThat(events).filteredOn(e -> e instanceof SandboxEvent.EgressDenied).map(e -> ((SandboxEvent.EgressDenied) e).host())
                .contains("denied.test", "127.0.0.1");
        assertThat(manager.egressUsage("egress-deny").denied()).isGreaterThanOrEqualTo(2);
        assertThat(manager.stats().egressDenied()).isGreaterThanOrEqualTo(2);
    }

    @Test
    @DisplayName("the policy survives an idle reap and resume; an update applies to the next connection")
    void policySurvivesReapAndUpdates() {
        Sandbox sandbox = manager.acquire("egress-reap", spec("allowed.test"));
        manager.updateEgress("egress-reap", EgressPolicy.parse("allowed.test, denied.test"));
        assertThat(sh(sandbox, "wget -q -O - " + url("denied.test", "/hello")).stdout())
                .as("allowed by the update, on the live sandbox").startsWith("hello denied.test");

        String first = manager.session("egress-reap").orElseThrow().sandboxId();
        advanceUntilReaped("egress-reap");
        ExecResult resumed = sh(sandbox, "wget -q -O - " + url("denied.test", "/hello"));
        assertThat(manager.session("egress-reap").orElseThrow().sandboxId()).isNotEqualTo(first);
        assertThat(resumed.stdout()).as("the updated policy after resume: %s", resumed).startsWith("hello denied.test");

        manager.updateEgress("egress-reap", EgressPolicy.parse("allowed.test"));
        ExecResult now = sh(sandbox, "wget -q -O - " + url("denied.test", "/hello"));
        assertThat(now.exitCode()).isNotZero();
        assertThat(now.stdout() + now.stderr()).contains("403");
        assertThat(sh(sandbox, "wget -q -O - " + url("allowed.test", "/hello")).stdout()).startsWith("hello");
    }

    @Test
    @DisplayName("a session without egress gets it on the live sandbox by an update")
    void updateTurnsEgressOn() {
        SandboxSpec plain = SandboxSpec.builder().image(IMAGE).pullPolicy(PullPolicy.NEVER).runtime(runtime()).build();
        Sandbox sandbox = manager.acquire("egress-late", plain);
        assertThat(sh(sandbox, "echo \"[$HTTP_PROXY]\"").stdout()).isEqualTo("[]\n");
        manager.updateEgress("egress-late", EgressPolicy.parse("allowed.test"));
        assertThat(sh(sandbox, "wget -q -O - " + url("allowed.test", "/hello")).stdout()).startsWith("hello");
    }

    private void advanceUntilReaped(String sessionId) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (manager.session(sessionId).orElseThrow().state() != SessionState.SUSPENDED) {
            assertThat(System.nanoTime() - until).as("reaped in time").isNegative();
            scheduler.advance(TTL.plus(REAPER).plus(REAPER));
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }
}
