package dev.sandboxkit.kubernetes;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ExecResult.Termination;
import dev.sandboxkit.ExecStream;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnsupportedException;
import dev.sandboxkit.TerminalSize;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.SandboxLabels;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.ErrorStreamMessage;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.server.mock.OutputStreamMessage;
import io.fabric8.kubernetes.client.server.mock.StatusMessage;
import io.fabric8.kubernetes.client.server.mock.StatusStreamMessage;
import io.fabric8.kubernetes.client.utils.URLUtils;
import io.fabric8.mockwebserver.http.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The exec path against scripted websockets of the mock API server (expectations alongside CRUD mode).
 * The mock runs no process: each test scripts the frames a kubelet would send, and checks what the
 * driver sent (URL, stdin bytes) and how it turns the frames into an {@link ExecResult}. Whether the
 * wrapper script really behaves is tested separately, under real shells, in {@link ExecScriptsShellTest}.
 */
@EnableKubernetesMockClient(crud = true)
class KubernetesExecMockTest {
    private static final AtomicInteger NAMESPACES = new AtomicInteger();
    static KubernetesMockServer server;
    static KubernetesClient client;

    private final String ns = "exec-" + NAMESPACES.incrementAndGet();
    private final AtomicInteger ids = new AtomicInteger();
    private KubernetesSandboxDriver driver;
    private FakeKubelet kubelet;
    private String pod;

    @BeforeEach
    void startPod() {
        driver = KubernetesSandboxDriver.builder().client(client).namespace(ns)
                .readinessTimeout(Duration.ofSeconds(20)).execIds(() -> "id" + ids.incrementAndGet()).build();
        kubelet = FakeKubelet.always(client, ns, FakeKubelet.Mode.RUN);
        SandboxSpec spec = SandboxSpec.builder().image("busybox:1.36").build();
        String ws = driver.createWorkspace("exec-session", spec);
        pod = driver.create(new CreateRequest("exec-session", spec, ws,
                Map.of(SandboxLabels.MANAGED, "true", SandboxLabels.SESSION, "exec-session", SandboxLabels.OWNER, "o")));
        kubelet.close(); // the pod stays Running; no more polling requests
    }

    @AfterEach
    void stop() {
        kubelet.close();
        driver.close();
    }

    /** The exec URL fabric8 builds for the wrapped command, as the API server receives it. */
    private String execPath(String execId, ExecRequest request, boolean stdin) {
        List<String> argv = ExecScripts.wrap(request.effectiveWorkingDir(), execId, request.env().size(),
                request.stdin() == null ? -1 : request.stdin().length, request.command());
        return path(argv, stdin);
    }

    private String killPath(String execId) {
        return path(List.of(ExecScripts.kill(execId)), false);
    }

    private String path(List<String> argv, boolean stdin) {
        URLUtils.URLBuilder b = new URLUtils.URLBuilder("/api/v1/namespaces/" + ns + "/pods/" + pod + "/exec");
        argv.forEach(a -> b.addQueryParameter("command", a));
        b.addQueryParameter("container", "main");
        if (stdin) {
            b.addQueryParameter("stdin", "true");
        }
        b.addQueryParameter("stdout", "true");
        b.addQueryParameter("stderr", "true");
        return b.toString();
    }

