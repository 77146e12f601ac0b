package dev.sandboxkit.internal;

import dev.sandboxkit.EgressPolicy;
import dev.sandboxkit.EgressUsage;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ManagerStats;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxProcess;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.SnapshotId;
import dev.sandboxkit.SnapshotInfo;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.ComputeDriver;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.WorkspaceBackend;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The {@link SandboxManager} the builder returns: wires the parts together at start, each with what it uses, hands
 * each call to the part that owns it (the {@link LifecycleEngine} for the lifecycle, {@link WorkdirSteps} for
 * snapshot, restore, fork and archive, {@link LiveOperations} for what runs in a live sandbox, {@link Snapshots} and
 * the {@link Reconciler} for theirs) and shuts them down in order at close.
 */
final class ManagerFacade implements SandboxManager {
    private static final Logger log = LoggerFactory.getLogger(ManagerFacade.class);
    private static final AtomicInteger THREADS = new AtomicInteger();
    private static final AtomicInteger IO_THREADS = new AtomicInteger();

    // The driver's two halves: one object when a SandboxDriver is given, which closes both.
    private final ComputeDriver compute;
    private final WorkspaceBackend workspaces;
    private final SessionStore store;
    private final String instanceId;
    private final long idleMillis;
    private final Leases leases;
    private final ScheduledExecutorService scheduler;
    private final SessionRegistry sessions;
    private final Stats stats;
    private final ClosedFlag closed;
    private final WarmPools pools;
    private final LifecycleEngine engine;
    private final WorkdirSteps workdirs;
    private final Shutdown shutdown;
    private final LiveOperations live;
    private final Snapshots snapshots;
    private final PortForwards forwards;
    private final Housekeeper housekeeper;
    private final Reconciler reconciler;
    private final StoreIdentity storeIdentity;
    private final boolean ownsDriver;
    private final boolean ownsStore;
    private final boolean ownsScheduler;
    /** Runs forwards' accept loops and pumps, and archive uploads; ours to shut down unless the builder gave it. */
    private final Executor io;
    private final boolean ownsIo;
    private final Egress egress;

    private ManagerFacade(ManagerSettings s, ComputeDriver compute, WorkspaceBackend workspaces, boolean ownsDriver,
                          Clock clock, String instanceId, Path workspaceRoot) {
        this.compute = compute;
        this.workspaces = workspaces;
        this.instanceId = instanceId;
        this.ownsDriver = ownsDriver;
        this.ownsStore = s.store() == null;
        this.store = ownsStore ? SessionStore.inMemory() : s.store();
        SandboxConfig config = s.config();
        this.idleMillis = config.getIdleTimeout().toMillis();
        long leaseMillis = config.getLeaseDuration().toMillis();
        this.leases = new Leases(clock, leaseMillis);
        this.ownsScheduler = s.scheduler() == null;
        this.scheduler = ownsScheduler ? newScheduler() : s.scheduler();
        this.ownsIo = s.ioExecutor() == null;
        this.io = ownsIo ? newIoPool() : s.ioExecutor();
        this.sessions = new SessionRegistry();
        this.stats = new Stats();
        this.closed = new ClosedFlag(instanceId);
        this.forwards = new PortForwards(compute, sessions, clock, io);
        Events events = new Events(s.listeners());
        this.egress = new Egress(compute, io, scheduler, clock, s.egressResolver(), config, events);
        Removals removals = new Removals(compute, clock, sandboxId -> {
            forwards.closeFor(sandboxId);
            egress.containerGone(sandboxId);
        });
        this.storeIdentity = StoreIdentity.open(store, workspaceRoot, compute.name(),
                Instant.ofEpochMilli(clock.millis()));
        ManagerIdentity identity = new ManagerIdentity(instanceId, SessionIds.requireValidInstanceId(config.getFleet()),
                storeIdentity.id());
        SpecCodec specs = new SpecCodec();
        ContainerSetup setup = new ContainerSetup();
        this.snapshots = new Snapshots(workspaces, clock, identity);
        this.pools = WarmPools.of(s.warmPools(), specs, (pool, fingerprint) -> new PoolManager(compute, workspaces,
                identity, clock, scheduler, setup, removals, stats, snapshots, closed::isClosed, pool, fingerprint, egress));
        ProcessSupport processes = new ProcessSupport(compute, store, sessions, clock);
        Archives archives = new Archives(workspaces, store, clock, leases, instanceId, specs, io, s.archiveStore(),
                config.getArchiveAfter(), Path.of(System.getProperty("java.io.tmpdir"), "sandboxkit-archive-spool"));
        ContainerStarter starter = new ContainerStarter(compute, workspaces, store, clock, leases, identity, setup,
                snapshots, archives, pools, removals, stats, events, egress);
        SessionLocks locks = new SessionLocks(sessions, events);
        this.engine = new LifecycleEngine(workspaces, store, clock, leases, instanceId, idleMillis, sessions, locks,
                closed, starter, new SessionDestroyer(workspaces, store, clock, leases, instanceId, removals, processes,
                archives, snapshots, stats, events), specs, archives, processes, removals, stats, events, egress);
        this.workdirs = new WorkdirSteps(workspaces, store, specs, snapshots, archives, locks, closed, engine);
        this.shutdown = new Shutdown(scheduler, sessions, pools, engine);
        this.live = new LiveOperations(compute, workspaces, store, sessions, clock, config.fileLimits(), events,
                processes, forwards, engine);
        long reaperMillis = config.getReaperInterval() != null ? config.getReaperInterval().toMillis()
                : Math.max(10, Math.min(500, idleMillis / 4));
        long reconcileMillis = config.getReconcileInterval().toMillis();
        this.reconciler = new Reconciler(compute, workspaces, store, clock, leases, identity, sessions, removals, stats,
                events, engine, pools.all(), snapshots, storeIdentity, config.getOrphanGrace());
        LeaseRenewal leaseRenewal = new LeaseRenewal(store, clock, leases, instanceId, sessions, locks, forwards,
                closed);
        this.housekeeper = new Housekeeper(scheduler, clock, sessions, idleMillis, engine, leaseRenewal, reconciler,
                workdirs::archiveIdle, reaperMillis, Math.max(10, leaseMillis / 3), reconcileMillis,
                archives.enabled() ? archives.passMillis(reconcileMillis) : 0);
    }

