package dev.sandboxkit.benchmarks;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SnapshotId;
import dev.sandboxkit.WorkspaceTemplate;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * B13: snapshot and restore of a workdir of many small files, on the host-directory and the volume backend,
 * against {@code cp -a} of the same tree on the host. Interleaved, the order alternating every round.
 */
final class SnapshotBench {
    private final Report report;
    private final Path scratch;
    private final Supplier<SandboxManager.Builder> builders;
    private final SandboxSpec spec;
    private final int files;
    private final int rounds;

    SnapshotBench(Report report, Path scratch, Supplier<SandboxManager.Builder> builders, SandboxSpec spec,
            boolean quick) {
        this.report = report;
        this.scratch = scratch;
        this.builders = builders;
        this.spec = spec;
        this.files = quick ? 1_280 : 12_800;
        this.rounds = quick ? 3 : 5;
    }

    void run() throws Exception {
        String load0 = BenchmarkMain.Machine.loadAverage();
        Samples hostSnap = new Samples("host directory: manager.snapshot() of a live session");
        Samples hostRestore = new Samples("host directory: manager.restore() (container removed, workdir replaced)");
        Samples hostAside = new Samples("host directory: restore until the old tree's background deletion ended");
        Samples volSnap = new Samples("volume: manager.snapshot() of a live session");
        Samples volRestore = new Samples("volume: manager.restore()");
        Samples floor = new Samples("floor: `cp -a` of the same tree on the host");
        Samples rmFloor = new Samples("floor: `rm -rf` of the same tree on the host, once on disk (`sync`)");
        Path source = scratch.resolve("b13-src");
        ArchiveTierBench.writeTree(source, files);
        SandboxSpec volumeSpec = spec.toBuilder().template(WorkspaceTemplate.directory(source)).build();
        try (SandboxManager h = builders.get().build();
             SandboxManager v = builders.get().driverProperty("docker.workdirs", "volume").build()) {
            h.acquire("b13-host", spec);
            Path workdir = Path.of(h.session("b13-host").orElseThrow().workspace());
            Path trash = workdir.getParent().resolve(".trash");
            ArchiveTierBench.writeTree(workdir, files);
            v.acquire("b13-volume", volumeSpec);
            countInside(v, "b13-volume");
            for (int round = -1; round < rounds; round++) { // round -1 warms up and is not counted
                boolean count = round >= 0;
                Path copy = scratch.resolve("b13-copy");
                BenchmarkMain.ThrowingRunnable lib = () -> {
                    h.acquire("b13-host", spec); // live again after the last restore
                    SnapshotId[] id = new SnapshotId[1];
                    long t = BenchmarkMain.timeChecked(() -> id[0] = h.snapshot("b13-host"));
                    long r0 = System.nanoTime();
                    long r = BenchmarkMain.timeChecked(() -> h.restore("b13-host", id[0]));
                    awaitEmpty(trash); // also keeps the deletion out of the next measurement
                    long aside = System.nanoTime() - r0;
                    ArchiveTierBench.check(workdir, files);
                    h.deleteSnapshot(id[0]);
                    v.acquire("b13-volume", volumeSpec);
                    long tv = BenchmarkMain.timeChecked(() -> id[0] = v.snapshot("b13-volume"));
                    long rv = BenchmarkMain.timeChecked(() -> v.restore("b13-volume", id[0]));
                    v.deleteSnapshot(id[0]);
                    if (count) {
                        hostSnap.add(t);
                        hostRestore.add(r);
                        hostAside.add(aside);
                        volSnap.add(tv);
                        volRestore.add(rv);
                    }
                };
                BenchmarkMain.ThrowingRunnable cp = () -> {
                    long t = BenchmarkMain.timeChecked(() -> ArchiveTierBench.sh("cp -a '" + source + "' '" + copy + "'"));
                    ArchiveTierBench.check(copy, files);
                    // On disk first, as a workdir's old tree is by the time it is restored over: deleting files
                    // whose blocks were never written is far cheaper.
                    ArchiveTierBench.sh("sync");
                    long rm = BenchmarkMain.timeChecked(() -> ArchiveTierBench.sh("rm -rf '" + copy + "'"));
                    if (count) {
                        floor.add(t);
                        rmFloor.add(rm);
                    }
                };
                ArchiveTierBench.alternate(round, lib, cp);
            }
            countInside(v, "b13-volume"); // the restored volume holds the whole tree
            h.destroy("b13-host");
            v.destroy("b13-volume");
        } finally {
            ArchiveTierBench.deleteTree(source);
        }
        report.note(String.format(Locale.ROOT, "B13: the B11 tree (%d files of 8 KiB, %d MiB); a restore includes "
                + "removing the session's container (the next call starts a new one, not timed) and setting the old "
                + "tree aside, which a background thread deletes (the row after it waits for that). Snapshots are full "
                + "copies (a hard-link farm would let the sandbox change a snapshot by writing in place): the host "
                + "backend copies by descriptors in this JVM, the volume backend streams a tar between two volumes "
                + "through the engine.", files, files * 8 / 1024));
        report.section("B13 snapshot and restore: " + files + " small files", "Host-directory snapshot and restore "
                        + "≤ 1.2× `cp -a` of the same tree (full copies, as cheap as the plain one). "
                        + BenchmarkMain.loadText(load0),
                List.of(hostSnap, floor, hostRestore, hostAside, rmFloor, volSnap, volRestore),
                List.of(Report.goal("host snapshot / cp -a", hostSnap, floor, 1.2),
                        Report.goal("host restore / cp -a", hostRestore, floor, 1.2)));
    }

    /** Until the restore's background deletion has emptied the trash (see the Docker driver's Trash). */
    private static void awaitEmpty(Path trash) throws Exception {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MINUTES.toNanos(5);
        while (true) {
            try (java.util.stream.Stream<Path> bins = java.nio.file.Files.list(trash)) {
                if (bins.findAny().isEmpty()) {
                    return;
                }
            } catch (java.nio.file.NoSuchFileException none) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("B13: " + trash + " not emptied within 5 minutes");
            }
            Thread.sleep(20);
        }
    }

    /** Checks from inside the sandbox that the volume holds the whole tree. */
    private void countInside(SandboxManager m, String id) {
        ExecResult r = m.exec(id, ExecRequest.shell("find /workspace -type f | wc -l"));
        if (r.exitCode() != 0 || Integer.parseInt(r.stdout().trim()) != files) {
            throw new IllegalStateException("B13: the volume holds " + r.stdout().trim() + " files, expected " + files);
        }
    }
}
