package dev.sandboxkit.benchmarks;

import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.testkit.FakeDriver;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * B5 and B6: the manager at scale. The reaper's idle cost and lateness over many tracked sessions, reaping many
 * real containers against one batched {@code docker rm -f}, and the manager's heap per idle session.
 */
final class ScaleBench {
    private final Report report;
    private final Path scratch;
    private final Supplier<SandboxManager.Builder> builders;
    private final SandboxSpec spec;
    private final boolean quick;

    ScaleBench(Report report, Path scratch, Supplier<SandboxManager.Builder> builders, SandboxSpec spec, boolean quick) {
        this.report = report;
        this.scratch = scratch;
        this.builders = builders;
        this.spec = spec;
        this.quick = quick;
    }

    // B5a: 10,000 tracked sessions (fake driver): idle CPU of the reaper and reap lateness.
    void reaperAtScale() throws Exception {
        int sessions = quick ? 2_000 : 10_000;
        Duration ttl = Duration.ofSeconds(15);
        List<SandboxEvent.IdleReaped> reaped = new CopyOnWriteArrayList<>();
        try (SandboxManager m = SandboxManager.builder().driver(new FakeDriver()).idleTimeout(ttl)
                .listener(e -> {
                    if (e instanceof SandboxEvent.IdleReaped r) {
                        reaped.add(r);
                    }
                }).build()) {
            for (int i = 0; i < sessions; i++) {
                m.acquire("s" + i, spec);
            }
            Thread.sleep(1000);
            long cpu0 = housekeeperCpuNanos();
            long wall0 = System.nanoTime();
            Thread.sleep(8000); // idle: every session waits for its TTL
            double cpuShare = (housekeeperCpuNanos() - cpu0) / (double) (System.nanoTime() - wall0);
            long deadline = System.nanoTime() + ttl.plusSeconds(30).toNanos();
            while (reaped.size() < sessions && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            double worstLateMs = reaped.stream().mapToLong(r -> r.idleFor().minus(ttl).toMillis()).max().orElse(-1);
            report.table("B5 reaper at scale (fake driver, " + sessions + " sessions, TTL " + ttl.toSeconds() + " s)",
                    "Idle cost < 1% of one core; each session reaped within TTL + 1 s.",
                    List.of(new String[] {"reaper + lease renewal CPU while idle", String.format(Locale.ROOT,
                                    "%.3f%% of one core", cpuShare * 100), cpuShare < 0.01 ? "met" : "missed"},
                            new String[] {"sessions reaped", reaped.size() + " / " + sessions,
                                    reaped.size() == sessions ? "met" : "missed"},
                            new String[] {"latest reap after TTL", String.format(Locale.ROOT, "%.0f ms", worstLateMs),
                                    worstLateMs >= 0 && worstLateMs <= 1000 ? "met" : "missed"}));
        }
    }

    private static long housekeeperCpuNanos() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long total = 0;
        for (ThreadInfo info : threads.dumpAllThreads(false, false)) {
            if (info.getThreadName().startsWith("sandboxkit-housekeeper")) {
                total += Math.max(0, threads.getThreadCpuTime(info.getThreadId()));
            }
        }
        return total;
    }

    // B5b: reaping 100 expired real containers vs one batched `docker rm -f` of 100. The sessions are made idle
    // together by moving the manager's clock past the TTL, so only the reaping itself is timed.
    void reapRealContainers(RawDocker raw) throws Exception {
        int count = quick ? 20 : 100;
        List<SandboxEvent.IdleReaped> reaped = new CopyOnWriteArrayList<>();
        long reapNanos;
        Duration ttl = Duration.ofHours(1);
        BenchmarkMain.JumpClock clock = new BenchmarkMain.JumpClock();
        try (SandboxManager m = builders.get().clock(clock).idleTimeout(ttl).reaperInterval(Duration.ofMillis(20))
                .listener(e -> {
                    if (e instanceof SandboxEvent.IdleReaped r) {
                        reaped.add(r);
                    }
                }).build()) {
            for (int i = 0; i < count; i++) {
                m.acquire("b5-" + i, spec);
            }
            long t0 = System.nanoTime();
            clock.jump(ttl.plusSeconds(1)); // every session is now idle past its TTL
            while (reaped.size() < count) {
                Thread.sleep(2);
            }
            reapNanos = System.nanoTime() - t0;
        }
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ids.add(raw.createAndStart(scratch.resolve("rm-" + i)));
        }
        long t0 = System.nanoTime();
        RawDocker.cliRemove(ids);
        long cliNanos = System.nanoTime() - t0;
        double ratio = reapNanos / (double) cliNanos;
        report.table("B5 reaping " + count + " expired real containers",
                "≤ 1.5× one batched `docker rm -f` of " + count + ".",
                List.of(new String[] {"reaper: all " + count + " idle past the TTL to the last one removed", BenchmarkMain.ms(reapNanos), ""},
                        new String[] {"`docker rm -f` of " + count + " ids, one CLI call", BenchmarkMain.ms(cliNanos), ""},
                        new String[] {"ratio", String.format(Locale.ROOT, "%.2f×", ratio), ratio <= 1.5 ? "met" : "missed"}));
    }

    // B6: manager heap per idle session (fake driver, in-memory store included).
    void memory() throws Exception {
        int sessions = quick ? 2_000 : 10_000;
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        try (SandboxManager m = SandboxManager.builder().driver(new FakeDriver()).idleTimeout(Duration.ofHours(1))
                .build()) {
            m.acquire("warm", spec);
            long before = BenchmarkMain.usedHeap(memory);
            for (int i = 0; i < sessions; i++) {
                m.acquire(String.format("chat-%08d", i), spec);
            }
            long after = BenchmarkMain.usedHeap(memory);
            double perSession = (after - before) / (double) sessions;
            report.table("B6 memory (" + sessions + " idle ACTIVE sessions, fake driver, in-memory store)",
                    "Manager heap per idle session ≤ 2 KB.",
                    List.<String[]>of(new String[] {"heap per idle session (engine entry + store record)",
                            String.format(Locale.ROOT, "%.0f bytes", perSession), perSession <= 2048 ? "met" : "missed"}));
        }
    }
}
