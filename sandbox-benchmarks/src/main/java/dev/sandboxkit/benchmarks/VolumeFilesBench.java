package dev.sandboxkit.benchmarks;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;

/**
 * B12: what a small files call costs per workdir backend: a host directory, a volume whose sandbox runs (each call
 * freezes it: pause, the engine's archive calls, unpause) and a volume whose session is suspended (the same
 * archive calls, no container to freeze). Interleaved call by call.
 */
final class VolumeFilesBench {
    private static final byte[] CONTENT = "x".repeat(200).getBytes(StandardCharsets.US_ASCII);

    private final Report report;
    private final Supplier<SandboxManager.Builder> builders;
    private final SandboxSpec spec;
    private final int iterations;

    VolumeFilesBench(Report report, Supplier<SandboxManager.Builder> builders, SandboxSpec spec, boolean quick) {
        this.report = report;
        this.builders = builders;
        this.spec = spec;
        this.iterations = quick ? 30 : 300;
    }

    void run() throws Exception {
        String load0 = BenchmarkMain.Machine.loadAverage();
        Samples host = new Samples("host directory, live sandbox: write 200 B + readBytes");
        Samples live = new Samples("volume, live sandbox (frozen for each call): write 200 B + readBytes");
        Samples idle = new Samples("volume, suspended session (nothing to freeze): write 200 B + readBytes");
        Samples hostRead = new Samples("host directory, live sandbox: readBytes alone");
        Samples liveRead = new Samples("volume, live sandbox: readBytes alone");
        Samples idleRead = new Samples("volume, suspended session: readBytes alone");
        try (SandboxManager h = builders.get().build();
             SandboxManager v = builders.get().driverProperty("docker.workdirs", "volume").build();
             SandboxManager s = builders.get().driverProperty("docker.workdirs", "volume")
                     .idleTimeout(Duration.ofSeconds(2)).reaperInterval(Duration.ofMillis(500)).build()) {
            BenchmarkMain.check(h.acquire("b12-host", spec).exec(ExecRequest.of("true")).exitCode());
            BenchmarkMain.check(v.acquire("b12-volume", spec).exec(ExecRequest.of("true")).exitCode());
            BenchmarkMain.check(s.acquire("b12-suspended", spec).exec(ExecRequest.of("true")).exitCode());
            awaitSuspended(s, "b12-suspended");
            SandboxFiles hf = h.files("b12-host");
            SandboxFiles vf = v.files("b12-volume");
            SandboxFiles sf = s.files("b12-suspended");
            SandboxFiles[] all = {hf, vf, sf};
            Samples[][] rows = {{host, hostRead}, {live, liveRead}, {idle, idleRead}};
            for (int round = 0; round < 2; round++) { // the first round warms up, the second is measured
                for (int i = 0; i < iterations; i++) {
                    for (int k = 0; k < all.length; k++) {
                        int at = (k + i) % all.length; // the order rotates, so no side always goes first
                        SandboxFiles f = all[at];
                        long t0 = System.nanoTime();
                        f.write("b12.txt", CONTENT);
                        long t1 = System.nanoTime();
                        byte[] back = f.readBytes("b12.txt");
                        long t2 = System.nanoTime();
                        if (!Arrays.equals(back, CONTENT)) {
                            throw new IllegalStateException("B12 read back something else");
                        }
                        if (round == 1) {
                            rows[at][0].add(t2 - t0);
                            rows[at][1].add(t2 - t1);
                        }
                    }
                }
            }
            if (s.session("b12-suspended").map(info -> info.state() != SessionState.SUSPENDED).orElse(true)) {
                throw new IllegalStateException("B12: the suspended session was resumed by its files calls");
            }
            h.destroy("b12-host");
            v.destroy("b12-volume");
            s.destroy("b12-suspended");
        }
        report.section("B12 small files calls per workdir backend",
                "None set; what the volume backend's freeze of a running sandbox costs. Load average (1 min) "
                        + load0 + " before, " + BenchmarkMain.Machine.loadAverage() + " after this section.",
                List.of(host, live, idle, hostRead, liveRead, idleRead), List.of());
        report.note("B12: one session per backend on one engine, " + iterations + " measured iterations after as many "
                + "warm-up ones, the three interleaved call by call in a rotating order. A files call on a live volume "
                + "session lists the volume's running containers, pauses them, makes its archive calls and unpauses "
                + "them; on a suspended one it only lists. The host directory never reaches the engine.");
    }

    private static void awaitSuspended(SandboxManager m, String id) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (m.session(id).map(info -> info.state() != SessionState.SUSPENDED).orElse(true)) {
            if (System.nanoTime() > until) {
                throw new IllegalStateException("B12: session " + id + " was not reaped within 60 s");
            }
            Thread.sleep(100);
        }
    }
}