    /** Whether the server received a request for this path (searched for at most five seconds). */
    private static boolean received(String path) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline) {
            RecordedRequest r = server.takeRequest(100, TimeUnit.MILLISECONDS);
            if (r != null && path.equals(r.getPath())) {
                return true;
            }
        }
        return false;
    }

    private static String frameText(io.fabric8.mockwebserver.internal.WebSocketMessage message) {
        return new String(message.getBytes(), StandardCharsets.UTF_8);
    }

    @Test
    void stdoutStderrAndExitCodeZeroWithTheListenerOnOneThreadAtATime() {
        ExecRequest request = ExecRequest.of("echo", "hello");
        server.expect().get().withPath(execPath("id1", request, false)).andUpgradeToWebSocket().open()
                .immediately().andEmit(new OutputStreamMessage("hello\n"))
                .immediately().andEmit(new ErrorStreamMessage("warn\n"))
                .immediately().andEmit(new OutputStreamMessage("more\n"))
                .immediately().andEmit(new StatusStreamMessage(0)).done().once();
        List<String> seen = new CopyOnWriteArrayList<>();
        Set<String> threads = ConcurrentHashMap.newKeySet();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        String caller = Thread.currentThread().getName();

        ExecResult r = driver.exec(pod, request.withListener((stream, bytes, off, len) -> {
            if (inside.incrementAndGet() != 1) {
                overlaps.incrementAndGet();
            }
            threads.add(Thread.currentThread().getName());
            seen.add(stream + ":" + new String(bytes, off, len, StandardCharsets.UTF_8));
            inside.decrementAndGet();
        }));

        assertThat(r.exitCode()).isZero();
        assertThat(r.termination()).isEqualTo(Termination.EXITED);
        assertThat(r.stdout()).isEqualTo("hello\nmore\n");
        assertThat(r.stderr()).isEqualTo("warn\n");
        assertThat(r.stdoutTruncated()).isFalse();
        assertThat(seen).containsExactly("STDOUT:hello\n", "STDERR:warn\n", "STDOUT:more\n");
        assertThat(overlaps.get()).isZero();
        assertThat(threads).as("listener threads (fabric8's, not the caller's)").doesNotContain(caller);
    }

    @Test
    void nonZeroExitCodeIsData() {
        ExecRequest request = ExecRequest.shell("exit 3");
        server.expect().get().withPath(execPath("id1", request, false)).andUpgradeToWebSocket().open()
                .immediately().andEmit(new StatusStreamMessage(3)).done().once();

        ExecResult r = driver.exec(pod, request);

        assertThat(r.exitCode()).isEqualTo(3);
        assertThat(r.termination()).isEqualTo(Termination.EXITED);
        assertThat(r.isSuccess()).isFalse();
    }

    @Test
    void missingBinaryStatus127FromTheWrapperIsDataNotAnException() {
        ExecRequest request = ExecRequest.of("no-such-program", "arg");
        server.expect().get().withPath(execPath("id1", request, false)).andUpgradeToWebSocket().open()
                .immediately().andEmit(new ErrorStreamMessage("sandboxkit-exec: exec: line 11: no-such-program: not found\n"))
                .immediately().andEmit(new StatusStreamMessage(127)).done().once();

        ExecResult r = driver.exec(pod, request);

        assertThat(r.exitCode()).isEqualTo(127);
        assertThat(r.termination()).isEqualTo(Termination.EXITED);
        assertThat(r.stderr()).contains("not found");
    }

    @Test
    void stdinAndEnvTravelOnTheStdinChannelNotInTheUrl() {
        ExecRequest request = ExecRequest.of("cat").withStdin("hello\nstdin").withEnv(Map.of("API_TOKEN", "s3cr3t\nline2"))
                .withWorkingDir("sub");
        String path = execPath("id1", request, true);
        String expectedStdin = "\u0000" + "API_TOKEN=s3cr3t\\nline2\n" + "hello\nstdin";
        server.expect().get().withPath(path).andUpgradeToWebSocket().open()
                .expect(expectedStdin).andEmit(new OutputStreamMessage("hello\nstdin")).once()
                // keyed by the sent frame's text: channel byte 1, then the payload
                .expectSentWebSocketMessage(frameText(new OutputStreamMessage("hello\nstdin"))).andEmit(new StatusStreamMessage(0))
                .once().done().once();

        ExecResult r = driver.exec(pod, request.withTimeout(Duration.ofSeconds(20)));

        assertThat(path).contains("stdin=true").doesNotContain("s3cr3t").doesNotContain("API_TOKEN")
                .contains("command=%2Fworkspace%2Fsub");
        assertThat(r.timedOut()).isFalse();
        assertThat(r.stdout()).isEqualTo("hello\nstdin");
        assertThat(r.exitCode()).isZero();
    }

    @Test
    void capsKeepTheFirstBytesButTheListenerSeesAll() {
        ExecRequest request = ExecRequest.of(List.of("yes")).withStdoutLimit(4).withStderrLimit(0);
        server.expect().get().withPath(execPath("id1", request, false)).andUpgradeToWebSocket().open()
                .immediately().andEmit(new OutputStreamMessage("abc"))
                .immediately().andEmit(new OutputStreamMessage("defg"))
                .immediately().andEmit(new ErrorStreamMessage("e"))
                .immediately().andEmit(new StatusStreamMessage(0)).done().once();
        StringBuilder all = new StringBuilder();

        ExecResult r = driver.exec(pod, request.withListener((s, b, o, l) -> all.append(new String(b, o, l, StandardCharsets.UTF_8))));

        assertThat(r.stdout()).isEqualTo("abcd");
        assertThat(r.stdoutTruncated()).isTrue();
        assertThat(r.stderr()).isEmpty();
        assertThat(r.stderrTruncated()).isTrue();
        assertThat(all.toString()).isEqualTo("abcdefge");
    }

    @Test
    void timeoutRunsTheKillExecAndReportsTimedOut() throws Exception {
        ExecRequest request = ExecRequest.shell("echo started; sleep 300").withTimeout(Duration.ofMillis(800));
        // No status ever comes; the scripted receive keeps the mock from closing the socket by itself.
        server.expect().get().withPath(execPath("id1", request, false)).andUpgradeToWebSocket().open()
                .immediately().andEmit(new OutputStreamMessage("started\n"))
                .expect("never sent").andEmit(new StatusStreamMessage(0)).once().done().once();
        server.expect().get().withPath(killPath("id1")).andUpgradeToWebSocket().open()
                .immediately().andEmit(new OutputStreamMessage("sandboxkit: killed 2 process(es)\n"))
                .immediately().andEmit(new StatusStreamMessage(0)).done().once();

        long t0 = System.nanoTime();
        ExecResult r = driver.exec(pod, request);
        long ms = (System.nanoTime() - t0) / 1_000_000;

        assertThat(r.termination()).isEqualTo(Termination.TIMED_OUT);
        assertThat(r.timedOut()).isTrue();
        assertThat(r.stdout()).isEqualTo("started\n");
        assertThat(ms).as("ms until TIMED_OUT").isBetween(750L, 800L + PodExec.AFTER_KILL.toMillis() + 8000);
        assertThat(received(killPath("id1"))).as("the kill exec was sent with the exec's marker").isTrue();
    }

    @Test
    void aListenerThatThrowsKillsTheExecAndFailsIt() throws Exception {
        ExecRequest request = ExecRequest.of("yes");
        server.expect().get().withPath(execPath("id1", request, false)).andUpgradeToWebSocket().open()
                .immediately().andEmit(new OutputStreamMessage("y\n"))
                .expect("never sent").andEmit(new StatusStreamMessage(0)).once().done().once();
        server.expect().get().withPath(killPath("id1")).andUpgradeToWebSocket().open()
                .immediately().andEmit(new StatusStreamMessage(0)).done().once();

        assertThatThrownBy(() -> driver.exec(pod, request.withListener((s, b, o, l) -> {
            throw new IllegalStateException("listener broke");
        }))).isInstanceOf(SandboxExecException.class).hasMessageContaining("listener")
                .hasRootCauseMessage("listener broke");
        assertThat(received(killPath("id1"))).as("the kill exec was sent").isTrue();
    }

    @Test
    void podGoneBeforeTheExecIsNotFound() {
        driver.remove(pod);

        assertThatThrownBy(() -> driver.exec(pod, ExecRequest.of("true")))
                .isInstanceOf(SandboxNotFoundException.class).hasMessageContaining(pod);
        assertThatThrownBy(() -> driver.exec("sbx-never-existed-00000000", ExecRequest.of("true")))
                .isInstanceOf(SandboxNotFoundException.class);
    }

    @Test
    void podDeletedDuringTheExecGivesKilled() {
        ExecRequest request = ExecRequest.shell("echo partial; sleep 300");
        // What a kubelet sends when the container dies under the exec: SIGKILL's exit status. The listener
        // deletes the pod when the first output arrives; fabric8 hands frames over one at a time, so the
        // deletion is done before the status is processed.
        server.expect().get().withPath(execPath("id1", request, false)).andUpgradeToWebSocket().open()
                .immediately().andEmit(new OutputStreamMessage("partial\n"))
                .immediately().andEmit(new StatusStreamMessage(137))
                .expect("never sent").andEmit(new StatusStreamMessage(0)).once().done().once();
        AtomicInteger deletions = new AtomicInteger();

        ExecResult r = driver.exec(pod, request.withListener((s, b, o, l) -> {
            if (deletions.getAndIncrement() == 0) {
                client.pods().inNamespace(ns).withName(pod).delete();
            }
        }));

        assertThat(deletions.get()).isPositive();
        assertThat(r.termination()).isEqualTo(Termination.KILLED);
        assertThat(r.exitCode()).isEqualTo(137);
        assertThat(r.stdout()).isEqualTo("partial\n");
    }

    @Test
    void exit137WhileThePodLivesIsAnOrdinaryExit() {
        ExecRequest request = ExecRequest.shell("kill -9 $$");
        server.expect().get().withPath(execPath("id1", request, false)).andUpgradeToWebSocket().open()
                .immediately().andEmit(new StatusStreamMessage(137)).done().once();

        ExecResult r = driver.exec(pod, request);

        assertThat(r.termination()).isEqualTo(Termination.EXITED);
        assertThat(r.exitCode()).isEqualTo(137);
    }

    @Test
    void aStreamThatEndsWithoutStatusWhileThePodLivesIsAnExecFailure() {
        ExecRequest request = ExecRequest.of("true");
        server.expect().get().withPath(execPath("id1", request, false)).andUpgradeToWebSocket().open()
                .immediately().andEmit(new StatusMessage(new StatusBuilder().withStatus("Failure")
                        .withMessage("OCI runtime exec failed: exec failed: unable to start container process: exec: "
                                + "\"/bin/sh\": stat /bin/sh: no such file or directory: unknown").build()))
                .done().once();

        assertThatThrownBy(() -> driver.exec(pod, request))
                .isInstanceOf(SandboxExecException.class)
                .hasMessageContaining("needs /bin/sh in the image");
    }

    @Test
    void listenerStreamsAreLabelled() {
        ExecRequest request = ExecRequest.of("x");
        server.expect().get().withPath(execPath("id1", request, false)).andUpgradeToWebSocket().open()
                .immediately().andEmit(new ErrorStreamMessage("E"))
                .immediately().andEmit(new StatusStreamMessage(0)).done().once();
        List<ExecStream> streams = new CopyOnWriteArrayList<>();

        driver.exec(pod, request.withListener((s, b, o, l) -> streams.add(s)));

        assertThat(streams).containsExactly(ExecStream.STDERR);
    }

    /** The exec URL of a command on a terminal: stdin and stdout, tty, and no stderr (a terminal merges it). */
    private String ttyPath(String execId, ExecRequest request) {
        TerminalSize size = request.tty();
        URLUtils.URLBuilder b = new URLUtils.URLBuilder("/api/v1/namespaces/" + ns + "/pods/" + pod + "/exec");
        ExecScripts.wrapTty(request.effectiveWorkingDir(), execId, size.columns(), size.rows(), request.command())
                .forEach(a -> b.addQueryParameter("command", a));
        b.addQueryParameter("container", "main");
        b.addQueryParameter("tty", "true");
        b.addQueryParameter("stdin", "true");
        b.addQueryParameter("stdout", "true");
        return b.toString();
    }

    /** What fabric8 sends on the resize channel: channel byte 4, then the size as JSON. */
    private static String resizeFrame(int columns, int rows) {
        return "\u0004{\"Width\":" + columns + ",\"Height\":" + rows + "}";
    }

    /** The mock answers only once the initial size arrived on channel 4, so the output proves it was sent. */
    @Test
    @Timeout(60)
    void ttyExecAsksForATtySizesItOnTheResizeChannelAndReadsTheMergedOutput() {
        ExecRequest request = ExecRequest.of("tty").withTty(TerminalSize.of(80, 24));
        server.expect().get().withPath(ttyPath("id1", request)).andUpgradeToWebSocket().open()
                .expect(resizeFrame(80, 24)).andEmit(new OutputStreamMessage("/dev/pts/0\r\n")).once()
                .expectSentWebSocketMessage(frameText(new OutputStreamMessage("/dev/pts/0\r\n")))
                .andEmit(new StatusStreamMessage(0)).once()
                .done().once();

        String path = ttyPath("id1", request);
        ExecResult r = driver.exec(pod, request.withTimeout(Duration.ofSeconds(20)));

        assertThat(path).contains("tty=true").contains("stdin=true").doesNotContain("stderr=");
        assertThat(r.stdout()).isEqualTo("/dev/pts/0\r\n");
        assertThat(r.stderr()).isEmpty();
        assertThat(r.exitCode()).isZero();
        assertThat(r.termination()).isEqualTo(Termination.EXITED);
    }

    /**
     * A resize after the start goes on channel 4 of the open exec. Every client frame is scripted (the mock closes
     * with 1002 on anything else): the initial size, then the new one; the output answering each proves the order.
     */
    @Test
    @Timeout(60)
    void terminalResizedAfterItStartedSendsTheNewSizeOnTheResizeChannel() throws Exception {
        ExecRequest request = ExecRequest.of("sh").withTty(TerminalSize.of(80, 24));
        server.expect().get().withPath(ttyPath("id1", request)).andUpgradeToWebSocket().open()
                .expect(resizeFrame(80, 24)).andEmit(new OutputStreamMessage("24 80\r\n")).once()
                .expect(resizeFrame(132, 43)).andEmit(new OutputStreamMessage("43 132\r\n")).once()
                .expectSentWebSocketMessage(frameText(new OutputStreamMessage("43 132\r\n")))
                .andEmit(new StatusStreamMessage(0)).once()
                .done().once();

        try (dev.sandboxkit.spi.TerminalConnection t = driver.openTerminal(pod, request)) {
            java.io.InputStream out = t.output();
            StringBuilder seen = new StringBuilder();
            readUntil(out, seen, "24 80\r\n");
            t.resize(TerminalSize.of(132, 43));
            readUntil(out, seen, "43 132\r\n");

            assertThat(seen.toString()).isEqualTo("24 80\r\n43 132\r\n");
            ExecResult r = t.waitFor(Duration.ofSeconds(20)).orElseThrow();
            assertThat(r.exitCode()).isZero();
            assertThat(r.termination()).isEqualTo(Termination.EXITED);
        }
    }

    private static void readUntil(java.io.InputStream in, StringBuilder seen, String expected) throws Exception {
        byte[] buf = new byte[256];
        while (!seen.toString().endsWith(expected)) {
            int n = in.read(buf);
            if (n < 0) {
                throw new AssertionError("the output ended before '" + expected + "': " + seen);
            }
            seen.append(new String(buf, 0, n, StandardCharsets.UTF_8));
        }
    }

    @Test
    void terminalRefusesPerExecEnvWhichAnEchoingStdinWouldShow() {
        ExecRequest request = ExecRequest.of("sh").withEnv("TOKEN", "s3cr3t").withTty(TerminalSize.of(80, 24));

        assertThatThrownBy(() -> driver.openTerminal(pod, request)).isInstanceOf(SandboxUnsupportedException.class)
                .hasMessageContaining("TOKEN").hasMessageNotContaining("s3cr3t");
    }
}
