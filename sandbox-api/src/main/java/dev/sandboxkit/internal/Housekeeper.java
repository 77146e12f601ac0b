package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The in-process reaper and lease keeper, run on the manager's scheduler.
 *
 * <p>The reaper pass is a lock-free scan over the sessions this manager holds (a few microseconds per
 * thousand sessions); each idle one is reaped in its own task, so removals run in parallel on the
 * scheduler's threads and one slow removal never delays the others. The lease pass is {@link LeaseRenewal}'s.
 */
final class Housekeeper {
    private static final Logger log = LoggerFactory.getLogger(Housekeeper.class);

    private final ScheduledExecutorService scheduler;
    private final Clock clock;
    private final SessionRegistry sessions;
    private final long idleMillis;
    private final LifecycleActions engine;
    private final LeaseRenewal leaseRenewal;
    private final Reconciler reconciler;
    private final Runnable archivePass;
    private final long reaperMillis;
    private final long heartbeatMillis;
    private final long reconcileMillis;
    private final long archiveMillis;
    private final List<ScheduledFuture<?>> tasks = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Passes running now; close() waits for them so that none touches a closed driver or store. */
    private final java.util.concurrent.atomic.AtomicInteger running = new java.util.concurrent.atomic.AtomicInteger();
    private volatile boolean stopped;

    /** @param archivePass one archive pass, run every {@code archiveMillis} if that is positive */
    Housekeeper(ScheduledExecutorService scheduler, Clock clock, SessionRegistry sessions, long idleMillis,
                LifecycleActions engine, LeaseRenewal leaseRenewal, Reconciler reconciler, Runnable archivePass,
                long reaperMillis, long heartbeatMillis, long reconcileMillis, long archiveMillis) {
        this.scheduler = scheduler;
        this.clock = clock;
        this.sessions = sessions;
        this.idleMillis = idleMillis;
        this.engine = engine;
        this.leaseRenewal = leaseRenewal;
        this.reconciler = reconciler;
        this.archivePass = archivePass;
        this.reaperMillis = reaperMillis;
        this.heartbeatMillis = heartbeatMillis;
        this.reconcileMillis = reconcileMillis;
        this.archiveMillis = archiveMillis;
    }

    void start() {
        tasks.add(scheduler.scheduleWithFixedDelay(guard("reaper", this::reapPass), reaperMillis, reaperMillis,
                TimeUnit.MILLISECONDS));
        tasks.add(scheduler.scheduleWithFixedDelay(guard("lease renewal", leaseRenewal::renew),
                heartbeatMillis, heartbeatMillis, TimeUnit.MILLISECONDS));
        // The first sweep runs at once: orphans of a crashed predecessor go as soon as a manager starts.
        tasks.add(scheduler.scheduleWithFixedDelay(guard("orphan sweep", reconciler::run), 0, reconcileMillis,
                TimeUnit.MILLISECONDS));
        if (archiveMillis > 0) {
            tasks.add(scheduler.scheduleWithFixedDelay(guard("archive", archivePass), archiveMillis,
                    archiveMillis, TimeUnit.MILLISECONDS));
        }
    }

    /** Cancels the periodic passes and waits (bounded) for any that is running to finish. */
    void stop() {
        stopped = true;
        tasks.forEach(t -> t.cancel(false));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (running.get() > 0 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * Queues a reap for every session idle past the TTL, and a kill for every one past its maximum
     * lifetime. Runs on a scheduler thread.
     */
    void reapPass() {
        long now = clock.millis();
        for (SessionEntry e : sessions.all()) {
            if (!e.reapQueued && (e.idleFor(now, idleMillis) || e.outlived(now)) && e.mayRetryStop(now)) {
                e.reapQueued = true;
                scheduler.execute(guard("reap", () -> engine.reapIfIdle(e)));
            }
        }
    }

    private Runnable guard(String what, Runnable task) {
        return () -> {
            running.incrementAndGet();
            try {
                if (stopped) {
                    return; // queued before close(): the driver may already be gone
                }
                task.run();
            } catch (SandboxException e) {
                // Expected while the backend or store is down: one line, and the next pass retries.
                log.warn("sandboxkit {} pass failed: {}", what, e.toString());
            } catch (RuntimeException | Error e) {
                // A periodic task that throws is never run again: log and carry on.
                log.error("sandboxkit {} pass failed", what, e);
            } finally {
                running.decrementAndGet();
            }
        };
    }
}
