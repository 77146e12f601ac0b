package dev.sandboxkit.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Close's parallel part: suspends every session the manager holds and drains the warm pools, each in its own
 * task on the scheduler, so that one slow removal does not hold up the others.
 */
final class Shutdown {
    private static final Logger log = LoggerFactory.getLogger(Shutdown.class);

    private final ScheduledExecutorService scheduler;
    private final SessionRegistry sessions;
    private final WarmPools pools;
    private final LifecycleEngine engine;

    Shutdown(ScheduledExecutorService scheduler, SessionRegistry sessions, WarmPools pools, LifecycleEngine engine) {
        this.scheduler = scheduler;
        this.sessions = sessions;
        this.pools = pools;
        this.engine = engine;
    }

    /**
     * Suspends every session held (each under its lock) and drains the warm pools, in parallel on the scheduler,
     * waiting up to a minute for each: the manager is closing.
     */
    void suspendAll() {
        List<Future<?>> stops = new ArrayList<>();
        for (SessionEntry e : sessions.all()) {
            stops.add(submitOrRun(() -> engine.suspendForClose(e)));
        }
        for (PoolManager pool : pools.all()) {
            stops.add(submitOrRun(pool::drain));
        }
        for (Future<?> f : stops) {
            try {
                f.get(60, TimeUnit.SECONDS);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                break;
            } catch (ExecutionException | TimeoutException ex) {
                log.warn("Could not suspend a session while closing: {}", ex.toString());
            }
        }
    }

    /**
     * Runs close()'s work on the scheduler, in parallel; on the calling thread if the scheduler no longer takes
     * tasks (a caller's scheduler shut down before close): close() must finish its work either way.
     */
    private Future<?> submitOrRun(Runnable task) {
        try {
            return scheduler.submit(task);
        } catch (RejectedExecutionException shutDown) {
            FutureTask<Void> inline = new FutureTask<>(task, null);
            inline.run();
            return inline;
        }
    }
}
