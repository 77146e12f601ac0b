package dev.sandboxkit.internal;

import dev.sandboxkit.ForwardOptions;
import dev.sandboxkit.PortForward;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.ComputeCapability;
import dev.sandboxkit.spi.PortConnection;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.testkit.ForwardingSandboxDriver;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The engine's side of port forwarding with a fake driver whose {@code connect} reaches an echo server on the
 * host: the token protocol (a refused connection never reaches the driver), activity for the idle TTL, closing
 * on reap, destroy and manager close, and the I/O executor. The real tunnel is tested on Docker.
 */
class PortForwardEngineTest {
    private static final Duration TTL = Duration.ofMinutes(30);
    private static final SandboxSpec SPEC = SandboxSpec.builder().image("img:1").build();

    private ManualClock clock;
    private ManualScheduler scheduler;
    private ServerSocket echo;
    private ExecutorService echoThreads;
    private final AtomicInteger connects = new AtomicInteger();
    private SandboxDriver driver;
    private SandboxManager manager;

    @BeforeEach
    void setUp() throws IOException {
        clock = new ManualClock();
        scheduler = new ManualScheduler(clock);
        echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        echoThreads = Executors.newCachedThreadPool();
        echoThreads.execute(this::serveEcho);
        driver = new ForwardingSandboxDriver(new FakeDriver(clock)) {
            @Override
            public Set<ComputeCapability> computeCapabilities() {
                Set<ComputeCapability> c = EnumSet.noneOf(ComputeCapability.class);
                c.addAll(super.computeCapabilities());
                c.add(ComputeCapability.PORT_FORWARD);
                return c;
            }

            @Override
            public PortConnection connect(String sandboxId, int port) {
                connects.incrementAndGet();
                try {
                    return new SocketPortConnection(new Socket(InetAddress.getLoopbackAddress(), echo.getLocalPort()));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };
    }

    @AfterEach
    void tearDown() throws IOException {
        if (manager != null) {
            manager.close();
        }
        echo.close();
        echoThreads.shutdownNow();
    }

    private SandboxManager manager(SandboxDriver d) {
        return SandboxManager.builder().driver(d).clock(clock).scheduler(scheduler).idleTimeout(TTL)
                .reaperInterval(Duration.ofSeconds(10)).instanceId("mgr-1").build();
    }

    /** Echoes every connection, and half-closes its answer when the client half-closes. */
    private void serveEcho() {
        while (!echo.isClosed()) {
            try {
                Socket s = echo.accept();
                echoThreads.execute(() -> {
                    try (s) {
                        s.getInputStream().transferTo(s.getOutputStream());
                        s.shutdownOutput();
                    } catch (IOException ignored) {
                        // the test cut it
                    }
                });
            } catch (IOException | java.util.concurrent.RejectedExecutionException closed) {
                return;
            }
        }
    }

    private static byte[] readToEnd(Socket s) throws IOException {
        s.setSoTimeout(10_000);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        try {
            int n;
            while ((n = s.getInputStream().read(buf)) >= 0) {
                out.write(buf, 0, n);
            }
        } catch (SocketException reset) {
            // a reset ends it too
        }
        return out.toByteArray();
    }

    private static String roundTrip(InetSocketAddress at, String prefix, String text) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(at, 5_000);
            s.getOutputStream().write((prefix + text).getBytes(StandardCharsets.UTF_8));
            s.shutdownOutput();
            return new String(readToEnd(s), StandardCharsets.UTF_8);
        }
    }

    /**
     * A closed forward lets nothing through: connecting is refused, and should the kernel complete a connect to the
     * freed port anyway (a self-connect, or another socket that took the port: seen in CI, not understood yet), the
     * connection never reaches the driver.
     */
    private void assertRefused(InetSocketAddress at) throws IOException {
        int before = connects.get();
        try (Socket s = new Socket()) {
            s.connect(at, 5_000);
            System.err.println("PortForwardEngineTest: a connect to the closed forward " + at + " was accepted: "
                    + s.getLocalSocketAddress() + " -> " + s.getRemoteSocketAddress());
            s.setSoTimeout(1_000);
            s.getOutputStream().write('x');
            try {
                s.getInputStream().read();
            } catch (IOException endedOrSilent) {
                // either is fine: what matters is below
            }
        } catch (ConnectException refused) {
            return;
        }
        assertThat(connects.get()).as("connections through a closed forward reach nothing").isEqualTo(before);
    }

