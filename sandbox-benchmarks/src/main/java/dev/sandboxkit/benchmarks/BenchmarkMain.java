package dev.sandboxkit.benchmarks;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.ShellSession;
import dev.sandboxkit.WarmPool;
import dev.sandboxkit.tools.SandboxTools;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * Runs every benchmark side by side on this machine and writes the report. Usage (see scripts/bench.sh):
 * {@code BenchmarkMain [output-dir] [quick]}. Each comparison interleaves the library and its baseline
 * iteration by iteration, so both see the same machine load.
 */
public final class BenchmarkMain {
    private static final String IMAGE = System.getProperty("image", "sandboxkit-test:latest");
    private static final SandboxSpec SPEC = SandboxSpec.builder().image(IMAGE).pullPolicy(PullPolicy.NEVER).build();

    private final Report report = new Report();
    private final boolean quick;
    private final Path scratch;

    private BenchmarkMain(boolean quick) throws Exception {
        this.quick = quick;
        this.scratch = Files.createTempDirectory("sandboxkit-bench");
    }

    /**
     * Runs the benchmarks.
     *
     * @param args output directory (default {@code docs}); optionally {@code quick} for fewer iterations (or
     *             {@code full}); optionally a comma-separated list of sections to run (for example {@code B1,B4})
     * @throws Exception if a benchmark fails
     */
    public static void main(String[] args) throws Exception {
        Path out = Path.of(args.length > 0 ? args[0] : "docs");
        boolean quick = args.length > 1 && args[1].equals("quick");
        Set<String> only = args.length > 2 ? Set.of(args[2].split(",")) : Set.of();
        Predicate<String> run = section -> only.isEmpty() || only.contains(section);
        BenchmarkMain bench = new BenchmarkMain(quick);
        bench.report.machine(Machine.describe());
        try (RawDocker raw = new RawDocker(IMAGE)) {
            if (run.test("B1")) {
                bench.execLatency(raw);
                bench.execBackToBack();
            }
            if (run.test("B2")) {
                bench.coldAcquire(raw);
            }
            if (run.test("B3")) {
                bench.resume();
            }
            if (run.test("B4")) {
                bench.warmPool();
            }
            ScaleBench scale = new ScaleBench(bench.report, bench.scratch, bench::docker, SPEC, bench.quick);
            if (run.test("B5")) {
                scale.reaperAtScale();
                scale.reapRealContainers(raw);
            }
            if (run.test("B6")) {
                scale.memory();
            }
            if (run.test("B7")) {
                bench.toolCall();
            }
            if (run.test("B8")) {
                bench.gVisor();
            }
            if (run.test("B9")) {
                bench.bulkOutput(raw);
            }
            if (run.test("B10")) {
                bench.liveSandboxCost();
            }
            if (run.test("B11")) {
                new ArchiveTierBench(bench.report, bench.scratch, bench.docker(), SPEC, bench.quick).run();
            }
            if (run.test("B12")) {
                new VolumeFilesBench(bench.report, bench::docker, SPEC, bench.quick).run();
            }
            if (run.test("B13")) {
                new SnapshotBench(bench.report, bench.scratch, bench::docker, SPEC, bench.quick).run();
            }
            if (run.test("B14")) {
                new ForwardBench(bench.report, bench::docker, SPEC, raw, bench.quick).run();
            }
            if (run.test("B15")) {
                new EgressBench(bench.report, bench::docker, SPEC, bench.quick).run();
            }
        }
        bench.report.machineAfter(Machine.loadAverage());
        Files.createDirectories(out);
        bench.report.write(out.resolve("benchmarks.md"), out.resolve("benchmarks.svg"));
        System.out.println("wrote " + out.resolve("benchmarks.md") + " and " + out.resolve("benchmarks.svg"));
    }

    private int n(int full) {
        return quick ? Math.max(5, full / 10) : full;
    }

    private SandboxManager.Builder docker() {
        return SandboxManager.builder().driver("docker").workspaceRoot(scratch.resolve("ws-" + System.nanoTime()));
    }

