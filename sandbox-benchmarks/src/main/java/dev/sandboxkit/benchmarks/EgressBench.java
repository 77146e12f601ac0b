package dev.sandboxkit.benchmarks;

import dev.sandboxkit.EgressPolicy;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * B15: one 100 MiB download by BusyBox {@code wget} in a sandbox from an HTTP server on the host's 127.0.0.1:
 * through the egress proxy (network {@code none}: the endpoint in the sandbox, exec streams, the proxy in the JVM),
 * and the same {@code wget} in a sandbox on network {@code host}, with no tunnel, as the floor. runc, and the egress
 * path again under gVisor. Interleaved round by round; each round is timed around the exec.
 */
final class EgressBench {
    private static final long SIZE = 100L * 1024 * 1024;

    private final Report report;
    private final Supplier<SandboxManager.Builder> builders;
    private final SandboxSpec spec;
    private final int rounds;

    EgressBench(Report report, Supplier<SandboxManager.Builder> builders, SandboxSpec spec, boolean quick) {
        this.report = report;
        this.builders = builders;
        this.spec = spec;
        this.rounds = quick ? 3 : 10;
    }

    void run() throws Exception {
        String load0 = BenchmarkMain.Machine.loadAverage();
        Samples egress = new Samples("egress: 100 MiB through the proxy (runc, network none)");
        Samples direct = new Samples("floor: 100 MiB, same wget, network host, no tunnel (runc)");
        Samples gvisor = new Samples("egress: 100 MiB through the proxy (gVisor, network none)");
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
             SandboxManager m = builders.get().egressResolver(host -> {
                 if (host.equals("bench.test")) {
                     return List.of(InetAddress.getLoopbackAddress());
                 }
                 throw new UnknownHostException(host);
             }).build()) {
            Thread serving = new Thread(() -> serve(server), "b15-upstream");
            serving.setDaemon(true);
            serving.start();
            int port = server.getLocalPort();
            SandboxSpec viaProxy = spec.toBuilder().egress(EgressPolicy.parse("bench.test")).build();
            Sandbox tunnelled = m.acquire("b15-egress", viaProxy);
            Sandbox hostNet = m.acquire("b15-direct", spec.toBuilder().network("host").build());
            Sandbox underGvisor = m.acquire("b15-gvisor", viaProxy.toBuilder().runtime("runsc").build());
            String proxied = "wget -q -O - http://bench.test:" + port + "/ | wc -c";
            String plain = "wget -q -O - http://127.0.0.1:" + port + "/ | wc -c";
            download(tunnelled, proxied); // warm-up
            download(hostNet, plain);
            for (int i = 0; i < rounds; i++) {
                egress.add(BenchmarkMain.timeChecked(() -> download(tunnelled, proxied)));
                direct.add(BenchmarkMain.timeChecked(() -> download(hostNet, plain)));
                gvisor.add(BenchmarkMain.timeChecked(() -> download(underGvisor, proxied)));
            }
            m.destroy("b15-egress");
            m.destroy("b15-direct");
            m.destroy("b15-gvisor");
        }
        report.note(String.format(Locale.ROOT, "B15: 100 MiB by BusyBox wget from an HTTP server on the host's loopback. "
                        + "p50 throughput: %.0f MB/s through the egress proxy (runc), %.0f MB/s without the tunnel "
                        + "(network host), %.0f MB/s through the proxy under gVisor.", mbps(egress), mbps(direct),
                mbps(gvisor)));
        report.section("B15 egress: 100 MiB through the proxy", "Through the proxy at least 80% of the same download "
                        + "without the tunnel (time ≤ 1.25×). " + BenchmarkMain.loadText(load0),
                List.of(egress, direct, gvisor), List.of(Report.goal("egress / no tunnel", egress, direct, 1.25)));
    }

    private static double mbps(Samples s) {
        return SIZE / 1e6 / (s.p50Millis() / 1000.0);
    }

    private static void download(Sandbox sandbox, String command) {
        ExecResult r = sandbox.exec(ExecRequest.shell(command).withTimeout(Duration.ofMinutes(5)));
        if (!r.isSuccess() || !r.stdout().strip().equals(Long.toString(SIZE))) {
            throw new IllegalStateException("B15: download failed: " + r + " " + r.stdout() + r.stderr());
        }
    }

    /** One HTTP/1.0-style answer of {@link #SIZE} bytes per connection. */
    private static void serve(ServerSocket server) {
        byte[] chunk = new byte[64 * 1024];
        Arrays.fill(chunk, (byte) 'x');
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                Thread t = new Thread(() -> {
                    try (s) {
                        InputStream in = s.getInputStream();
                        int matched = 0;
                        while (matched < 4) { // to the end of the request head
                            int c = in.read();
                            if (c < 0) {
                                return;
                            }
                            matched = (c == '\r' && matched % 2 == 0) || (c == '\n' && matched % 2 == 1) ? matched + 1 : 0;
                        }
                        OutputStream out = new BufferedOutputStream(s.getOutputStream(), 256 * 1024);
                        out.write(("HTTP/1.1 200 OK\r\nContent-Length: " + SIZE + "\r\nConnection: close\r\n\r\n")
                                .getBytes(StandardCharsets.US_ASCII));
                        for (long sent = 0; sent < SIZE; sent += chunk.length) {
                            out.write(chunk);
                        }
                        out.flush();
                    } catch (IOException e) {
                        // a client that went away
                    }
                }, "b15-answer");
                t.setDaemon(true);
                t.start();
            } catch (IOException closed) {
                return;
            }
        }
    }
}
