package dev.sandboxkit.testkit;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A deterministic {@link ScheduledExecutorService} driven by a {@link ManualClock}: delayed and periodic
 * tasks run only inside {@link #advance(Duration)} or {@link #runDueTasks()}, on the calling thread, in
 * time order. Tasks submitted for immediate execution run at once on the submitting thread.
 *
 * <pre>{@code
 * ManualClock clock = new ManualClock();
 * ManualScheduler scheduler = new ManualScheduler(clock);
 * SandboxManager manager = SandboxManager.builder().driver(new FakeDriver())
 *         .clock(clock).scheduler(scheduler).idleTimeout(Duration.ofMinutes(30)).build();
 * scheduler.advance(Duration.ofMinutes(31)); // the reaper runs; idle sandboxes are reaped
 * }</pre>
 */
public final class ManualScheduler extends AbstractExecutorService implements ScheduledExecutorService {
    private final ManualClock clock;
    private final PriorityQueue<Task<?>> queue = new PriorityQueue<>();
    private final AtomicLong sequence = new AtomicLong();
    private volatile boolean shutdown;

    /**
     * Creates a scheduler on the given clock.
     *
     * @param clock the clock it advances
     */
    public ManualScheduler(ManualClock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /**
     * The clock this scheduler moves.
     *
     * @return the clock
     */
    public ManualClock clock() {
        return clock;
    }

    /**
     * Moves the clock forward in steps, running each task when its time comes.
     *
     * @param amount how far to move
     */
    public void advance(Duration amount) {
        Instant end = clock.instant().plus(amount);
        while (true) {
            Task<?> next;
            synchronized (this) {
                next = queue.peek();
                if (next == null || next.due.isAfter(end)) {
                    break;
                }
                queue.poll();
            }
            if (next.due.isAfter(clock.instant())) {
                clock.set(next.due);
            }
            next.runOnce();
        }
        if (end.isAfter(clock.instant())) {
            clock.set(end);
        }
    }

    /** Runs every task that is due at the clock's current time. */
    public void runDueTasks() {
        advance(Duration.ZERO);
    }

    /**
     * Number of tasks waiting for their time.
     *
     * @return pending task count
     */
    public synchronized int pendingTasks() {
        return queue.size();
    }

    @Override
    public void execute(Runnable command) {
        if (shutdown) {
            throw new java.util.concurrent.RejectedExecutionException("scheduler is shut down");
        }
        command.run();
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        return enqueue(new Task<>(java.util.concurrent.Executors.callable(command, null), delay(delay, unit), 0));
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        return enqueue(new Task<>(callable, delay(delay, unit), 0));
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        return enqueue(new Task<>(java.util.concurrent.Executors.callable(command, null), delay(initialDelay, unit),
                unit.toNanos(period)));
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        return scheduleAtFixedRate(command, initialDelay, delay, unit);
    }

    @Override
    public void shutdown() {
        shutdown = true;
        synchronized (this) {
            queue.clear();
        }
    }

    @Override
    public List<Runnable> shutdownNow() {
        shutdown();
        return new ArrayList<>();
    }

    @Override
    public boolean isShutdown() {
        return shutdown;
    }

    @Override
    public boolean isTerminated() {
        return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return shutdown;
    }

    private Instant delay(long amount, TimeUnit unit) {
        return clock.instant().plusNanos(Math.max(0, unit.toNanos(amount)));
    }

    private synchronized <V> Task<V> enqueue(Task<V> task) {
        if (shutdown) {
            throw new java.util.concurrent.RejectedExecutionException("scheduler is shut down");
        }
        queue.add(task);
        return task;
    }

    private final class Task<V> extends FutureTask<V> implements ScheduledFuture<V> {
        private final long periodNanos;
        private final long seq = sequence.incrementAndGet();
        private Instant due;

        Task(Callable<V> callable, Instant due, long periodNanos) {
            super(callable);
            this.due = due;
            this.periodNanos = periodNanos;
        }

        void runOnce() {
            if (periodNanos == 0) {
                run();
                return;
            }
            if (runAndReset() && !shutdown) {
                due = due.plusNanos(periodNanos);
                enqueue(this);
            }
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            synchronized (ManualScheduler.this) {
                queue.remove(this);
            }
            return super.cancel(mayInterruptIfRunning);
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(Duration.between(clock.instant(), due).toNanos(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            Task<?> o = (Task<?>) other;
            int c = due.compareTo(o.due);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }
}