    // B1b: the channel alone, commands back to back (an agent issuing one command after the other), nothing else
    // running: what a command costs in steady state, without the cache and CPU noise the interleaved B1 adds.
    private void execBackToBack() throws Exception {
        Samples withSetsid = new Samples("channel (default), back to back");
        Samples noSetsid = new Samples("channel, docker.channelSetsid=false, back to back");
        try (SandboxManager m = docker().build();
             SandboxManager m2 = docker().driverProperty("docker.channelSetsid", "false").build()) {
            Sandbox a = m.acquire("b1b", SPEC);
            Sandbox b = m2.acquire("b1b-nosetsid", SPEC);
            for (int round = 0; round < 2; round++) { // the first round warms up, the second is measured
                for (int i = 0; i < n(300); i++) {
                    long t = time(() -> check(a.exec(ExecRequest.of("true")).exitCode()));
                    if (round == 1) {
                        withSetsid.add(t);
                    }
                }
                for (int i = 0; i < n(300); i++) {
                    long t = time(() -> check(b.exec(ExecRequest.of("true")).exitCode()));
                    if (round == 1) {
                        noSetsid.add(t);
                    }
                }
            }
        }
        report.section("B1b exec back to back on the channel: `ExecRequest.of(\"true\")`",
                "Default path p50 ≤ 3 ms.", List.of(withSetsid, noSetsid),
                List.of(Report.absolute("default path p50, back to back", withSetsid, 3.0)));
    }

    // B1: exec("true") through the library (channel, channel without setsid, plain exec, a shell session command)
    // vs raw docker-java vs the CLI, interleaved.
    private void execLatency(RawDocker raw) throws Exception {
        Samples lib = new Samples("library exec (default path)");
        Samples libNoSetsid = new Samples("library exec (channel, docker.channelSetsid=false)");
        Samples libPlain = new Samples("library exec (plain exec path)");
        Samples libShell = new Samples("shell session command (default path)");
        Samples api = new Samples("raw Engine API exec (docker-java)");
        Samples cli = new Samples("`docker exec` CLI");
        try (SandboxManager m = docker().build();
             SandboxManager m2 = docker().driverProperty("docker.channelSetsid", "false").build()) {
            Sandbox sandbox = m.acquire("b1", SPEC);
            Sandbox plain = m.acquire("b1-plain", SPEC.toBuilder().execMode(ExecMode.PLAIN).build());
            Sandbox noSetsid = m2.acquire("b1-nosetsid", SPEC);
            ShellSession shell = sandbox.shell();
            String id = sandbox.info().sandboxId();
            for (int i = 0; i < 20; i++) { // warm-up: JIT, connection pools, the engine's caches
                sandbox.exec(ExecRequest.of("true"));
                plain.exec(ExecRequest.of("true"));
                noSetsid.exec(ExecRequest.of("true"));
                shell.exec("true");
                raw.exec(id, "true");
            }
            // Heavy paths (CLI, engine execs) leave work behind on a 2-core machine (process teardown, the
            // engine's bookkeeping) that slows whatever runs next, so the order rotates every iteration.
            List<ThrowingRunnable> paths = List.of(
                    () -> lib.add(time(() -> check(sandbox.exec(ExecRequest.of("true")).exitCode()))),
                    () -> libNoSetsid.add(time(() -> check(noSetsid.exec(ExecRequest.of("true")).exitCode()))),
                    () -> libPlain.add(time(() -> check(plain.exec(ExecRequest.of("true")).exitCode()))),
                    () -> libShell.add(time(() -> check(shell.exec("true").exitCode()))),
                    () -> api.add(timeChecked(() -> check(raw.exec(id, "true")))));
            for (int i = 0; i < n(300); i++) {
                for (int k = 0; k < paths.size(); k++) {
                    paths.get((i + k) % paths.size()).run();
                }
                if (i % 3 == 0) { // the CLI is slow; a third of the samples is plenty
                    cli.add(timeChecked(() -> check(RawDocker.cliExec(id, "true"))));
                }
            }
        }
        report.note("B1: the default path starts every command in a session of its own with `setsid`, as a plain exec "
                + "gets from runc: one more execve per command (the `docker.channelSetsid=false` row is the same channel "
                + "without it). In B1 engine execs and CLI processes run between the channel's commands and take its "
                + "warm caches and a core; B1b runs the channel back to back, as an agent issuing commands in sequence does.");
        report.section("B1 exec: `ExecRequest.of(\"true\")`",
                "Default path (the command channel) p50 ≤ 3 ms and ≤ 0.10× the raw Engine API; the plain exec "
                        + "path ≤ 1.10× the raw Engine API and ≤ 0.7× the CLI.", List.of(lib, libNoSetsid, libPlain, libShell, api, cli),
                List.of(Report.absolute("default path p50", lib, 3.0),
                        Report.goal("default path / raw API", lib, api, 0.10),
                        Report.goal("plain path / raw API", libPlain, api, 1.10),
                        Report.goal("plain path / CLI", libPlain, cli, 0.70)));
    }

