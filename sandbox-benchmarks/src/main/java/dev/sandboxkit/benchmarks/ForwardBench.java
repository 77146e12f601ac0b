package dev.sandboxkit.benchmarks;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.PortForward;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * B14: connections through a port forward to BusyBox {@code httpd} in a network-none sandbox. One HTTP/1.0 GET per
 * connection (the server closes it), so every GET pays a connection: sequential GETs, and batches of 50 sent in a
 * row or all at once. The floor is the engine call each connection costs: a raw Engine API exec, one after the
 * other and 50 at once. Interleaved round by round.
 */
final class ForwardBench {
    private static final int PORT = 8080;
    private static final int BATCH = 50;
    private static final byte[] PAGE = "hello from the sandbox\n".getBytes(StandardCharsets.UTF_8);

    private final Report report;
    private final Supplier<SandboxManager.Builder> builders;
    private final SandboxSpec spec;
    private final RawDocker raw;
    private final int sequential;
    private final int batches;

    ForwardBench(Report report, Supplier<SandboxManager.Builder> builders, SandboxSpec spec, RawDocker raw,
            boolean quick) {
        this.report = report;
        this.builders = builders;
        this.spec = spec;
        this.raw = raw;
        this.sequential = quick ? 20 : 200;
        this.batches = quick ? 2 : 8;
    }

    void run() throws Exception {
        String load0 = BenchmarkMain.Machine.loadAverage();
        Samples one = new Samples("forward: GET on a new connection, one after the other");
        Samples rawExec = new Samples("floor: raw Engine API exec of `true`, one after the other");
        Samples inRow = new Samples("forward: 50 GETs in a row (whole batch)");
        Samples atOnce = new Samples("forward: 50 GETs at once, 50 client threads (whole batch)");
        Samples rawAtOnce = new Samples("floor: 50 raw Engine API execs of `true` at once (whole batch)");
        ExecutorService clients = Executors.newFixedThreadPool(BATCH, r -> {
            Thread t = new Thread(r, "b14-client");
            t.setDaemon(true);
            return t;
        });
        try (SandboxManager m = builders.get().build()) {
            Sandbox sandbox = m.acquire("b14", spec);
            sandbox.files().write("www/index.html", PAGE);
            BenchmarkMain.check(sandbox.exec(ExecRequest.shell("setsid httpd -p " + PORT
                    + " -h /workspace/www </dev/null >/dev/null 2>&1 &")).exitCode());
            BenchmarkMain.check(sandbox.exec(ExecRequest.shell("i=0; while [ $i -lt 100 ]; do nc 127.0.0.1 " + PORT
                    + " </dev/null >/dev/null 2>&1 && exit 0; i=$((i+1)); sleep 0.05; done; exit 1")).exitCode());
            String id = sandbox.info().sandboxId();
            try (PortForward forward = sandbox.forward(PORT)) {
                InetSocketAddress at = forward.localAddress();
                for (int i = 0; i < 10; i++) { // warm-up
                    get(at);
                    raw.exec(id, "true");
                }
                for (int i = 0; i < sequential; i++) {
                    if (i % 2 == 0) {
                        one.add(BenchmarkMain.timeChecked(() -> get(at)));
                        rawExec.add(BenchmarkMain.timeChecked(() -> BenchmarkMain.check(raw.exec(id, "true"))));
                    } else {
                        rawExec.add(BenchmarkMain.timeChecked(() -> BenchmarkMain.check(raw.exec(id, "true"))));
                        one.add(BenchmarkMain.timeChecked(() -> get(at)));
                    }
                }
                for (int b = 0; b < batches; b++) {
                    inRow.add(BenchmarkMain.timeChecked(() -> {
                        for (int i = 0; i < BATCH; i++) {
                            get(at);
                        }
                    }));
                    atOnce.add(together(clients, () -> get(at)));
                    rawAtOnce.add(together(clients, () -> BenchmarkMain.check(raw.exec(id, "true"))));
                }
            }
            m.destroy("b14");
        } finally {
            clients.shutdownNow();
        }
        report.note(String.format(Locale.ROOT, "B14: BusyBox `httpd` in the sandbox (network `none`), one HTTP/1.0 GET"
                + " of %d bytes per connection through `sandbox.forward(8080)`; each connection is relayed by an "
                + "attached exec of `nc` (two engine calls). At once: %.0f GETs/s through the forward, %.0f GETs/s in "
                + "a row; %.0f raw engine execs/s at once.", PAGE.length, BATCH * 1000.0 / atOnce.p50Millis(),
                BATCH * 1000.0 / inRow.p50Millis(), BATCH * 1000.0 / rawAtOnce.p50Millis()));
        report.section("B14 port forward: connections to BusyBox httpd", "A connection costs about one engine exec "
                        + "(≤ 1.5× a raw exec); 50 connections at once finish faster than 50 in a row. "
                        + BenchmarkMain.loadText(load0),
                List.of(one, rawExec, inRow, atOnce, rawAtOnce),
                List.of(Report.goal("GET / raw exec", one, rawExec, 1.5),
                        Report.goal("50 at once / 50 in a row", atOnce, inRow, 1.0)));
    }

    /** Runs {@code call} on {@value #BATCH} threads released together; returns the batch's wall time. */
    private static long together(ExecutorService clients, BenchmarkMain.ThrowingRunnable call) throws Exception {
        CyclicBarrier start = new CyclicBarrier(BATCH + 1);
        List<Future<?>> done = new ArrayList<>();
        for (int i = 0; i < BATCH; i++) {
            done.add(clients.submit(() -> {
                start.await(60, TimeUnit.SECONDS);
                call.run();
                return null;
            }));
        }
        start.await(60, TimeUnit.SECONDS);
        long t0 = System.nanoTime();
        for (Future<?> f : done) {
            f.get(5, TimeUnit.MINUTES);
        }
        return System.nanoTime() - t0;
    }

    /** One GET on a new connection; checks the answer. */
    private static void get(InetSocketAddress at) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(at, 10_000);
            s.setSoTimeout(60_000);
            s.getOutputStream().write("GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            InputStream in = s.getInputStream();
            byte[] all = in.readAllBytes();
            String text = new String(all, StandardCharsets.ISO_8859_1);
            if (!text.startsWith("HTTP/1.1 200") && !text.startsWith("HTTP/1.0 200") || !text.endsWith(new String(PAGE, StandardCharsets.ISO_8859_1))) {
                throw new IllegalStateException("B14: unexpected answer: " + text);
            }
        }
    }
}