    /**
     * Resolves defaults, creates or adopts the driver, checks the backend answers and starts housekeeping:
     * the reaper, lease renewal, a first orphan sweep and the warm pools' first fill.
     *
     * @param s the builder's choices
     * @return the running manager
     */
    static SandboxManager start(ManagerSettings s) {
        Clock clock = s.clock() != null ? s.clock() : Clock.systemUTC();
        SandboxConfig config = s.config();
        String instanceId = config.getInstanceId() != null ? SessionIds.requireValidInstanceId(config.getInstanceId())
                : "m-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        DriverContext context = new DriverContext(instanceId, config.getWorkspaceRoot().toAbsolutePath().normalize(),
                clock, config.getDriverSettings());
        boolean ownsDriver = s.compute() == null;
        ComputeDriver compute;
        WorkspaceBackend workspaces;
        if (ownsDriver) {
            SandboxDriver created = DriverResolver.create(config.getDriver(), context,
                    Thread.currentThread().getContextClassLoader());
            compute = created;
            workspaces = created;
        } else {
            compute = s.compute();
            workspaces = Objects.requireNonNull(s.workspaces(), "workspaces");
        }
        ManagerFacade manager = null;
        try {
            compute.ping();
            manager = new ManagerFacade(s, compute, workspaces, ownsDriver, clock, instanceId,
                    context.workspaceRoot());
            manager.announcePresence();
            manager.housekeeper.start();
            manager.pools.fill();
            log.info("Sandbox manager {} started: driver={}, idleTimeout={}, workspaceRoot={}", instanceId,
                    compute.name(), manager.idleTimeout(), context.workspaceRoot());
            return manager;
        } catch (RuntimeException e) {
            if (manager != null) {
                manager.close();
            } else if (ownsDriver) {
                closeQuietly(compute);
            }
            throw e;
        }
    }

    private static ScheduledExecutorService newScheduler() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(2, r -> {
            Thread t = new Thread(r, "sandboxkit-housekeeper-" + THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }

    /** Grows with the open forwards and connections (each needs its threads), shrinks when they end. */
    private static ExecutorService newIoPool() {
        return new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
            Thread t = new Thread(r, "sandboxkit-io-" + IO_THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Writes this manager's presence record: other managers sharing the store treat containers labelled
     * with this owner as live while its lease is renewed, even when it holds no session yet (warm pools).
     */
    private void announcePresence() {
        Instant now = leases.now();
        store.insert(SessionRecord.builder().sessionId(presenceId()).driver(compute.name())
                .state(SessionState.SUSPENDED).sandboxId(null).workspace("-").spec("-").specFingerprint("-")
                .ephemeral(false).createdAt(now).lastActivity(now).sandboxStartedAt(null).owner(instanceId)
                .leaseExpiry(leases.lease(now)).version(1).attributes(Map.of()).build());
    }

    private String presenceId() {
        return LifecycleEngine.PRESENCE_PREFIX + instanceId;
    }

    // ---------------------------------------------------------------- lifecycle (LifecycleEngine)

    @Override
    public Sandbox acquire(String sessionId, SandboxSpec spec) {
        return new ManagedSandbox(engine, live, sessionId, engine.acquire(sessionId, spec));
    }

    @Override
    public void keepAlive(String sessionId) {
        live.keepAlive(sessionId, null);
    }

    @Override
    public Optional<SessionInfo> session(String sessionId) {
        return engine.session(sessionId);
    }

    @Override
    public void updateEgress(String sessionId, @Nullable EgressPolicy policy) {
        engine.updateEgress(sessionId, policy);
    }

    @Override
    public EgressUsage egressUsage(String sessionId) {
        return egress.usage(sessionId);
    }

    @Override
    public void release(String sessionId) {
        engine.release(sessionId, null);
    }

    @Override
    public void destroy(String sessionId) {
        engine.destroy(sessionId, null);
    }

    @Override
    public SnapshotId snapshot(String sessionId) {
        return workdirs.snapshot(sessionId);
    }

    @Override
    public void restore(String sessionId, SnapshotId snapshot) {
        workdirs.restore(sessionId, snapshot);
    }

    @Override
    public Sandbox fork(String sessionId, String newSessionId) {
        return new ManagedSandbox(engine, live, newSessionId, workdirs.fork(sessionId, newSessionId));
    }

    @Override
    public int archiveIdle() {
        return workdirs.archiveIdle();
    }

    // ---------------------------------------------------------------- live sandboxes (LiveOperations)

    @Override
    public ExecResult exec(String sessionId, ExecRequest request) {
        return live.exec(sessionId, request, null);
    }

    @Override
    public SandboxFiles files(String sessionId) {
        SessionIds.requireValid(sessionId);
        return live.files(sessionId, null);
    }

    @Override
    public SandboxProcess process(String sessionId, String processId) {
        return live.process(sessionId, processId);
    }

    @Override
    public List<SandboxProcess> processes(String sessionId) {
        return live.processes(sessionId);
    }

    // ---------------------------------------------------------------- snapshots held, sweep, stats

    @Override
    public List<SnapshotInfo> snapshots(String sessionId) {
        Objects.requireNonNull(sessionId, "sessionId");
        return snapshots.of(sessionId);
    }

    @Override
    public void keepSnapshot(SnapshotId snapshot, boolean keep) {
        snapshots.keep(Objects.requireNonNull(snapshot, "snapshot"), keep);
    }

    @Override
    public void deleteSnapshot(SnapshotId snapshot) {
        snapshots.delete(Objects.requireNonNull(snapshot, "snapshot"));
    }

    @Override
    public int reconcile() {
        engine.checkOpen();
        return reconciler.run();
    }

    @Override
    public ManagerStats stats() {
        long[] held = snapshots.totals();
        return stats.snapshot(sessions.activeCount(), pools.size(), held[0], held[1], egress);
    }

    @Override
    public void ping() {
        engine.checkOpen();
        compute.ping();
    }

    @Override
    public Duration idleTimeout() {
        return Duration.ofMillis(idleMillis);
    }

    @Override
    public String instanceId() {
        return instanceId;
    }

    @Override
    public String driverName() {
        return compute.name();
    }

    // ---------------------------------------------------------------- close

    @Override
    public void close() {
        if (!closed.markClosed()) {
            return;
        }
        housekeeper.stop();
        forwards.closeAll();
        shutdown.suspendAll();
        // Their containers are gone by now (or could not be removed): release their connections either way.
        live.closeTerminals();
        egress.close();
        if (!Thread.currentThread().isInterrupted()) {
            reconciler.closing();
        }
        try {
            store.find(presenceId()).ifPresent(r -> store.delete(r.sessionId(), r.version()));
        } catch (RuntimeException storeDown) {
            log.debug("Could not remove the presence record: {}", storeDown.toString());
        }
        storeIdentity.close();
        if (ownsScheduler) {
            scheduler.shutdownNow();
        }
        if (ownsIo) {
            ((ExecutorService) io).shutdownNow();
        }
        if (ownsDriver) {
            closeQuietly(compute);
        }
        if (ownsStore) {
            closeQuietly(store);
        }
        log.info("Sandbox manager {} closed", instanceId);
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            log.warn("Error while closing {}: {}", c, e.toString());
        }
    }
}