    // B7: what the agent tool set adds to a command: argument parsing, session resolution, acquire, the
    // head/tail capture and rendering, against the same shell command through the library.
    private void toolCall() throws Exception {
        Samples lib = new Samples("library exec `ExecRequest.shell(\"true\")`");
        Samples tool = new Samples("`run_command` tool call `{\"command\":\"true\"}`");
        try (SandboxManager m = docker().build()) {
            SandboxTools tools = SandboxTools.builder(m).spec(SPEC).build();
            Sandbox sandbox = tools.sandbox("b7");
            String args = "{\"command\":\"true\"}";
            for (int i = 0; i < 50; i++) { // warm-up: JIT and the channel
                check(sandbox.exec(ExecRequest.shell("true")).exitCode());
                tools.execute("b7", "run_command", args);
            }
            for (int i = 0; i < n(400); i++) { // alternate which goes first, so neither always follows the other
                ThrowingRunnable a = () -> lib.add(time(() -> check(sandbox.exec(ExecRequest.shell("true")).exitCode())));
                ThrowingRunnable b = () -> tool.add(time(() -> {
                    if (!tools.execute("b7", "run_command", args).text().startsWith("Exit code: 0")) {
                        throw new IllegalStateException("run_command failed");
                    }
                }));
                if (i % 2 == 0) {
                    a.run();
                    b.run();
                } else {
                    b.run();
                    a.run();
                }
            }
        }
        report.section("B7 agent tool call overhead", "A `run_command` tool call adds ≤ 1 ms at p50 to the library exec "
                + "of the same command.", List.of(lib, tool),
                List.of(Report.overhead("tool call p50 − library exec p50", tool, lib, 1.0)));
    }

    // B8: the same exec and cold acquire under gVisor (runsc) and runc, interleaved: what the second wall costs.
    private void gVisor() throws Exception {
        SandboxSpec runsc = SPEC.toBuilder().runtime("runsc").build();
        Samples runcChannel = new Samples("runc: exec on the channel");
        Samples runscChannel = new Samples("runsc: exec on the channel");
        Samples runcPlain = new Samples("runc: exec on the plain path");
        Samples runscPlain = new Samples("runsc: exec on the plain path");
        Samples runcAcquire = new Samples("runc: cold acquire");
        Samples runscAcquire = new Samples("runsc: cold acquire");
        try (SandboxManager m = docker().build()) {
            Sandbox a = m.acquire("b8-runc", SPEC);
            Sandbox b = m.acquire("b8-runsc", runsc);
            Sandbox c = m.acquire("b8-runc-plain", SPEC.toBuilder().execMode(ExecMode.PLAIN).build());
            Sandbox d = m.acquire("b8-runsc-plain", runsc.toBuilder().execMode(ExecMode.PLAIN).build());
            for (int i = 0; i < 20; i++) { // warm-up
                for (Sandbox s : List.of(a, b, c, d)) {
                    check(s.exec(ExecRequest.of("true")).exitCode());
                }
            }
            List<ThrowingRunnable> paths = List.of(
                    () -> runcChannel.add(time(() -> check(a.exec(ExecRequest.of("true")).exitCode()))),
                    () -> runscChannel.add(time(() -> check(b.exec(ExecRequest.of("true")).exitCode()))),
                    () -> runcPlain.add(time(() -> check(c.exec(ExecRequest.of("true")).exitCode()))),
                    () -> runscPlain.add(time(() -> check(d.exec(ExecRequest.of("true")).exitCode()))));
            for (int i = 0; i < n(200); i++) {
                for (int k = 0; k < paths.size(); k++) {
                    paths.get((i + k) % paths.size()).run();
                }
            }
            for (int i = 0; i < n(20); i++) {
                String one = "b8-cold-runc-" + i;
                String two = "b8-cold-runsc-" + i;
                runcAcquire.add(time(() -> m.acquire(one, SPEC)));
                runscAcquire.add(time(() -> m.acquire(two, runsc)));
                m.destroy(one);
                m.destroy(two);
            }
        }
        report.section("B8 gVisor (runsc) against runc", "Under gVisor the channel keeps exec p50 ≤ 0.5× the plain "
                        + "path (a cost table otherwise: the second wall is paid in start-up and syscalls).",
                List.of(runcChannel, runscChannel, runcPlain, runscPlain, runcAcquire, runscAcquire),
                List.of(Report.goal("runsc channel / runsc plain", runscChannel, runscPlain, 0.5)));
    }

