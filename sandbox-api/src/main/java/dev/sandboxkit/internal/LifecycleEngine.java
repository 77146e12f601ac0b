package dev.sandboxkit.internal;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.SessionStoreException;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The lifecycle engine: the one place that decides when a session's container is created, reused,
 * reaped, resumed and destroyed. Drivers only carry out what it decides; the store records it.
 *
 * <p>Order of writes, chosen so that a crash at any point leaves nothing the orphan sweep cannot fix:
 * a container is created first and then recorded ACTIVE by compare-and-set (a crash in between leaves a
 * labelled container whose session is not ACTIVE); it is recorded SUSPENDED before it is removed (the
 * compare-and-set decides which manager reaps, and a crash in between leaves the same kind of orphan).
 */
public final class LifecycleEngine implements SandboxManager {
    static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofMinutes(30);
    static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    private static final Logger log = LoggerFactory.getLogger(LifecycleEngine.class);
    private static final int MAX_ATTEMPTS = 5;
    private static final AtomicInteger THREADS = new AtomicInteger();

    final SandboxDriver driver;
    final SessionStore store;
    final Clock clock;
    final long idleMillis;
    final long leaseMillis;
    final String instanceId;
    final ScheduledExecutorService scheduler;
    final ConcurrentHashMap<String, SessionEntry> sessions = new ConcurrentHashMap<>();
    private final boolean ownsDriver;
    private final boolean ownsStore;
    private final boolean ownsScheduler;
    private final SpecCodec specs = new SpecCodec();
    private final Housekeeper housekeeper;
    private volatile boolean closed;

    private LifecycleEngine(ManagerSettings s, SandboxDriver driver, boolean ownsDriver, Clock clock,
                            String instanceId) {
        this.driver = driver;
        this.ownsDriver = ownsDriver;
        this.clock = clock;
        this.instanceId = instanceId;
        this.ownsStore = s.store() == null;
        this.store = ownsStore ? new InMemorySessionStore() : s.store();
        Duration idle = s.idleTimeout() != null ? s.idleTimeout() : DEFAULT_IDLE_TIMEOUT;
        this.idleMillis = idle.toMillis();
        this.leaseMillis = (s.leaseDuration() != null ? s.leaseDuration() : DEFAULT_LEASE).toMillis();
        this.ownsScheduler = s.scheduler() == null;
        this.scheduler = ownsScheduler ? newScheduler() : s.scheduler();
        long reaperMillis = s.reaperInterval() != null ? s.reaperInterval().toMillis()
                : Math.max(10, Math.min(1000, idleMillis / 4));
        this.housekeeper = new Housekeeper(this, reaperMillis, Math.max(10, leaseMillis / 3));
    }

    /**
     * Resolves defaults, creates or adopts the driver, checks the backend answers and starts housekeeping.
     *
     * @param s the builder's choices
     * @return the running manager
     */
    public static SandboxManager start(ManagerSettings s) {
        Clock clock = s.clock() != null ? s.clock() : Clock.systemUTC();
        String instanceId = s.instanceId() != null ? SessionIds.requireValidInstanceId(s.instanceId())
                : "m-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        Path root = s.workspaceRoot() != null ? s.workspaceRoot() : defaultWorkspaceRoot();
        DriverContext context = new DriverContext(instanceId, root.toAbsolutePath().normalize(), clock,
                s.driverProperties());
        boolean ownsDriver = s.driver() == null;
        SandboxDriver driver = ownsDriver
                ? DriverResolver.create(s.driverName(), context, Thread.currentThread().getContextClassLoader())
                : s.driver();
        try {
            driver.ping();
            LifecycleEngine engine = new LifecycleEngine(s, driver, ownsDriver, clock, instanceId);
            engine.housekeeper.start();
            log.info("Sandbox manager {} started: driver={}, idleTimeout={}, workspaceRoot={}", instanceId,
                    driver.name(), Duration.ofMillis(engine.idleMillis), context.workspaceRoot());
            return engine;
        } catch (RuntimeException e) {
            if (ownsDriver) {
                closeQuietly(driver);
            }
            throw e;
        }
    }

