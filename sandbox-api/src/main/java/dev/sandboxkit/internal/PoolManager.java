package dev.sandboxkit.internal;

import dev.sandboxkit.EgressPolicy;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.WarmPool;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.ComputeDriver;
import dev.sandboxkit.spi.WorkspaceBackend;
import dev.sandboxkit.spi.SandboxLabels;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * One warm pool: pre-started sandboxes for one spec, each with its own slot workdir.
 *
 * <p>A slot's workdir is created like a session's, under a slot id that no session id can take (it
 * starts with {@code _}). At checkout the driver adopts it for the session ({@code adoptWorkspace}: the
 * Docker driver renames the host directory, which the running container's bind mount follows), so a
 * pooled session still gets its own durable workdir. A slot goes to exactly one session; it is never
 * returned, and refilling happens in the background on the manager's scheduler.
 */
final class PoolManager {
    private static final Logger log = LoggerFactory.getLogger(PoolManager.class);
    /** How slot ids begin: a slot's workdir keeps the slot id as its session label after a session adopts it. */
    static final String SLOT_PREFIX = "_pool.";
    private static final ExecRequest WARM_UP = ExecRequest.of("true").withTimeout(Duration.ofSeconds(30));
    /** How long a closing manager waits for slots that are still starting. */
    private static final long DRAIN_WAIT_NANOS = TimeUnit.SECONDS.toNanos(60);

    /** A started sandbox waiting for a session. */
    record Slot(String slotId, String sandboxId, String workspace, long startedAt, Map<String, String> attributes) {
    }

    private final ComputeDriver compute;
    private final WorkspaceBackend workspaces;
    private final ManagerIdentity identity;
    private final Clock clock;
    private final ScheduledExecutorService scheduler;
    private final ContainerSetup setup;
    private final Removals removals;
    private final Stats stats;
    private final Snapshots templates;
    private final BooleanSupplier managerClosed;
    private final WarmPool config;
    private final String fingerprint;
    private final LinkedBlockingDeque<Slot> idle = new LinkedBlockingDeque<>();
    private final AtomicInteger starting = new AtomicInteger();
    private final AtomicLong sequence = new AtomicLong();
    private volatile boolean closed;
    private final Egress egress;

    PoolManager(ComputeDriver compute, WorkspaceBackend workspaces, ManagerIdentity identity, Clock clock,
                ScheduledExecutorService scheduler, ContainerSetup setup, Removals removals, Stats stats,
                Snapshots templates, BooleanSupplier managerClosed, WarmPool config, String fingerprint, Egress egress) {
        this.compute = compute;
        this.workspaces = workspaces;
        this.identity = identity;
        this.clock = clock;
        this.scheduler = scheduler;
        this.setup = setup;
        this.removals = removals;
        this.stats = stats;
        this.templates = templates;
        this.managerClosed = managerClosed;
        this.config = config;
        this.fingerprint = fingerprint;
        this.egress = egress;
    }

    int size() {
        return idle.size();
    }

    /** Whether a slot with this container id is waiting here or being started (for the orphan sweep). */
    boolean owns(String sandboxId) {
        return idle.stream().anyMatch(s -> s.sandboxId().equals(sandboxId));
    }

    boolean isStarting() {
        return starting.get() > 0;
    }

    /**
     * Takes a started sandbox, or applies the exhaustion policy: null means "start cold".
     *
     * @throws SandboxAcquireException (retryable) under {@code FAIL_FAST}, or {@code WAIT} after the timeout
     */
    Slot checkout() {
        Slot slot = idle.pollFirst();
        if (slot != null) {
            replenishAsync();
            return slot;
        }
        stats.poolMisses.increment();
        replenishAsync();
        switch (config.whenEmpty()) {
            case FAIL_FAST -> throw new SandboxAcquireException("warm pool for " + config.spec().image()
                    + " is empty (policy FAIL_FAST)", null, true);
            case WAIT -> {
                try {
                    slot = idle.pollFirst(config.waitTimeout().toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new SandboxAcquireException("interrupted while waiting for the warm pool", e, true);
                }
                if (slot == null) {
                    throw new SandboxAcquireException("warm pool for " + config.spec().image() + " stayed empty for "
                            + config.waitTimeout() + " (policy WAIT)", null, true);
                }
                replenishAsync();
                return slot;
            }
            default -> {
                return null; // COLD_START
            }
        }
    }

    /** Schedules a refill up to the minimum size. */
    void replenishAsync() {
        if (closed || idle.size() + starting.get() >= config.minSize()) {
            return;
        }
        try {
            scheduler.execute(this::fill);
        } catch (RuntimeException rejected) {
            log.debug("Warm pool refill not scheduled: {}", rejected.toString());
        }
    }

    /** Starts sandboxes until the pool holds its minimum, never more than its maximum in flight. */
    void fill() {
        while (!closed && !managerClosed.getAsBoolean()) {
            int inFlight = starting.incrementAndGet();
            if (idle.size() + inFlight > config.minSize() || idle.size() + inFlight > config.maxSize()) {
                doneStarting();
                return;
            }
            try {
                Slot slot = startSlot();
                if (closed) {
                    discard(slot.sandboxId(), slot.workspace());
                    return;
                }
                idle.addLast(slot);
            } catch (RuntimeException e) {
                log.warn("Warm pool for {}: could not start a sandbox: {}", config.spec().image(), e.toString());
                return; // try again on the next checkout
            } finally {
                doneStarting();
            }
        }
    }

    private Slot startSlot() {
        String slotId = SLOT_PREFIX + fingerprint + "." + sequence.incrementAndGet() + "." + identity.instanceId();
        String workspace = workspaces.createWorkspace(slotId, config.spec());
        Map<String, String> labels = identity.labels(slotId, config.spec());
        labels.put(SandboxLabels.POOL, slotId);
        try {
            templates.seed(workspace, config.spec()); // a slot is handed out seeded, as a cold start would be
            String sandboxId = compute.create(new CreateRequest(slotId, config.spec(), workspace, labels));
            try {
                EgressPolicy policy = config.spec().egress();
                if (policy != null) {
                    egress.startSlot(slotId, sandboxId, policy); // for the post-create hook; a checkout restarts it
                }
                Map<String, String> attributes = setup.prepare(compute, slotId, sandboxId, config.spec(),
                        new java.util.HashMap<>(), policy != null);
                // One exec while the slot waits warms the exec path (Docker opens the command channel then), so
                // the first exec after a pool hit costs what any exec costs. Its exit code does not matter.
                compute.exec(sandboxId, WARM_UP);
                return new Slot(slotId, sandboxId, workspace, clock.millis(), attributes);
            } catch (RuntimeException setupFailed) {
                removals.removeQuietly(sandboxId);
                throw setupFailed;
            }
        } catch (RuntimeException e) {
            workspaces.deleteWorkspace(workspace);
            throw e;
        }
    }

    /** Removes a slot's sandbox and workdir; used for slots that cannot be handed out. */
    void discard(String sandboxId, String workspace) {
        removals.removeQuietly(sandboxId);
        try {
            workspaces.deleteWorkspace(workspace);
        } catch (RuntimeException e) {
            log.warn("Could not delete pool workdir {}: {}", workspace, e.toString());
        }
    }

    private void doneStarting() {
        if (starting.decrementAndGet() == 0) {
            synchronized (this) {
                notifyAll();
            }
        }
    }

    /**
     * Removes every waiting sandbox. Called when the manager closes. A slot still starting is removed by
     * {@link #fill} once it is up, so this waits for those first (up to a minute): otherwise a container
     * created during close would outlive the manager until an orphan sweep.
     */
    void drain() {
        closed = true;
        long deadline = System.nanoTime() + DRAIN_WAIT_NANOS;
        synchronized (this) {
            long left;
            while (starting.get() > 0 && (left = deadline - System.nanoTime()) > 0) {
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        if (starting.get() > 0) {
            log.warn("Warm pool for {}: a sandbox still starting after 60 s is left to the orphan sweep",
                    config.spec().image());
        }
        Slot slot;
        while ((slot = idle.pollFirst()) != null) {
            discard(slot.sandboxId(), slot.workspace());
        }
    }
}