    // B9: 1 MiB and 50 MiB of stdout through the channel, the plain exec path and raw docker-java, interleaved and
    // rotated as in B1. Every byte is counted on each path (the library's listener, docker-java's frames); the
    // library keeps its default 1 MiB cap in the result, docker-java keeps nothing.
    private void bulkOutput(RawDocker raw) throws Exception {
        String load0 = Machine.loadAverage();
        List<Samples> rows = new ArrayList<>();
        List<Report.Goal> goals = new ArrayList<>();
        try (SandboxManager m = docker().build()) {
            Sandbox channel = m.acquire("b9", SPEC);
            Sandbox plain = m.acquire("b9-plain", SPEC.toBuilder().execMode(ExecMode.PLAIN).build());
            String id = channel.info().sandboxId();
            for (int mib : new int[] {1, 50}) {
                long bytes = mib * 1024L * 1024L;
                String[] cmd = {"head", "-c", Long.toString(bytes), "/dev/zero"};
                Samples lib = new Samples("channel (default), " + mib + " MiB of stdout");
                Samples libPlain = new Samples("plain exec path, " + mib + " MiB of stdout");
                Samples api = new Samples("raw Engine API exec (docker-java), " + mib + " MiB of stdout");
                List<ThrowingRunnable> paths = List.of(
                        () -> lib.add(time(() -> bulk(channel, cmd, bytes))),
                        () -> libPlain.add(time(() -> bulk(plain, cmd, bytes))),
                        () -> api.add(timeChecked(() -> {
                            if (raw.execCounting(id, cmd) != bytes) {
                                throw new IllegalStateException("docker-java lost output");
                            }
                        })));
                for (int i = 0; i < 3; i++) { // warm-up
                    for (ThrowingRunnable p : paths) {
                        p.run();
                    }
                }
                lib.clear();
                libPlain.clear();
                api.clear();
                int rounds = mib == 1 ? n(60) : n(30);
                for (int i = 0; i < rounds; i++) {
                    for (int k = 0; k < paths.size(); k++) {
                        paths.get((i + k) % paths.size()).run();
                    }
                }
                rows.addAll(List.of(lib, libPlain, api));
                goals.add(Report.goal("channel / plain path, " + mib + " MiB", lib, libPlain, 1.0));
                goals.add(Report.goal("channel / raw API, " + mib + " MiB", lib, api, 1.0));
                report.note(String.format(Locale.ROOT, "B9 %d MiB throughput at p50: channel %.0f MB/s, plain path "
                        + "%.0f MB/s, raw docker-java %.0f MB/s", mib, bytes / lib.p50Millis() / 1e3,
                        bytes / libPlain.p50Millis() / 1e3, bytes / api.p50Millis() / 1e3));
            }
        }
        report.section("B9 bulk stdout: `head -c <n> /dev/zero`", "The channel at least as fast as the plain exec "
                + "path for 50 MiB, and for 1 MiB. " + loadText(load0), rows, goals);
    }