    private static Path defaultWorkspaceRoot() {
        String configured = System.getProperty("sandboxkit.workspaceRoot");
        return configured != null ? Path.of(configured) : Path.of(System.getProperty("java.io.tmpdir"), "sandboxkit");
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

    // ---------------------------------------------------------------- acquire

    @Override
    public Sandbox acquire(String sessionId, SandboxSpec spec) {
        SessionIds.requireValid(sessionId);
        java.util.Objects.requireNonNull(spec, "spec");
        checkOpen();
        String encoded = SpecCodec.encode(spec);
        String fingerprint = SpecCodec.fingerprint(encoded);
        for (int attempt = 1; ; attempt++) {
            SessionEntry e = sessions.computeIfAbsent(sessionId, SessionEntry::new);
            e.lifecycle.lock();
            try {
                if (e.isGone()) {
                    continue;
                }
                if (e.isActive()) {
                    if (fingerprint.equals(e.record.specFingerprint())) {
                        e.touch(clock.millis());
                        return new ManagedSandbox(this, sessionId, e.record.createdAt());
                    }
                    log.info("Session {}: spec changed, replacing container {} (workdir kept)", sessionId,
                            e.sandboxId());
                    stop(e, false, "spec changed");
                    if (e.isGone()) {
                        continue;
                    }
                }
                SessionRecord rec = prepareRecord(sessionId, spec, encoded, fingerprint);
                boolean fresh = rec.sandboxStartedAt() == null && rec.state() == SessionState.SUSPENDED
                        && rec.version() == 1;
                try {
                    start(e, rec, spec);
                } catch (RuntimeException ex) {
                    if (fresh && !(ex instanceof StaleRecord)) {
                        discardFreshSession(rec);
                    }
                    throw ex;
                }
                return new ManagedSandbox(this, sessionId, e.record.createdAt());
            } catch (StaleRecord stale) {
                if (attempt >= MAX_ATTEMPTS) {
                    throw new SandboxAcquireException("session " + sessionId
                            + " kept changing under concurrent updates; try again", stale, true);
                }
            } finally {
                dropIfIdle(e);
                e.lifecycle.unlock();
            }
        }
    }

    /** Finds or creates the store record the session starts from. */
    private SessionRecord prepareRecord(String sessionId, SandboxSpec spec, String encoded, String fingerprint) {
        Optional<SessionRecord> found = store.find(sessionId);
        if (found.isPresent() && found.get().state() != SessionState.DESTROYED) {
            SessionRecord rec = found.get();
            return rec.specFingerprint().equals(fingerprint) ? rec : rec.withSpec(encoded, fingerprint, spec.ephemeral());
        }
        if (found.isPresent() && found.get().ephemeral()) {
            throw new SandboxAcquireException("session " + sessionId
                    + " was a single-use (ephemeral) sandbox and has been released; it is never reused");
        }
        Instant now = clock.instant();
        String workspace = driver.createWorkspace(sessionId, spec);
        SessionRecord fresh = new SessionRecord(sessionId, driver.name(), SessionState.SUSPENDED, null, workspace,
                encoded, fingerprint, spec.ephemeral(), now, now, null, instanceId, lease(now), 1, Map.of());
        if (found.isEmpty()) {
            if (!store.insert(fresh)) {
                throw new StaleRecord();
            }
            return fresh;
        }
        // A destroyed persistent session: the id starts over with an empty workdir and a new incarnation.
        return store.update(fresh.withVersion(found.get().version())).orElseThrow(StaleRecord::new);
    }

    /** An acquire that failed before its first container must not leave an empty session behind. */
    private void discardFreshSession(SessionRecord rec) {
        try {
            store.find(rec.sessionId()).filter(r -> r.state() == SessionState.SUSPENDED)
                    .ifPresent(r -> store.delete(r.sessionId(), r.version()));
            driver.deleteWorkspace(rec.workspace());
        } catch (RuntimeException cleanup) {
            log.warn("Session {}: could not clean up after a failed acquire: {}", rec.sessionId(), cleanup.toString());
        }
    }

    /**
     * Starts a container for the session and records it ACTIVE. Called with the lifecycle lock held.
     * Takes over an ACTIVE record only if this manager owns it or its owner's lease has lapsed.
     */
    private void start(SessionEntry e, SessionRecord rec, SandboxSpec spec) {
        Instant now = clock.instant();
        boolean resume = rec.sandboxStartedAt() != null;
        if (rec.state() == SessionState.ACTIVE) {
            if (!instanceId.equals(rec.owner()) && !rec.leaseExpired(now)) {
                throw new SandboxAcquireException("session " + rec.sessionId() + " is held by live manager "
                        + rec.owner() + " (lease until " + rec.leaseExpiry() + ")", null, true);
            }
            // Ours from before, or abandoned by a crashed manager: claim it, then clear its old container.
            String old = rec.sandboxId();
            String previousOwner = rec.owner();
            rec = store.update(rec.withSandbox(SessionState.SUSPENDED, null, null).withOwner(instanceId, lease(now)))
                    .orElseThrow(StaleRecord::new);
            if (old != null) {
                log.info("Session {}: taking over from {}, removing its container {}", rec.sessionId(),
                        previousOwner, old);
                driver.remove(old);
            }
        }
        long t0 = System.nanoTime();
        String sandboxId = driver.create(new CreateRequest(rec.sessionId(), spec, rec.workspace(), labels(rec.sessionId())));
        Instant started = clock.instant();
        SessionRecord written;
        try {
            written = store.update(rec.withSandbox(SessionState.ACTIVE, sandboxId, started)
                    .withOwner(instanceId, lease(started)).withLastActivity(started)).orElse(null);
        } catch (RuntimeException storeDown) {
            removeQuietly(sandboxId);
            throw storeDown;
        }
        if (written == null) {
            removeQuietly(sandboxId);
            throw new StaleRecord();
        }
        e.activate(written, spec, sandboxId, clock.millis());
        log.info("Session {}: {} container {} in {} ms", rec.sessionId(), resume ? "resumed with fresh" : "created",
                shortId(sandboxId), (System.nanoTime() - t0) / 1_000_000);
    }

    private Map<String, String> labels(String sessionId) {
        Map<String, String> labels = new HashMap<>(4);
        labels.put(SandboxLabels.MANAGED, "true");
        labels.put(SandboxLabels.SESSION, sessionId);
        labels.put(SandboxLabels.OWNER, instanceId);
        return labels;
    }

    // ---------------------------------------------------------------- exec

    @Override
    public ExecResult exec(String sessionId, ExecRequest request) {
        return exec(sessionId, request, null);
    }

    ExecResult exec(String sessionId, ExecRequest request, Instant incarnation) {
        java.util.Objects.requireNonNull(sessionId, "sessionId");
        java.util.Objects.requireNonNull(request, "request");
        for (int attempt = 1; ; attempt++) {
            checkOpen();
            SessionEntry e = sessions.get(sessionId);
            String sandboxId = e == null ? null : e.beginExec(clock.millis());
            if (sandboxId == null) {
                resume(sessionId, incarnation);
                continue;
            }
            boolean vanished = false;
            try {
                if (incarnation != null && !incarnation.equals(e.record.createdAt())) {
                    throw notFound(sessionId);
                }
                return driver.exec(sandboxId, withSpecEnv(e.spec, request));
            } catch (SandboxNotFoundException notFound) {
                // The container disappeared before the command started (removed outside this manager):
                // suspend and resume transparently, once.
                if (attempt >= 2 || e.isGone() || !sandboxId.equals(e.sandboxId())) {
                    throw notFound;
                }
                vanished = true;
            } finally {
                e.endExec(clock.millis());
            }
            if (vanished) {
                log.warn("Session {}: container {} vanished; resuming with a fresh one", sessionId, shortId(sandboxId));
                forgetContainer(e, sandboxId);
            }
        }
    }

    private static ExecRequest withSpecEnv(SandboxSpec spec, ExecRequest request) {
        if (spec == null || spec.env().isEmpty()) {
            return request;
        }
        Map<String, String> merged = new HashMap<>(spec.env());
        merged.putAll(request.env());
        return request.withEnv(merged);
    }

    /** Brings a suspended session back with a fresh container on the same workdir. */
    private void resume(String sessionId, Instant incarnation) {
        for (int attempt = 1; ; attempt++) {
            SessionEntry e = sessions.computeIfAbsent(sessionId, SessionEntry::new);
            e.lifecycle.lock();
            try {
                if (e.isGone()) {
                    continue;
                }
                if (e.isActive()) {
                    return;
                }
                SessionRecord rec = store.find(sessionId).orElseThrow(() -> notFound(sessionId));
                if (rec.state() == SessionState.DESTROYED
                        || (incarnation != null && !incarnation.equals(rec.createdAt()))) {
                    throw notFound(sessionId);
                }
                start(e, rec, specs.decode(rec.spec()));
                return;
            } catch (StaleRecord stale) {
                if (attempt >= MAX_ATTEMPTS) {
                    throw new SandboxAcquireException("session " + sessionId
                            + " kept changing under concurrent updates; try again", stale, true);
                }
            } finally {
                dropIfIdle(e);
                e.lifecycle.unlock();
            }
        }
    }

    // ---------------------------------------------------------------- keep-alive, info, release, destroy

    @Override
    public void keepAlive(String sessionId) {
        SessionEntry e = sessions.get(sessionId);
        if (e != null && e.touch(clock.millis())) {
            return;
        }
        SessionRecord rec = store.find(sessionId).orElseThrow(() -> notFound(sessionId));
        if (rec.state() == SessionState.DESTROYED) {
            throw notFound(sessionId);
        }
    }

    @Override
    public Optional<SessionInfo> session(String sessionId) {
        Optional<SessionRecord> rec = store.find(sessionId);
        if (rec.isEmpty()) {
            return Optional.empty();
        }
        SessionRecord r = rec.get();
        Instant lastActivity = r.lastActivity();
        SessionEntry e = sessions.get(sessionId);
        if (e != null && e.isActive()) {
            Instant local = Instant.ofEpochMilli(e.lastActivity());
            lastActivity = local.isAfter(lastActivity) ? local : lastActivity;
        }
        return Optional.of(new SessionInfo(r.sessionId(), r.state(), r.sandboxId(), r.workspace(), r.owner(),
                r.createdAt(), lastActivity, specs.decode(r.spec())));
    }

    @Override
    public void release(String sessionId) {
        release(sessionId, null);
    }

    void release(String sessionId, Instant incarnation) {
        Optional<SessionRecord> rec = store.find(sessionId);
        if (rec.isPresent() && rec.get().ephemeral()
                && (incarnation == null || incarnation.equals(rec.get().createdAt()))) {
            destroy(sessionId, incarnation);
        }
        // A persistent session keeps its container until the idle TTL: the next call is instant.
    }

    @Override
    public void destroy(String sessionId) {
        destroy(sessionId, null);
    }

    void destroy(String sessionId, Instant incarnation) {
        SessionEntry e = sessions.computeIfAbsent(sessionId, SessionEntry::new);
        e.lifecycle.lock();
        try {
            String live = e.deactivate(false, 0, 0);
            e.markGone();
            sessions.remove(sessionId, e);
            for (int attempt = 1; ; attempt++) {
                Optional<SessionRecord> found = store.find(sessionId);
                if (found.isEmpty() || found.get().state() == SessionState.DESTROYED
                        || (incarnation != null && !incarnation.equals(found.get().createdAt()))) {
                    if (live != null) {
                        removeQuietly(live);
                    }
                    return;
                }
                SessionRecord rec = found.get();
                Optional<SessionRecord> written = store.update(rec.withSandbox(SessionState.DESTROYED, null, null)
                        .withLastActivity(clock.instant()));
                if (written.isEmpty()) {
                    if (attempt >= MAX_ATTEMPTS) {
                        throw new SessionStoreException("session " + sessionId
                                + " kept changing under concurrent updates; destroy again", null, true);
                    }
                    continue;
                }
                if (live != null) {
                    driver.remove(live);
                }
                if (rec.sandboxId() != null && !rec.sandboxId().equals(live)) {
                    driver.remove(rec.sandboxId());
                }
                driver.deleteWorkspace(rec.workspace());
                log.info("Session {}: destroyed (container and workdir removed{})", sessionId,
                        rec.ephemeral() ? ", single-use" : "");
                return;
            }
        } finally {
            e.lifecycle.unlock();
        }
    }

    // ---------------------------------------------------------------- reaping (called by the housekeeper)

    /** Reaps the session if it is still idle; returns whether it did. */
    boolean reapIfIdle(SessionEntry e) {
        e.reapQueued = false;
        if (!e.lifecycle.tryLock()) {
            return false; // busy with a lifecycle step: that is activity
        }
        try {
            if (e.isGone() || !e.idleFor(clock.millis(), idleMillis)) {
                return false;
            }
            return stop(e, true, "idle for more than " + Duration.ofMillis(idleMillis));
        } finally {
            dropIfIdle(e);
            e.lifecycle.unlock();
        }
    }

    /**
     * Records the session SUSPENDED and removes its container, keeping the workdir. Called with the
     * lifecycle lock held. An ephemeral session is destroyed instead: it is never resumed.
     */
    private boolean stop(SessionEntry e, boolean onlyIfIdle, String reason) {
        String sandboxId = e.deactivate(onlyIfIdle, clock.millis(), idleMillis);
        if (sandboxId == null) {
            return false;
        }
        SessionRecord rec = e.record;
        Optional<SessionRecord> written;
        try {
            SessionState next = rec.ephemeral() ? SessionState.DESTROYED : SessionState.SUSPENDED;
            written = store.update(rec.withSandbox(next, null, null)
                    .withLastActivity(Instant.ofEpochMilli(e.lastActivity())));
        } catch (SandboxException storeDown) {
            e.reactivate(sandboxId); // keep serving; try again on the next pass
            log.warn("Session {}: could not record the stop ({}); keeping the container for now", e.sessionId,
                    storeDown.toString());
            return false;
        }
        if (written.isEmpty()) {
            // Another manager took the session over: its container is now theirs to remove.
            log.info("Session {}: now owned by another manager; forgetting it", e.sessionId);
            e.markGone();
            sessions.remove(e.sessionId, e);
            return false;
        }
        e.record = written.get();
        driver.remove(sandboxId);
        if (rec.ephemeral()) {
            driver.deleteWorkspace(rec.workspace());
        }
        log.info("Session {}: {} container {} ({}); workdir {}", e.sessionId,
                onlyIfIdle ? "reaped" : "removed", shortId(sandboxId), reason, rec.ephemeral() ? "purged" : "kept");
        return true;
    }

    /** The container vanished from under us: record the session SUSPENDED so the next call resumes. */
    private void forgetContainer(SessionEntry e, String sandboxId) {
        e.lifecycle.lock();
        try {
            if (!sandboxId.equals(e.sandboxId())) {
                return;
            }
            e.deactivate(false, 0, 0);
            store.update(e.record.withSandbox(SessionState.SUSPENDED, null, null)).ifPresent(r -> e.record = r);
        } finally {
            e.lifecycle.unlock();
        }
    }

    /**
     * The store says another manager owns the session now (it took over after our lease lapsed, for
     * example after a long pause). The container is theirs to manage: forget it without removing it.
     */
    void lostOwnership(SessionEntry e) {
        e.lifecycle.lock();
        try {
            if (e.isGone() || !e.isActive()) {
                return;
            }
            java.util.Optional<SessionRecord> now = store.find(e.sessionId);
            if (now.isPresent() && instanceId.equals(now.get().owner())) {
                return; // raced with our own write: still ours
            }
            log.warn("Session {}: ownership passed to {}; forgetting container {}", e.sessionId,
                    now.map(SessionRecord::owner).orElse("nobody"), shortId(e.sandboxId()));
            e.deactivate(false, 0, 0);
            e.markGone();
            sessions.remove(e.sessionId, e);
        } finally {
            e.lifecycle.unlock();
        }
    }

    /** Drops a map entry that holds no container, so idle sessions cost no memory. Lifecycle lock held. */
    private void dropIfIdle(SessionEntry e) {
        if (!e.isActive() && !e.isGone() && e.inflight() == 0) {
            e.markGone();
            sessions.remove(e.sessionId, e);
        }
    }

    // ---------------------------------------------------------------- close

    @Override
    public String instanceId() {
        return instanceId;
    }

    @Override
    public String driverName() {
        return driver.name();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        housekeeper.stop();
        List<Future<?>> stops = new ArrayList<>();
        for (SessionEntry e : sessions.values()) {
            stops.add(scheduler.submit(() -> {
                e.lifecycle.lock();
                try {
                    if (!e.isGone()) {
                        stop(e, false, "manager closed");
                    }
                } finally {
                    e.lifecycle.unlock();
                }
            }));
        }
        for (Future<?> f : stops) {
            try {
                f.get(60, TimeUnit.SECONDS);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                break;
            } catch (ExecutionException | java.util.concurrent.TimeoutException ex) {
                log.warn("Could not suspend a session while closing: {}", ex.toString());
            }
        }
        if (ownsScheduler) {
            scheduler.shutdownNow();
        }
        if (ownsDriver) {
            closeQuietly(driver);
        }
        if (ownsStore) {
            closeQuietly(store);
        }
        log.info("Sandbox manager {} closed", instanceId);
    }

    // ---------------------------------------------------------------- helpers

    Instant lease(Instant now) {
        return now.plusMillis(leaseMillis);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("sandbox manager " + instanceId + " is closed");
        }
    }

    private void removeQuietly(String sandboxId) {
        try {
            driver.remove(sandboxId);
        } catch (RuntimeException e) {
            log.warn("Could not remove container {}: {}", shortId(sandboxId), e.toString());
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            log.warn("Error while closing {}: {}", c, e.toString());
        }
    }

    static SandboxNotFoundException notFound(String sessionId) {
        return new SandboxNotFoundException("session " + sessionId + " does not exist or was destroyed");
    }

    static String shortId(String id) {
        return id != null && id.length() > 12 ? id.substring(0, 12) : id;
    }

    /** A compare-and-set lost to a concurrent writer: start the step over from a fresh read. */
    private static final class StaleRecord extends RuntimeException {
        private static final long serialVersionUID = 1L;

        StaleRecord() {
            super("session record changed concurrently", null, false, false);
        }
    }
}