    /** Until the engine has counted the cut connection out (its relay ends on an I/O thread). */
    private void advanceUntilReaped(Sandbox sandbox) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() - until < 0) {
            scheduler.advance(TTL.plusSeconds(20));
            if (sandbox.info().state() == SessionState.SUSPENDED) {
                return;
            }
            Thread.sleep(20);
        }
    }

    @Test
    void aDriverWithoutTheCapabilityIsAConfigurationError() {
        manager = manager(new FakeDriver(clock));
        Sandbox sandbox = manager.acquire("s1", SPEC);
        assertThatThrownBy(() -> sandbox.forward(8080)).isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("cannot forward ports");
    }

    @Test
    void portsAreValidated() {
        manager = manager(driver);
        Sandbox sandbox = manager.acquire("s1", SPEC);
        assertThatThrownBy(() -> sandbox.forward(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> sandbox.forward(65_536)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ForwardOptions.defaults().withLocalPort(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ForwardOptions.defaults().withTokenTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void bytesRoundTripWithHalfClose() throws Exception {
        manager = manager(driver);
        try (PortForward f = manager.acquire("s1", SPEC).forward(8080)) {
            assertThat(roundTrip(f.localAddress(), "", "hello")).isEqualTo("hello");
            String big = "y".repeat(1 << 20);
            assertThat(roundTrip(f.localAddress(), "", big)).isEqualTo(big);
            assertThat(connects).hasValue(2);
        }
    }

    @Test
    void aBusyLocalPortIsRetryableAndAForeignAddressAConfigurationError() throws Exception {
        manager = manager(driver);
        Sandbox sandbox = manager.acquire("s1", SPEC);
        try (PortForward f = sandbox.forward(8080)) {
            int taken = f.localAddress().getPort();
            assertThatThrownBy(() -> sandbox.forward(8080, ForwardOptions.defaults().withLocalPort(taken)))
                    .isInstanceOf(dev.sandboxkit.SandboxUnavailableException.class).hasMessageContaining("is in use")
                    .satisfies(e -> assertThat(((dev.sandboxkit.SandboxException) e).isRetryable()).isTrue());
        }
        InetAddress notOurs = InetAddress.getByName("192.0.2.1"); // TEST-NET-1: no host has it
        assertThatThrownBy(() -> sandbox.forward(8080, ForwardOptions.defaults().withBindAddress(notOurs)
                .exposeBeyondLoopback())).isInstanceOf(SandboxConfigurationException.class);
    }

    @Test
    void wrongTokensNeverReachTheDriver() throws Exception {
        manager = manager(driver);
        InetAddress any = InetAddress.getByName("0.0.0.0");
        Sandbox sandbox = manager.acquire("s1", SPEC);
        assertThatThrownBy(() -> sandbox.forward(8080, ForwardOptions.defaults().withBindAddress(any)))
                .isInstanceOf(SandboxConfigurationException.class);
        try (PortForward f = sandbox.forward(8080, ForwardOptions.defaults().withBindAddress(any)
                .exposeBeyondLoopback().withTokenTimeout(Duration.ofMillis(300)))) {
            String token = f.token().orElseThrow();
            InetSocketAddress at = new InetSocketAddress(InetAddress.getLoopbackAddress(), f.localAddress().getPort());
            assertThat(roundTrip(at, token.toUpperCase() + "\n", "x")).isEmpty();
            assertThat(roundTrip(at, token + "x\n", "x")).isEmpty();
            assertThat(roundTrip(at, "\n", "x")).isEmpty();
            try (Socket silent = new Socket()) {
                silent.connect(at, 5_000);
                assertThat(readToEnd(silent)).as("no token within the timeout").isEmpty();
            }
            assertThat(connects).as("connections that reached the driver").hasValue(0);

            assertThat(roundTrip(at, token + "\n", "through")).isEqualTo("through");
            assertThat(roundTrip(at, token + "\r\n", "again")).isEqualTo("again");
            assertThat(connects).hasValue(2);
        }
    }

    @Test
    void aLoopbackForwardNeedsNoToken() {
        manager = manager(driver);
        try (PortForward f = manager.acquire("s1", SPEC).forward(8080,
                ForwardOptions.defaults().withBindAddress(InetAddress.getLoopbackAddress()).exposeBeyondLoopback())) {
            assertThat(f.token()).isEmpty();
            assertThat(f.localAddress().getAddress().isLoopbackAddress()).isTrue();
        }
    }

    @Test
    void anOpenConnectionHoldsTheReapAnIdleForwardDoesNot() throws Exception {
        manager = manager(driver);
        Sandbox sandbox = manager.acquire("s1", SPEC);
        PortForward f = sandbox.forward(8080);
        try (Socket s = new Socket()) {
            s.connect(f.localAddress(), 5_000);
            s.getOutputStream().write("x".getBytes(StandardCharsets.US_ASCII));
            assertThat(s.getInputStream().read()).isEqualTo('x'); // relayed: the connection is counted now
            scheduler.advance(TTL.multipliedBy(3));
            assertThat(sandbox.info().state()).isEqualTo(SessionState.ACTIVE);
            assertThat(f.isOpen()).isTrue();
        }
        advanceUntilReaped(sandbox);
        assertThat(sandbox.info().state()).isEqualTo(SessionState.SUSPENDED);
        assertThat(f.isOpen()).isFalse();
        assertRefused(f.localAddress());
    }

    @Test
    void destroyAndCloseCloseForwardsAndCutConnections() throws Exception {
        manager = manager(driver);
        Sandbox one = manager.acquire("s1", SPEC);
        PortForward a = one.forward(8080);
        Socket open = new Socket();
        open.connect(a.localAddress(), 5_000);
        open.getOutputStream().write("x".getBytes(StandardCharsets.US_ASCII));
        assertThat(open.getInputStream().read()).isEqualTo('x');
        one.destroy();
        assertThat(a.isOpen()).isFalse();
        assertThat(readToEnd(open)).as("the open connection is cut").isEmpty();
        open.close();
        assertRefused(a.localAddress());

        PortForward b = manager.acquire("s2", SPEC).forward(8080);
        manager.close();
        assertThat(b.isOpen()).isFalse();
        assertRefused(b.localAddress());
        assertThatThrownBy(() -> manager.acquire("s3", SPEC)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void forwardsRunOnTheCallersExecutorWhichCloseLeavesRunning() throws Exception {
        AtomicInteger tasks = new AtomicInteger();
        ExecutorService mine = Executors.newCachedThreadPool();
        try {
            manager = SandboxManager.builder().driver(driver).clock(clock).scheduler(scheduler).idleTimeout(TTL)
                    .ioExecutor(r -> {
                        tasks.incrementAndGet();
                        mine.execute(r);
                    }).build();
            try (PortForward f = manager.acquire("s1", SPEC).forward(8080)) {
                assertThat(roundTrip(f.localAddress(), "", "mine")).isEqualTo("mine");
            }
            assertThat(tasks.get()).as("accept loop + a connection's two pumps").isGreaterThanOrEqualTo(3);
            manager.close();
            assertThat(mine.isShutdown()).isFalse();
        } finally {
            mine.shutdownNow();
        }
    }

    @Test
    void theDefaultPoolHasNamedDaemonThreadsThatCloseStops() throws Exception {
        manager = manager(driver);
        try (PortForward f = manager.acquire("s1", SPEC).forward(8080)) {
            assertThat(roundTrip(f.localAddress(), "", "pool")).isEqualTo("pool");
            assertThat(Thread.getAllStackTraces().keySet()).anyMatch(t -> t.getName().startsWith("sandboxkit-io-")
                    && t.isDaemon());
        }
        manager.close();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (ioThreads() > 0 && System.nanoTime() - until < 0) {
            Thread.sleep(20);
        }
        assertThat(ioThreads()).as("I/O threads left after close").isZero();
    }

    private static long ioThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("sandboxkit-io-") && t.isAlive()).count();
    }
}
