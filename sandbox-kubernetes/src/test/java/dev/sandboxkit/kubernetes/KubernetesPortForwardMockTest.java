package dev.sandboxkit.kubernetes;

import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.ComputeCapability;
import dev.sandboxkit.spi.PortConnection;
import dev.sandboxkit.spi.SandboxLabels;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.internal.WebSocketMessage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code connect} against a scripted port-forward websocket of the mock API server: the frames a kubelet would
 * send (the port on the data and error channels, then data on channel 0, then the close) and what the driver
 * makes of them. The mock decodes each frame the client sends as UTF-8 text and answers only an exact match, so
 * the client-to-pod direction is checked byte for byte too; both directions also run on the real engine in the
 * Docker tests.
 */
@EnableKubernetesMockClient(crud = true)
class KubernetesPortForwardMockTest {
    private static final AtomicInteger NAMESPACES = new AtomicInteger();
    static KubernetesMockServer server;
    static KubernetesClient client;

    private final String ns = "fwd-" + NAMESPACES.incrementAndGet();
    private KubernetesSandboxDriver driver;
    private String pod;

    @BeforeEach
    void startPod() {
        driver = KubernetesSandboxDriver.builder().client(client).namespace(ns)
                .readinessTimeout(Duration.ofSeconds(20)).build();
        FakeKubelet kubelet = FakeKubelet.always(client, ns, FakeKubelet.Mode.RUN);
        try {
            SandboxSpec spec = SandboxSpec.builder().image("busybox:1.36").build();
            String ws = driver.createWorkspace("fwd-session", spec);
            pod = driver.create(new CreateRequest("fwd-session", spec, ws,
                    Map.of(SandboxLabels.MANAGED, "true", SandboxLabels.SESSION, "fwd-session", SandboxLabels.OWNER, "o")));
        } finally {
            kubelet.close();
        }
    }

    @AfterEach
    void stop() {
        driver.close();
    }

    /** A port-forward frame: the channel byte, then the payload. */
    private static WebSocketMessage frame(int channel, byte[] payload) {
        byte[] b = new byte[payload.length + 1];
        b[0] = (byte) channel;
        System.arraycopy(payload, 0, b, 1, payload.length);
        return new WebSocketMessage(b);
    }

    /** The first frame of each channel: the port, little-endian, as the kubelet sends it. */
    private static WebSocketMessage portFrame(int channel, int port) {
        return frame(channel, new byte[] {(byte) (port & 0xff), (byte) (port >> 8)});
    }

    private static byte[] readToEnd(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        int n;
        while ((n = in.read(buf)) >= 0) {
            out.write(buf, 0, n);
        }
        return out.toByteArray();
    }

    @Test
    void declaresPortForward() {
        assertThat(driver.computeCapabilities()).contains(ComputeCapability.PORT_FORWARD);
    }

    @Test
    void bytesGoBothWaysThenTheStreamEndsWhenThePodSideCloses() throws Exception {
        // Many frames of 16 KiB, as a kubelet copies the stream (one huge frame would arrive in fragments).
        byte[] chunk = "x".repeat(16 * 1024).getBytes(StandardCharsets.US_ASCII);
        int chunks = 12;
        var session = server.expect().get()
                .withPath("/api/v1/namespaces/" + ns + "/pods/" + pod + "/portforward?ports=8080")
                .andUpgradeToWebSocket().open()
                .immediately().andEmit(portFrame(0, 8080))
                .immediately().andEmit(portFrame(1, 8080))
                .immediately().andEmit(frame(0, "HTTP/1.0 200 OK\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
        for (int i = 0; i < chunks; i++) {
            session = session.immediately().andEmit(frame(0, chunk));
        }
        // The mock matches what the client sends as text (channel byte first) and answers an exact match; anything
        // else makes it close the socket with 1002. While an expectation is pending it does not close by itself.
        session.expect(REQUEST_FRAME).andEmit(frame(0, new byte[] {'!'})).once().done().once();

        try (PortConnection c = driver.connect(pod, 8080)) {
            byte[] got = within(() -> c.input().readNBytes(19 + chunks * chunk.length));
            String text = new String(got, StandardCharsets.US_ASCII);
            assertThat(got.length).isEqualTo(19 + chunks * chunk.length);
            assertThat(text).startsWith("HTTP/1.0 200 OK\r\n\r\n");
            assertThat(text.substring(19)).isEqualTo("x".repeat(chunks * chunk.length));
            assertThat(server.getLastRequest().getPath()).endsWith("/pods/" + pod + "/portforward?ports=8080");

            write(c, REQUEST); // byte for byte, or the mock closes instead of answering
            assertThat(within(() -> c.input().readNBytes(1))).containsExactly('!');

            write(c, "bye"); // unexpected: the pod side closes, and the stream must end
            assertThat(within(() -> readToEnd(c.input()))).isEmpty();
        }
    }

    @Test
    void theAnswerStillArrivesAfterShutdownOutput() throws Exception {
        byte[] answer = "HTTP/1.0 204 No Content\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        server.expect().get()
                .withPath("/api/v1/namespaces/" + ns + "/pods/" + pod + "/portforward?ports=8081")
                .andUpgradeToWebSocket().open()
                .immediately().andEmit(portFrame(0, 8081))
                .immediately().andEmit(portFrame(1, 8081))
                .expect(REQUEST_FRAME).andEmit(frame(0, answer)).once()
                .done().once();

        try (PortConnection c = driver.connect(pod, 8081)) {
            write(c, REQUEST);
            c.shutdownOutput(); // no half-close in the protocol: it only stops sending
            assertThat(within(() -> c.input().readNBytes(answer.length))).isEqualTo(answer);
        }
    }

    private static final String REQUEST = "GET / HTTP/1.0\r\n\r\n";
    private static final String REQUEST_FRAME = "\u0000" + REQUEST;

    private static void write(PortConnection c, String text) throws IOException {
        c.output().write(text.getBytes(StandardCharsets.US_ASCII)); // one write: fabric8 sends it as one frame
        c.output().flush();
    }

    private interface Read {
        byte[] read() throws IOException;
    }

    /** A blocking read with a deadline, so that a lost frame fails the test instead of hanging it. */
    private static byte[] within(Read read) throws Exception {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return read.read();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }).get(30, TimeUnit.SECONDS);
    }

    @Test
    void anErrorOnTheErrorChannelEndsTheStream() throws Exception {
        server.expect().get().withPath("/api/v1/namespaces/" + ns + "/pods/" + pod + "/portforward?ports=9")
                .andUpgradeToWebSocket().open()
                .immediately().andEmit(portFrame(0, 9))
                .immediately().andEmit(portFrame(1, 9))
                .immediately().andEmit(frame(1, "connection refused".getBytes(StandardCharsets.US_ASCII)))
                .done().always();

        try (PortConnection c = driver.connect(pod, 9)) {
            byte[] got = CompletableFuture.supplyAsync(() -> {
                try {
                    return readToEnd(c.input());
                } catch (IOException e) {
                    return new byte[0]; // a broken stream is an end too
                }
            }).get(30, TimeUnit.SECONDS);
            assertThat(got).isEmpty();
        }
    }
}
