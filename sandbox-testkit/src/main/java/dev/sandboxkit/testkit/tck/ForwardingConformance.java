package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.ComputeCapability;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link ComputeDriverTck}'s port forwarding group, {@link Sandbox#forward(int)}: needs
 * {@link ComputeCapability#PORT_FORWARD} and a real shell with BusyBox's {@code httpd} and {@code nc} in the image (the
 * services the tests start inside the sandbox).
 */
abstract class ForwardingConformance extends KitSupport {
    private static final int PORT = 8080;
    private static final String INDEX = "forwarded from the sandbox\n";

    ForwardingConformance(DriverKit kit) {
        super(kit);
    }

    /** Starts httpd on {@link #PORT} serving /workspace/www with an index and a 256 KiB file. */
    private Sandbox withHttpd() {
        requireCapability(ComputeCapability.PORT_FORWARD, ComputeCapability.REAL_PROCESSES);
        Sandbox sandbox = acquire();
        assertSucceeded(sh(sandbox, "mkdir -p /workspace/www && printf '" + INDEX.replace("\n", "\\n")
                + "' > /workspace/www/index.html && dd if=/dev/zero bs=1024 count=256 2>/dev/null"
                + " | tr '\\0' 'x' > /workspace/www/big.txt"));
        assertSucceeded(sh(sandbox, "setsid httpd -p " + PORT + " -h /workspace/www </dev/null >/dev/null 2>&1 &"));
        ExecResult up = sandbox.exec(ExecRequest.shell("i=0; while [ $i -lt 200 ]; do nc 127.0.0.1 " + PORT
                + " </dev/null >/dev/null 2>&1 && exit 0; i=$((i+1)); sleep 0.05; done; exit 1")
                .withTimeout(Duration.ofSeconds(30)));
        assertThat(up.exitCode()).as("httpd listening inside the sandbox").isZero();
        return sandbox;
    }

