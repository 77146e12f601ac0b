package dev.sandboxkit.internal;

import dev.sandboxkit.ManagerStats;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/** The manager's counters; lock-free, read into a {@link ManagerStats} snapshot. */
final class Stats {
    final LongAdder created = new LongAdder();
    final LongAdder resumed = new LongAdder();
    final LongAdder idleReaped = new LongAdder();
    final LongAdder lifetimeKilled = new LongAdder();
    final LongAdder destroyed = new LongAdder();
    final LongAdder orphansRemoved = new LongAdder();
    final LongAdder poolHits = new LongAdder();
    final LongAdder poolMisses = new LongAdder();
    /** Sessions this manager suspended and has not resumed or destroyed since (a local view). */
    final AtomicLong suspended = new AtomicLong();

    void suspendedOne() {
        suspended.incrementAndGet();
    }

    void resumedOne() {
        resumed.increment();
        suspended.updateAndGet(n -> Math.max(0, n - 1));
    }

    ManagerStats snapshot(long active, long poolSize, long snapshots, long snapshotBytes, Egress egress) {
        return ManagerStats.builder().active(active).suspended(suspended.get()).created(created.sum())
                .resumed(resumed.sum()).idleReaped(idleReaped.sum()).lifetimeKilled(lifetimeKilled.sum())
                .destroyed(destroyed.sum()).orphansRemoved(orphansRemoved.sum()).poolHits(poolHits.sum())
                .poolMisses(poolMisses.sum()).poolSize(poolSize).snapshots(snapshots).snapshotBytes(snapshotBytes)
                .egressAllowed(egress.allowed.sum()).egressDenied(egress.denied.sum())
                .egressBytesIn(egress.bytesIn.sum()).egressBytesOut(egress.bytesOut.sum()).build();
    }
}
