package dev.sandboxkit.testsupport;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * A manager's scheduler for real-time tests ({@code SandboxManager.Builder.scheduler}) that counts the passes of its
 * periodic tasks (reaper, lease renewal, orphan sweep, archive pass) and tracks the tasks they queue (a reap, a pool
 * fill). A test that asserts something did <em>not</em> happen first waits for {@link #awaitPasses passes}, so it
 * cannot pass just because a loaded machine gave the manager no chance yet.
 *
 * <p>Two named daemon threads, as the manager's own scheduler. The manager does not shut a scheduler it was given
 * down: {@link #close()} does.
 */
public final class HousekeepingScheduler extends ScheduledThreadPoolExecutor implements AutoCloseable {
    private final List<Periodic> periodic = new CopyOnWriteArrayList<>();
    private final Map<Future<?>, Long> oneOffs = new ConcurrentHashMap<>();

    /**
     * A scheduler whose threads are named {@code name-N}.
     *
     * @param name the thread names' prefix
     */
    public HousekeepingScheduler(String name) {
        super(2, daemonThreads(name));
        setRemoveOnCancelPolicy(true);
    }

    private static java.util.concurrent.ThreadFactory daemonThreads(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** One periodic task: runs never overlap, so counts of started and finished runs say which ran after a mark. */
    private static final class Periodic {
        final String what;
        final long periodNanos;
        final AtomicLong started = new AtomicLong();
        final AtomicLong finished = new AtomicLong();
        volatile Future<?> future;

        Periodic(long period, TimeUnit unit) {
            this.what = "every " + unit.toMillis(period) + " ms";
            this.periodNanos = unit.toNanos(period);
        }

        Runnable wrap(Runnable command) {
            return () -> {
                started.incrementAndGet();
                try {
                    command.run();
                } finally {
                    finished.incrementAndGet();
                }
            };
        }

        boolean live() {
            return future == null || !future.isCancelled();
        }
    }

    /** Where every periodic task stood at one moment. */
    public static final class Mark {
        private final Map<Periodic, Long> started;

        private Mark(Map<Periodic, Long> started) {
            this.started = started;
        }
    }

    /**
     * Where every periodic task stands now.
     *
     * @return the mark to pass to {@link #ranSince}
     */
    public Mark mark() {
        return new Mark(periodic.stream().collect(Collectors.toMap(p -> p, p -> p.started.get())));
    }

    /**
     * Whether every periodic task has run {@code passes} whole passes that started after {@code mark}, and every task
     * that is due (what those passes queued) has finished.
     *
     * @param mark taken before
     * @param passes whole passes of each periodic task
     * @return true once they have
     */
    public boolean ranSince(Mark mark, int passes) {
        return ranSince(mark, passes, null);
    }

    /**
     * As {@link #ranSince(Mark, int)}, counting only the periodic tasks that run every {@code every} (the reaper's
     * interval, say), so a test need not wait for a slow task it does not depend on.
     *
     * @param mark taken before
     * @param passes whole passes of each such task
     * @param every the interval of the tasks to count
     * @return true once they have
     * @throws AssertionError if no periodic task runs every {@code every}
     */
    public boolean ranSince(Mark mark, int passes, Duration every) {
        if (every != null && periodic.stream().noneMatch(p -> p.periodNanos == every.toNanos())) {
            throw new AssertionError("no periodic task runs every " + every + ": " + progress(mark));
        }
        for (Periodic p : periodic) {
            if (every != null && p.periodNanos != every.toNanos()) {
                continue;
            }
            if (p.live() && p.finished.get() < mark.started.getOrDefault(p, 0L) + passes) {
                return false;
            }
        }
        long now = System.nanoTime();
        oneOffs.keySet().removeIf(Future::isDone);
        return oneOffs.values().stream().noneMatch(due -> due - now <= 0);
    }

    /**
     * Waits until every periodic task has run {@code passes} whole passes from now on, and what they queued has run.
     *
     * @param passes whole passes of each periodic task
     * @param deadline how long to wait at most
     * @throws AssertionError if the deadline passes first, naming the passes counted
     */
    public void awaitPasses(int passes, Duration deadline) {
        Mark mark = mark();
        Await.until(deadline, () -> ranSince(mark, passes), () -> "the manager's housekeeping did not run " + passes
                + " passes: " + progress(mark));
    }

    /**
     * Waits until every periodic task that runs every {@code every} has run {@code passes} whole passes from now on,
     * and what was queued meanwhile has run.
     *
     * @param passes whole passes of each such task
     * @param every the interval of the tasks to count (the reaper's, say)
     * @param deadline how long to wait at most
     * @throws AssertionError if the deadline passes first, naming the passes counted
     */
    public void awaitPasses(int passes, Duration every, Duration deadline) {
        Mark mark = mark();
        Await.until(deadline, () -> ranSince(mark, passes, every), () -> "the manager's tasks every " + every
                + " did not run " + passes + " passes: " + progress(mark));
    }

    /**
     * How many passes each periodic task has finished since {@code mark}, for a failure message.
     *
     * @param mark taken before
     * @return a short description
     */
    public String progress(Mark mark) {
        return periodic.stream().filter(Periodic::live)
                .map(p -> p.what + ": " + (p.finished.get() - mark.started.getOrDefault(p, 0L)))
                .collect(Collectors.joining(", ", "passes finished since the mark (", ")"))
                + ", tasks due and not finished: " + oneOffs.entrySet().stream()
                .filter(e -> !e.getKey().isDone() && e.getValue() - System.nanoTime() <= 0).count();
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        Periodic p = new Periodic(delay, unit);
        periodic.add(p);
        ScheduledFuture<?> f = super.scheduleWithFixedDelay(p.wrap(command), initialDelay, delay, unit);
        p.future = f;
        return f;
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        Periodic p = new Periodic(period, unit);
        periodic.add(p);
        ScheduledFuture<?> f = super.scheduleAtFixedRate(p.wrap(command), initialDelay, period, unit);
        p.future = f;
        return f;
    }

    // execute() and submit() come here too (ScheduledThreadPoolExecutor schedules them with no delay).
    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        long due = System.nanoTime() + unit.toNanos(delay);
        ScheduledFuture<?> f = super.schedule(command, delay, unit);
        oneOffs.put(f, due);
        return f;
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        long due = System.nanoTime() + unit.toNanos(delay);
        ScheduledFuture<V> f = super.schedule(callable, delay, unit);
        oneOffs.put(f, due);
        return f;
    }

    /** Stops the threads (the manager using this scheduler should be closed first). */
    @Override
    public void close() {
        shutdownNow();
        try {
            awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
