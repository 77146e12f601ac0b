package dev.sandboxkit.internal;

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
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
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
 * The {@link SandboxManager} the builder returns: wires the parts together at start, hands each call to the part
 * that owns it (the {@link LifecycleEngine} for the lifecycle, {@link LiveOperations} for what runs in a live
 * sandbox, {@link Snapshots} and the {@link Reconciler} for theirs) and shuts them down in order at close.
 */
final class ManagerFacade implements SandboxManager {
    private static final Logger log = LoggerFactory.getLogger(ManagerFacade.class);
    private static final AtomicInteger THREADS = new AtomicInteger();
    private static final AtomicInteger IO_THREADS = new AtomicInteger();

    private final EngineContext ctx;
    private final LifecycleEngine engine;
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

    private ManagerFacade(ManagerSettings s, SandboxDriver driver, boolean ownsDriver, Clock clock,
                          String instanceId, Path workspaceRoot) {
        this.ownsDriver = ownsDriver;
        this.ownsStore = s.store() == null;
        SessionStore store = ownsStore ? SessionStore.inMemory() : s.store();
        SandboxConfig config = s.config();
        long idleMillis = config.getIdleTimeout().toMillis();
        long leaseMillis = config.getLeaseDuration().toMillis();
        this.ownsScheduler = s.scheduler() == null;
        ScheduledExecutorService scheduler = ownsScheduler ? newScheduler() : s.scheduler();
        this.ownsIo = s.ioExecutor() == null;
        this.io = ownsIo ? newIoPool() : s.ioExecutor();
        SessionRegistry sessions = new SessionRegistry();
        this.forwards = new PortForwards(driver, sessions, clock, io);
        Removals removals = new Removals(driver, clock, forwards::closeFor);
        this.storeIdentity = StoreIdentity.open(store, workspaceRoot, driver.name(), Instant.ofEpochMilli(clock.millis()));
        this.ctx = new EngineContext(driver, store, clock, instanceId,
                SessionIds.requireValidInstanceId(config.getFleet()), storeIdentity.id(),
                idleMillis, leaseMillis, scheduler, config.fileLimits(),
                new SpecCodec(), new ContainerSetup(), new Stats(), new Events(s.listeners()), sessions, removals);
        this.snapshots = new Snapshots(ctx);
        ProcessSupport processes = new ProcessSupport(driver, store, sessions, clock);
        Archives archives = new Archives(ctx, io, s.archiveStore(), config.getArchiveAfter(),
                Path.of(System.getProperty("java.io.tmpdir"), "sandboxkit-archive-spool"));
        this.engine = new LifecycleEngine(ctx, snapshots, processes, archives, forwards, s.warmPools());
        this.live = new LiveOperations(driver, store, sessions, clock, config.fileLimits(), ctx.events(), processes,
                forwards, engine);
        long reaperMillis = config.getReaperInterval() != null ? config.getReaperInterval().toMillis()
                : Math.max(10, Math.min(500, idleMillis / 4));
        long reconcileMillis = config.getReconcileInterval().toMillis();
        this.reconciler = new Reconciler(ctx, engine, engine.pools(), snapshots, storeIdentity,
                config.getOrphanGrace());
        this.housekeeper = new Housekeeper(ctx, engine, reconciler, reaperMillis, Math.max(10, leaseMillis / 3),
                reconcileMillis, archives.enabled() ? archives.passMillis(reconcileMillis) : 0);
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
        boolean ownsDriver = s.driver() == null;
        SandboxDriver driver = ownsDriver
                ? DriverResolver.create(config.getDriver(), context, Thread.currentThread().getContextClassLoader())
                : s.driver();
        ManagerFacade manager = null;
        try {
            driver.ping();
            manager = new ManagerFacade(s, driver, ownsDriver, clock, instanceId, context.workspaceRoot());
            manager.announcePresence();
            manager.housekeeper.start();
            manager.engine.fillPools();
            log.info("Sandbox manager {} started: driver={}, idleTimeout={}, workspaceRoot={}", instanceId,
                    driver.name(), manager.idleTimeout(), context.workspaceRoot());
            return manager;
        } catch (RuntimeException e) {
            if (manager != null) {
                manager.close();
            } else if (ownsDriver) {
                closeQuietly(driver);
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
        Instant now = ctx.now();
        ctx.store().insert(SessionRecord.builder().sessionId(presenceId()).driver(ctx.driver().name())
                .state(SessionState.SUSPENDED).sandboxId(null).workspace("-").spec("-").specFingerprint("-")
                .ephemeral(false).createdAt(now).lastActivity(now).sandboxStartedAt(null).owner(ctx.instanceId())
                .leaseExpiry(ctx.lease(now)).version(1).attributes(Map.of()).build());
    }

    private String presenceId() {
        return LifecycleEngine.PRESENCE_PREFIX + ctx.instanceId();
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
    public void release(String sessionId) {
        engine.release(sessionId, null);
    }

    @Override
    public void destroy(String sessionId) {
        engine.destroy(sessionId, null);
    }

    @Override
    public SnapshotId snapshot(String sessionId) {
        return engine.snapshot(sessionId);
    }

    @Override
    public void restore(String sessionId, SnapshotId snapshot) {
        engine.restore(sessionId, snapshot);
    }

    @Override
    public Sandbox fork(String sessionId, String newSessionId) {
        return new ManagedSandbox(engine, live, newSessionId, engine.fork(sessionId, newSessionId));
    }

    @Override
    public int archiveIdle() {
        return engine.archiveIdle();
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
        return ctx.stats().snapshot(ctx.sessions().activeCount(), engine.pooledCount(), held[0], held[1]);
    }

    @Override
    public void ping() {
        engine.checkOpen();
        ctx.driver().ping();
    }

    @Override
    public Duration idleTimeout() {
        return Duration.ofMillis(ctx.idleMillis());
    }

    @Override
    public String instanceId() {
        return ctx.instanceId();
    }

    @Override
    public String driverName() {
        return ctx.driver().name();
    }

    // ---------------------------------------------------------------- close

    @Override
    public void close() {
        if (!engine.markClosed()) {
            return;
        }
        housekeeper.stop();
        forwards.closeAll();
        engine.suspendAll();
        // Their containers are gone by now (or could not be removed): release their connections either way.
        live.closeTerminals();
        if (!Thread.currentThread().isInterrupted()) {
            reconciler.closing();
        }
        SessionStore store = ctx.store();
        try {
            store.find(presenceId()).ifPresent(r -> store.delete(r.sessionId(), r.version()));
        } catch (RuntimeException storeDown) {
            log.debug("Could not remove the presence record: {}", storeDown.toString());
        }
        storeIdentity.close();
        if (ownsScheduler) {
            ctx.scheduler().shutdownNow();
        }
        if (ownsIo) {
            ((ExecutorService) io).shutdownNow();
        }
        if (ownsDriver) {
            closeQuietly(ctx.driver());
        }
        if (ownsStore) {
            closeQuietly(store);
        }
        log.info("Sandbox manager {} closed", ctx.instanceId());
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            log.warn("Error while closing {}: {}", c, e.toString());
        }
    }
}