    /** Runs {@code cmd} and checks that exactly {@code bytes} of stdout arrived (counted by the listener). */
    private static void bulk(Sandbox sandbox, String[] cmd, long bytes) {
        long[] seen = new long[1];
        check(sandbox.exec(ExecRequest.of(cmd).withListener((stream, b, offset, length) -> seen[0] += length))
                .exitCode());
        if (seen[0] != bytes) {
            throw new IllegalStateException("expected " + bytes + " bytes of output, got " + seen[0]);
        }
    }

    // B10: what a live idle sandbox costs the JVM after one exec (heap, file descriptors, threads), at 50 sandboxes,
    // on the channel and on the plain path; then the channel's idle close (docker.channelIdleTimeout) and what the
    // reopen costs the next exec, interleaved with execs on a live channel.
    private void liveSandboxCost() throws Exception {
        String load0 = Machine.loadAverage();
        int count = quick ? 10 : 50;
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        List<String[]> rows = new ArrayList<>();
        Samples reopen = new Samples("exec `true` after the channel was closed for idleness (reopen + exec)");
        Samples live = new Samples("exec `true` on a live channel, interleaved");
        Duration idle = Duration.ofSeconds(10); // longer than opening all the channels takes
        SandboxSpec plainSpec = SPEC.toBuilder().execMode(ExecMode.PLAIN).build();
        // The default idle timeout (5 min) is far longer than this part: every channel stays open.
        try (SandboxManager m = docker().build()) {
            Sandbox warm = m.acquire("b10-warm", SPEC);
            Sandbox warmPlain = m.acquire("b10-warm-plain", plainSpec);
            for (int i = 0; i < 20; i++) { // classes, JIT and the connection pools exist before the baseline
                check(warm.exec(ExecRequest.of("true")).exitCode());
                check(warmPlain.exec(ExecRequest.of("true")).exitCode());
            }
            for (String[] mode : new String[][] {{"plain", "b10-plain-"}, {"channel", "b10-"}}) {
                SandboxSpec spec = mode[0].equals("plain") ? plainSpec : SPEC;
                check(warm.exec(ExecRequest.of("true")).exitCode()); // keeps the warm channel fresh
                long heap0 = usedHeap(memory);
                long fd0 = openFds();
                int threads0 = threads.getThreadCount();
                for (int i = 0; i < count; i++) {
                    check(m.acquire(mode[1] + i, spec).exec(ExecRequest.of("true")).exitCode());
                }
                check(warm.exec(ExecRequest.of("true")).exitCode());
                long heap1 = usedHeap(memory);
                long fd1 = openFds();
                int threads1 = threads.getThreadCount();
                rows.add(new String[] {"heap per live idle sandbox, " + mode[0] + " (one exec done)",
                        String.format(Locale.ROOT, "%.0f bytes", (heap1 - heap0) / (double) count),
                        mode[0].equals("channel") ? ((heap1 - heap0) / (double) count <= 32 * 1024 ? "met" : "missed")
                                : ""});
                rows.add(new String[] {"file descriptors per live idle sandbox, " + mode[0],
                        String.format(Locale.ROOT, "%.2f", (fd1 - fd0) / (double) count), ""});
                rows.add(new String[] {"threads per live idle sandbox, " + mode[0],
                        String.format(Locale.ROOT, "%.2f", (threads1 - threads0) / (double) count), ""});
            }
        }
        // Idle close: the warm sandbox stays busy (its execs run the sweep); the others idle past the timeout.
        try (SandboxManager m = docker().driverProperty("docker.channelIdleTimeout", Long.toString(idle.toSeconds()))
                .build()) {
            Sandbox warm = m.acquire("b10-idle-warm", SPEC);
            List<Sandbox> channelBoxes = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                Sandbox s = m.acquire("b10-idle-" + i, SPEC);
                channelBoxes.add(s);
            }
            for (Sandbox s : channelBoxes) { // all opened within the timeout, just before the first round
                check(s.exec(ExecRequest.of("true")).exitCode());
            }
            check(warm.exec(ExecRequest.of("true")).exitCode());
            for (int round = 0; round < n(3); round++) {
                long fdBusy = openFds();
                long until = System.nanoTime() + idle.plusMillis(1500).toNanos();
                while (System.nanoTime() < until) {
                    check(warm.exec(ExecRequest.of("true")).exitCode());
                    Thread.sleep(200);
                }
                long fdClosed = openFds();
                if (round == 0) {
                    rows.add(new String[] {"file descriptors freed per sandbox by the idle close ("
                            + idle.toSeconds() + " s here)", String.format(Locale.ROOT, "%.2f",
                            (fdBusy - fdClosed) / (double) count), ""});
                }
                for (Sandbox s : channelBoxes) {
                    reopen.add(time(() -> check(s.exec(ExecRequest.of("true")).exitCode())));
                    live.add(time(() -> check(warm.exec(ExecRequest.of("true")).exitCode())));
                }
            }
        }
        report.table("B10 cost per live sandbox (" + count + " live idle sandboxes, Docker driver)",
                "Heap per live idle sandbox with a command channel ≤ 32 KB. Measured as the used heap after "
                        + "four full GCs, before and after the sandboxes were acquired and ran one exec each. "
                        + loadText(load0), rows);
        report.section("B10b reopening an idle-closed channel (`docker.channelIdleTimeout`)",
                "A cost table: what the first exec after an idle close pays to reopen the channel.",
                List.of(reopen, live), List.of());
        report.note(String.format(Locale.ROOT, "B10b: reopening a channel closed for idleness adds %.1f ms at p50 to the "
                + "sandbox's next exec (a new attached exec and the supervisor's start); the exec after it runs on the "
                + "channel again.", reopen.p50Millis() - live.p50Millis()));
    }

    private static long openFds() throws java.io.IOException {
        try (var list = Files.list(Path.of("/proc/self/fd"))) {
            return list.count();
        }
    }

    static String loadText(String loadBefore) {
        return "Load average (1 min) " + loadBefore + " before, " + Machine.loadAverage() + " after this section"
                + (Double.parseDouble(loadBefore.equals("?") ? "0" : loadBefore) > 1.5
                ? " (a loaded machine: absolute times are noisy, compare the interleaved rows)." : ".");
    }

    // B2: cold acquire through the library vs raw create + start.
    private void coldAcquire(RawDocker raw) throws Exception {
        Samples lib = new Samples("library acquire (new session)");
        Samples api = new Samples("raw create + start (docker-java)");
        try (SandboxManager m = docker().build()) {
            m.destroy("warm");
            m.acquire("warm", SPEC);
            raw.remove(raw.createAndStart(scratch.resolve("raw-warm")));
            for (int i = 0; i < n(40); i++) {
                String session = "b2-" + i;
                lib.add(time(() -> m.acquire(session, SPEC)));
                m.destroy(session);
                Path dir = scratch.resolve("raw-" + i);
                String[] id = new String[1];
                api.add(timeChecked(() -> id[0] = raw.createAndStart(dir)));
                raw.remove(id[0]);
            }
        }
        report.coldAcquire = lib;
        report.section("B2 cold acquire", "Library ≤ 1.10× raw create + start.", List.of(lib, api),
                List.of(Report.goal("library / raw", lib, api, 1.10)));
    }

    // B3: the first exec after an idle reap (includes the resume) vs a cold acquire plus its first exec.
    private void resume() throws Exception {
        Samples resumed = new Samples("first exec after an idle reap (resume + exec)");
        Samples cold = new Samples("cold acquire + first exec");
        List<String> reaped = new CopyOnWriteArrayList<>();
        try (SandboxManager m = docker().idleTimeout(Duration.ofMillis(500)).reaperInterval(Duration.ofMillis(20))
                .listener(e -> {
                    if (e instanceof SandboxEvent.IdleReaped r) {
                        reaped.add(r.sessionId());
                    }
                }).build()) {
            for (int i = 0; i < n(30); i++) {
                String session = "b3-" + i;
                Sandbox s = m.acquire(session, SPEC);
                s.exec(ExecRequest.of("true"));
                // IdleReaped is sent once the old container is gone (SUSPENDED is recorded before the removal).
                while (!reaped.contains(session)) {
                    Thread.sleep(5);
                }
                resumed.add(time(() -> check(s.exec(ExecRequest.of("true")).exitCode())));
                String other = "b3-cold-" + i;
                cold.add(time(() -> check(m.acquire(other, SPEC).exec(ExecRequest.of("true")).exitCode())));
                m.destroy(session);
                m.destroy(other);
            }
        }
        report.section("B3 resume", "First exec after an idle reap ≤ 1.15× a cold acquire (both include one exec).",
                List.of(resumed, cold), List.of(Report.goal("resume / cold", resumed, cold, 1.15)));
    }

    // B4: acquire from a warm pool, once the pool exists.
    private void warmPool() throws Exception {
        Samples hit = new Samples("warm-pool acquire (hit)");
        Samples firstExec = new Samples("warm-pool acquire + first exec");
        try (SandboxManager m = docker().warmPool(WarmPool.of(SPEC, 2)).build()) {
            for (int i = 0; i < n(40); i++) {
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (m.stats().poolSize() == 0 && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
                String session = "b4-" + i;
                Sandbox[] s = new Sandbox[1];
                long t = time(() -> s[0] = m.acquire(session, SPEC));
                hit.add(t);
                firstExec.add(t + time(() -> check(s[0].exec(ExecRequest.of("true")).exitCode())));
                m.destroy(session);
            }
            report.note("B4 pool hits: " + m.stats().poolHits() + ", misses: " + m.stats().poolMisses());
        }
        List<Samples> rows = new ArrayList<>(List.of(hit, firstExec));
        if (report.coldAcquire != null) {
            rows.add(report.coldAcquire);
        }
        report.section("B4 warm-pool acquire", "Pool-hit acquire p50 ≤ 5 ms.", rows,
                List.of(Report.absolute("pool-hit acquire p50", hit, 5.0)));
    }

    static long usedHeap(MemoryMXBean memory) throws InterruptedException {
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(100);
        }
        return memory.getHeapMemoryUsage().getUsed();
    }

    static void check(int exitCode) {
        if (exitCode != 0) {
            throw new IllegalStateException("benchmark command failed with exit code " + exitCode);
        }
    }

    private static long time(Runnable r) {
        long t0 = System.nanoTime();
        r.run();
        return System.nanoTime() - t0;
    }

    static long timeChecked(ThrowingRunnable r) throws Exception {
        long t0 = System.nanoTime();
        r.run();
        return System.nanoTime() - t0;
    }

    static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.0f ms", nanos / 1e6);
    }

    @FunctionalInterface
    interface ThrowingRunnable {
        void run() throws Exception;
    }

    /** The system clock plus an offset the harness can move forward. */
    static final class JumpClock extends java.time.Clock {
        private volatile long offsetMillis;

        void jump(Duration d) {
            offsetMillis += d.toMillis();
        }

        @Override
        public Instant instant() {
            return Instant.now().plusMillis(offsetMillis);
        }

        @Override
        public long millis() {
            return System.currentTimeMillis() + offsetMillis;
        }

        @Override
        public java.time.ZoneId getZone() {
            return java.time.ZoneOffset.UTC;
        }

        @Override
        public java.time.Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }

    /** Machine facts for the report header. */
    static final class Machine {
        private Machine() {
        }

        static String describe() throws Exception {
            String cpu = Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                    .findFirst().map(l -> l.substring(l.indexOf(':') + 1).trim()).orElse("unknown CPU");
            long memKb = Files.readAllLines(Path.of("/proc/meminfo")).stream().filter(l -> l.startsWith("MemTotal"))
                    .map(l -> Long.parseLong(l.replaceAll("\\D", ""))).findFirst().orElse(0L);
            String docker = run(RawDocker.cli(), "version", "--format", "{{.Server.Version}} (API {{.Server.APIVersion}})");
            return String.format(Locale.ROOT, "%d cores (%s), %.1f GiB RAM, Linux %s, Docker %s, Java %s; load average at start %s; %s",
                    Runtime.getRuntime().availableProcessors(), cpu, memKb / 1048576.0, System.getProperty("os.version"),
                    docker.strip(), System.getProperty("java.version"), loadAverage(), Instant.now());
        }

        static String loadAverage() {
            try {
                return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
            } catch (Exception e) {
                return "?";
            }
        }

        private static String run(String... argv) throws Exception {
            Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            p.waitFor();
            return out;
        }
    }
}