    private String get(java.net.InetSocketAddress at, String path, boolean halfClose) throws IOException {
        try (java.net.Socket s = new java.net.Socket()) {
            s.connect(at, 10_000);
            s.setSoTimeout(60_000);
            s.getOutputStream().write(("GET " + path + " HTTP/1.0\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            if (halfClose) {
                s.shutdownOutput();
            }
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    private static String body(String response) {
        int at = response.indexOf("\r\n\r\n");
        assertThat(at).as("an HTTP answer: %s", response).isPositive();
        assertThat(response).startsWith("HTTP/1.").contains(" 200 ");
        return response.substring(at + 4);
    }

    private void assertRefused(java.net.InetSocketAddress at) {
        assertThatThrownBy(() -> {
            try (java.net.Socket s = new java.net.Socket()) {
                s.connect(at, 5_000);
            }
        }).isInstanceOf(java.net.ConnectException.class);
    }

    /** Past the TTL until reaped: a relay the client just ended stops counting as activity a moment later. */
    private void advanceUntilReaped(Sandbox sandbox) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        do {
            scheduler.advance(TTL.plus(REAPER_INTERVAL));
            if (sandbox.info().state() == SessionState.SUSPENDED) {
                return;
            }
            sleep(50);
        } while (System.nanoTime() - until < 0);
    }

    @Test
    @DisplayName("a service inside answers through forward(port) on 127.0.0.1, with and without half-close")
    void answersThroughForward() throws IOException {
        Sandbox sandbox = withHttpd();
        try (dev.sandboxkit.PortForward forward = sandbox.forward(PORT)) {
            assertThat(forward.localAddress().getAddress().isLoopbackAddress()).isTrue();
            assertThat(forward.containerPort()).isEqualTo(PORT);
            assertThat(forward.sessionId()).isEqualTo(sandbox.sessionId());
            assertThat(forward.token()).isEmpty();
            assertThat(body(get(forward.localAddress(), "/", false))).isEqualTo(INDEX);
            assertThat(body(get(forward.localAddress(), "/", true))).isEqualTo(INDEX);
            assertThat(body(get(forward.localAddress(), "/big.txt", true))).isEqualTo("x".repeat(256 * 1024));
        }
    }

    @Test
    @DisplayName("concurrent connections each get their whole answer")
    void concurrentConnections() throws Exception {
        Sandbox sandbox = withHttpd();
        try (dev.sandboxkit.PortForward forward = sandbox.forward(PORT)) {
            List<String> bodies = runConcurrently(8, i -> {
                try {
                    return body(get(forward.localAddress(), i % 2 == 0 ? "/big.txt" : "/", i % 3 == 0));
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            for (int i = 0; i < bodies.size(); i++) {
                assertThat(bodies.get(i)).as("body %d", i).isEqualTo(i % 2 == 0 ? "x".repeat(256 * 1024) : INDEX);
            }
        }
    }

    /** Opens a forward, uses it once, ends the sandbox as told, and checks the forward is gone with it. */
    private void assertEndedBy(java.util.function.Consumer<Sandbox> end) throws IOException {
        Sandbox sandbox = withHttpd();
        dev.sandboxkit.PortForward forward = sandbox.forward(PORT);
        assertThat(body(get(forward.localAddress(), "/", false))).isEqualTo(INDEX);

        end.accept(sandbox);

        assertThat(forward.isOpen()).isFalse();
        assertRefused(forward.localAddress());
    }

    @Test
    @DisplayName("the idle reap closes the forward (connecting is refused); an idle forward does not hold the TTL")
    void reapClosesTheForward() throws IOException {
        assertEndedBy(sandbox -> {
            advanceUntilReaped(sandbox);
            assertThat(sandbox.info().state()).isEqualTo(SessionState.SUSPENDED);
        });
    }

    @Test
    @DisplayName("destroy closes the forward: connecting is refused")
    void destroyClosesTheForward() throws IOException {
        assertEndedBy(Sandbox::destroy);
    }

    @Test
    @DisplayName("a connection to a port where nothing listens ends instead of hanging")
    void nothingListening() throws IOException {
        requireCapability(ComputeCapability.PORT_FORWARD, ComputeCapability.REAL_PROCESSES);
        Sandbox sandbox = acquire();
        try (dev.sandboxkit.PortForward forward = sandbox.forward(9)) {
            try (java.net.Socket s = new java.net.Socket()) {
                s.connect(forward.localAddress(), 10_000);
                s.setSoTimeout(30_000); // a hang fails here
                s.getOutputStream().write("GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                byte[] got;
                try {
                    got = s.getInputStream().readAllBytes();
                } catch (java.net.SocketException reset) {
                    got = new byte[0];
                }
                assertThat(got).isEmpty();
            }
            assertThat(forward.isOpen()).isTrue();
        }
    }

    @Test
    @DisplayName("beyond loopback needs the opt-in, then each connection must present the token first")
    void beyondLoopbackNeedsToken() throws IOException {
        Sandbox sandbox = withHttpd();
        java.net.InetAddress any = java.net.InetAddress.getByName("0.0.0.0");
        assertThatThrownBy(() -> sandbox.forward(PORT, dev.sandboxkit.ForwardOptions.defaults().withBindAddress(any)))
                .isInstanceOf(dev.sandboxkit.SandboxConfigurationException.class);
        try (dev.sandboxkit.PortForward forward = sandbox.forward(PORT,
                dev.sandboxkit.ForwardOptions.defaults().withBindAddress(any).exposeBeyondLoopback())) {
            String token = forward.token().orElseThrow();
            java.net.InetSocketAddress local = new java.net.InetSocketAddress("127.0.0.1",
                    forward.localAddress().getPort());
            try (java.net.Socket s = new java.net.Socket()) {
                s.connect(local, 10_000);
                s.setSoTimeout(30_000);
                s.getOutputStream().write(("not-the-token\nGET / HTTP/1.0\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                byte[] got;
                try {
                    got = s.getInputStream().readAllBytes();
                } catch (java.net.SocketException reset) {
                    got = new byte[0];
                }
                assertThat(got).as("answer without the token").isEmpty();
            }
            try (java.net.Socket s = new java.net.Socket()) {
                s.connect(local, 10_000);
                s.setSoTimeout(30_000);
                s.getOutputStream().write((token + "\nGET / HTTP/1.0\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                assertThat(body(new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1)))
                        .isEqualTo(INDEX);
            }
        }
    }
}
