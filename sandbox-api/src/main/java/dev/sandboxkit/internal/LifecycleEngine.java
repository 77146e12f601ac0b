package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxTimeoutException;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.SessionStoreException;
import dev.sandboxkit.SnapshotId;
import dev.sandboxkit.SandboxUnsupportedException;
import dev.sandboxkit.spi.DriverCapability;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.spi.SnapshotDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The lifecycle engine: the one place that decides when a session's container is created, reused,
 * reaped, resumed and destroyed. Drivers only carry out what it decides; the store records it. Starting a
 * container is {@link ContainerStarter}'s, what runs in a live sandbox (execs, shells, processes, terminals,
 * forwards, files) is {@link LiveOperations}'; the manager's calls reach both through {@link ManagerFacade}.
 *
 * <p>Order of writes, chosen so that nothing is ever recorded done before it is done, and a crash or an
 * outage at any point leaves nothing the janitor cannot finish:
 * <ul>
 *   <li>a container is created first and then recorded ACTIVE by compare-and-set (a crash in between leaves a
 *       labelled container whose session is not ACTIVE: the orphan sweep removes it);</li>
 *   <li>a container is removed first and then recorded SUSPENDED (a removal that fails leaves the session
 *       ACTIVE on the container it still has; the next pass retries);</li>
 *   <li>a destroy is recorded DESTROYING first (which claims it), then the containers are removed and the
 *       workdir deleted, and only then is it recorded DESTROYED; a step that fails leaves it DESTROYING, and
 *       the janitor, the next destroy or the next acquire of the id finishes it.</li>
 * </ul>
 * Every lifecycle step of a session runs under that session's lifecycle lock, and a destroyed session's
 * entry leaves the map only once the destroy is over, so create, resume, reap and destroy of one session are
 * linearizable within a manager; across managers the store's compare-and-set orders them.
 */
final class LifecycleEngine implements LifecycleActions {
    /** Session-id prefix of the record through which a manager shows other managers it is alive. */
    static final String PRESENCE_PREFIX = "_manager.";
    /**
     * Record attribute of a {@linkplain SandboxSpec#managerScoped() manager-scoped} session: the manager that last
     * held it, whose end ends the session.
     */
    static final String SCOPE_OWNER = "scope.owner";
    static final String MDC_SESSION = "sandboxkit.session";
    private static final Logger log = LoggerFactory.getLogger(LifecycleEngine.class);

    private final SandboxDriver driver;
    private final SessionStore store;
    private final Clock clock;
    private final Leases leases;
    private final String instanceId;
    private final long idleMillis;
    private final SessionRegistry sessions;
    private final SessionLocks locks;
    private final ClosedFlag closed;
    private final ContainerStarter starter;
    private final WarmPools pools;
    private final ScheduledExecutorService scheduler;
    private final SpecCodec specs;
    private final Snapshots snapshots;
    private final Archives archives;
    private final ProcessSupport processes;
    private final PortForwards forwards;
    private final Removals removals;
    private final Stats stats;
    private final Events events;

    /**
     * @param idleMillis the idle TTL
     * @param starter    starts the containers this engine decides on
     * @param pools      drained when the manager closes
     * @param scheduler  runs close()'s suspends in parallel
     * @param forwards   closed when their container goes to another manager
     */
    LifecycleEngine(SandboxDriver driver, SessionStore store, Clock clock, Leases leases, String instanceId,
                    long idleMillis, SessionRegistry sessions, SessionLocks locks, ClosedFlag closed,
                    ContainerStarter starter, WarmPools pools, ScheduledExecutorService scheduler, SpecCodec specs,
                    Snapshots snapshots, Archives archives, ProcessSupport processes, PortForwards forwards,
                    Removals removals, Stats stats, Events events) {
        this.driver = driver;
        this.store = store;
        this.clock = clock;
        this.leases = leases;
        this.instanceId = instanceId;
        this.idleMillis = idleMillis;
        this.sessions = sessions;
        this.locks = locks;
        this.closed = closed;
        this.starter = starter;
        this.pools = pools;
        this.scheduler = scheduler;
        this.specs = specs;
        this.snapshots = snapshots;
        this.archives = archives;
        this.processes = processes;
        this.forwards = forwards;
        this.removals = removals;
        this.stats = stats;
        this.events = events;
    }

    // ---------------------------------------------------------------- acquire

    /**
     * Gives the session a live container: the one it has, else a resumed, pooled or new one.
     *
     * @return the incarnation acquired (its creation instant), which its handle names
     */
    Instant acquire(String sessionId, SandboxSpec spec) {
        SessionIds.requireValid(sessionId);
        Objects.requireNonNull(spec, "spec");
        checkOpen();
        SpecCodec.Encoded enc = specs.encoded(spec);
        String encoded = enc.text();
        String fingerprint = enc.fingerprint();
        return locks.underLock(sessionId, e -> {
            if (e.isActive()) {
                if (fingerprint.equals(e.record.specFingerprint())) {
                    e.touch(clock.millis());
                    return e.record.createdAt();
                }
                log.info("Session {}: spec changed, replacing container {} (workdir kept)", sessionId,
                        shortId(e.sandboxId()));
                stop(e, StopReason.SPEC_CHANGED);
                if (e.isGone()) {
                    throw new StaleRecord(); // another manager took it over meanwhile: look again
                }
            }
            acquireLocked(e, spec, encoded, fingerprint);
            return e.record.createdAt();
        });
    }

    /** Starts a container for a session that has none. Lifecycle lock held. */
    private void acquireLocked(SessionEntry e, SandboxSpec spec, String encoded, String fingerprint) {
        acquireLocked(e, spec, encoded, fingerprint, null);
    }

    /**
     * Starts a container for a session that has none; a new session's workdir is first filled from
     * {@code copyFrom} (another workdir: a fork), else from the spec's template. Lifecycle lock held.
     */
    private void acquireLocked(SessionEntry e, SandboxSpec spec, String encoded, String fingerprint,
                               String copyFrom) {
        String sessionId = e.sessionId;
        Optional<SessionRecord> found = store.find(sessionId);
        if (found.isPresent() && found.get().state() == SessionState.DESTROYING) {
            finishDestroyBeforeAcquire(e, found.get());
            found = store.find(sessionId);
        }
        boolean isNew = found.isEmpty() || found.get().state() == SessionState.DESTROYED;
        if (isNew && found.isPresent() && found.get().ephemeral()) {
            throw new SandboxAcquireException("session " + sessionId
                    + " was a single-use (ephemeral) sandbox and has been released; it is never reused");
        }
        if (!isNew && copyFrom != null) {
            throw new StaleRecord(); // created meanwhile by another manager: the fork looks again, and refuses
        }
        if (!isNew) {
            SessionRecord rec = found.get();
            starter.start(e, rec.specFingerprint().equals(fingerprint) ? rec : rec.withSpec(encoded, fingerprint, spec.ephemeral()),
                    spec, false);
            return;
        }
        starter.startNew(e, spec, encoded, fingerprint, found, copyFrom);
    }

    /**
     * An acquire found the id's previous session still DESTROYING: finish that destroy first (the new session
     * must start on a fresh, empty workdir), or say when to retry. Lifecycle lock held.
     */
    private void finishDestroyBeforeAcquire(SessionEntry e, SessionRecord rec) {
        if (!instanceId.equals(rec.owner()) && !rec.leaseExpired(leases.now())) {
            throw new SandboxAcquireException("session " + rec.sessionId() + " is being destroyed by manager "
                    + rec.owner() + "; acquire it again once the destroy has finished", null, true);
        }
        try {
            destroyLocked(e, e.deactivate(false, 0, 0), null, false);
        } catch (SandboxException notFinished) {
            throw new SandboxAcquireException("session " + rec.sessionId() + " is still being destroyed ("
                    + notFinished.getMessage() + "); acquire it again once the destroy has finished", notFinished, true);
        }
    }


    /** A compare-and-set whose failure (conflict or store down) is only logged; the janitor repairs the record. */
    private Optional<SessionRecord> updateQuietly(SessionRecord rec) {
        try {
            return store.update(rec);
        } catch (SandboxException storeDown) {
            log.warn("Session {}: could not record state {}: {}", rec.sessionId(), rec.state(), storeDown.toString());
            return Optional.empty();
        }
    }


    // ---------------------------------------------------------------- resume, keep-alive, info, release, destroy

    /** Brings a suspended session back with a fresh container on the same workdir. */
    @Override
    public void resume(String sessionId, Instant incarnation) {
        locks.underLock(sessionId, e -> {
            if (!e.isActive()) {
                SessionRecord rec = store.find(sessionId).orElseThrow(() -> SessionRecords.notFound(sessionId));
                if (SessionRecords.goneFor(rec, incarnation)) {
                    throw SessionRecords.notFound(sessionId);
                }
                starter.start(e, rec, specs.decode(rec.spec()), false);
            }
            return null;
        });
    }

    /** The session's state as a caller sees it; empty if it never existed. */
    Optional<SessionInfo> session(String sessionId) {
        if (sessionId.startsWith("_")) {
            return Optional.empty(); // the store's own records (presence, identity): no session id starts so
        }
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
        return Optional.of(SessionInfo.builder().sessionId(r.sessionId()).state(r.state()).sandboxId(r.sandboxId())
                .workspace(r.workspace()).owner(r.owner()).createdAt(r.createdAt()).lastActivity(lastActivity)
                .spec(specs.decode(r.spec())).attributes(r.attributes()).build());
    }

    /** Destroys an ephemeral session (or that incarnation of it); a persistent one keeps its container. */
    void release(String sessionId, Instant incarnation) {
        Optional<SessionRecord> rec = store.find(sessionId);
        if (rec.isPresent() && rec.get().ephemeral()
                && (incarnation == null || incarnation.equals(rec.get().createdAt()))) {
            destroy(sessionId, incarnation);
        }
        // A persistent session keeps its container until the idle TTL: the next call is instant.
    }

    /** Destroys the session (or only that incarnation of it): containers, workdir, unkept snapshots. */
    void destroy(String sessionId, Instant incarnation) {
        locks.underLock(sessionId, e -> {
            try {
                destroyLocked(e, e.deactivate(false, 0, 0), incarnation, true);
            } finally {
                // Only now: until the destroy is over, a concurrent acquire waits on this entry's lock
                // instead of starting a container on a workdir about to be deleted.
                sessions.forget(e);
            }
            return null;
        });
    }

    /**
     * Destroys the session, lifecycle lock held: records it DESTROYING (which claims the destroy), removes its
     * containers, deletes its workdir, and only then records it DESTROYED. A step that fails throws and leaves
     * the session DESTROYING with its claim released: the janitor, the next destroy or acquire of the id, or the
     * manager on the workdir's host finishes it. A workdir on another host is refused before the claim.
     *
     * @param live           the container taken from the entry, or null
     * @param incarnation    the handle's incarnation (a later session reusing the id is left alone), or null
     * @param waitForOthers  whether a destroy another live manager is running is waited for (the API's destroy,
     *                       which returns only once the session is gone), rather than left to it
     * @return whether the session is gone; false only when left to another manager's destroy
     */
    private boolean destroyLocked(SessionEntry e, String live, Instant incarnation, boolean waitForOthers) {
        String sessionId = e.sessionId;
        long waitDeadline = 0;
        for (int attempt = 1; ; attempt++) {
            Optional<SessionRecord> found = store.find(sessionId);
            if (found.isEmpty() || found.get().state() == SessionState.DESTROYED
                    || (incarnation != null && !incarnation.equals(found.get().createdAt()))) {
                if (live != null) {
                    removals.remove(live);
                }
                return true;
            }
            SessionRecord rec = found.get();
            Instant now = leases.now();
            boolean claimedBefore = rec.state() == SessionState.DESTROYING;
            if (claimedBefore && !instanceId.equals(rec.owner()) && !rec.leaseExpired(now)) {
                if (live != null) {
                    removals.remove(live);
                    live = null;
                }
                if (!waitForOthers) {
                    log.info("Session {}: already being destroyed by manager {}", sessionId, rec.owner());
                    return false;
                }
                if (waitDeadline == 0) {
                    long leaseMillis = Duration.between(now, leases.lease(now)).toMillis();
                    waitDeadline = System.nanoTime() + Duration.ofMillis(Math.max(60_000, 2 * leaseMillis)).toNanos();
                }
                awaitOtherDestroy(rec, waitDeadline);
                attempt = 0; // it finished, failed (its claim released) or lapsed: look again
                continue;
            }
            SessionRecords.requireWorkdirHere(driver, rec, "destroy it there"); // before the claim: nothing written
            Optional<SessionRecord> claimed = store.update(rec.withSandbox(SessionState.DESTROYING, rec.sandboxId(),
                    rec.sandboxStartedAt()).withOwner(instanceId, leases.lease(now)).withLastActivity(now));
            if (claimed.isEmpty()) {
                if (attempt >= SessionLocks.MAX_ATTEMPTS) {
                    throw new SessionStoreException("session " + sessionId
                            + " kept changing under concurrent updates; destroy again", null, true);
                }
                continue;
            }
            if (rec.state() == SessionState.SUSPENDED) {
                stats.suspended.updateAndGet(n -> Math.max(0, n - 1));
            }
            SessionRecord destroying = claimed.get();
            processes.containerGone(live, "the session was destroyed, and its sandbox with it");
            processes.containerGone(destroying.sandboxId(), "the session was destroyed, and its sandbox with it");
            try {
                if (live != null) {
                    removals.remove(live);
                }
                if (destroying.sandboxId() != null && !destroying.sandboxId().equals(live)) {
                    removals.remove(destroying.sandboxId());
                }
                if (!Archives.isStoredAway(destroying)) {
                    driver.deleteWorkspace(destroying.workspace()); // else deleted when archived, maybe elsewhere
                }
                archives.deleteFor(destroying);
                snapshots.deleteUnkept(sessionId);
            } catch (RuntimeException notDone) {
                // Release the claim (lease ends now), so that any manager that can finish it need not wait for it.
                updateQuietly(destroying.withOwner(instanceId, leases.now()));
                log.warn("Session {}: destroy not finished ({}); it stays DESTROYING and the janitor retries",
                        sessionId, notDone.toString());
                throw notDone;
            }
            if (store.update(destroying.withSandbox(SessionState.DESTROYED, null, null).withOwner(null, null))
                    .isEmpty()) {
                live = null; // removed already; a concurrent destroy of the id changed the record: look again
                continue;
            }
            stats.destroyed.increment();
            log.info("Session {}: destroyed (container and workdir removed{})", sessionId,
                    rec.ephemeral() ? ", single-use" : "");
            events.emit(new SandboxEvent.Destroyed(sessionId, live != null ? live : rec.sandboxId(), clock.instant(),
                    rec.ephemeral()));
            return true;
        }
    }

    /**
     * Waits, lifecycle lock held, until another manager's claimed destroy moved on: the record changed (finished,
     * or failed and released its claim) or its claim lapsed. Polls the store.
     *
     * @throws SandboxTimeoutException at the deadline, or if interrupted (the interrupt flag is kept)
     */
    private void awaitOtherDestroy(SessionRecord claimed, long deadlineNanos) {
        log.info("Session {}: being destroyed by manager {}; waiting for it to finish", claimed.sessionId(),
                claimed.owner());
        while (true) {
            Optional<SessionRecord> now = store.find(claimed.sessionId());
            if (now.isEmpty() || now.get().version() != claimed.version() || now.get().leaseExpired(leases.now())) {
                return;
            }
            if (System.nanoTime() - deadlineNanos >= 0) {
                throw new SandboxTimeoutException("session " + claimed.sessionId() + " is being destroyed by manager "
                        + claimed.owner() + ", which has not finished it in time; destroy it again later");
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                throw new SandboxTimeoutException("interrupted while waiting for manager " + claimed.owner()
                        + " to finish destroying session " + claimed.sessionId());
            }
        }
    }

    /**
     * The janitor's retry of a destroy that did not finish (its owner failed or is gone); returns whether it
     * finished now. Skips a session whose lifecycle step is running. Runs on a scheduler thread.
     */
    @Override
    public boolean retryDestroy(String sessionId) {
        SessionEntry e = sessions.entry(sessionId);
        if (!locks.tryLock(e)) {
            return false;
        }
        try (MDC.MDCCloseable ignored = MDC.putCloseable(MDC_SESSION, sessionId)) {
            if (e.isGone()) {
                return false;
            }
            Optional<SessionRecord> rec = store.find(sessionId);
            if (rec.isPresent() && SessionRecords.workdirElsewhere(driver, rec.get()).isPresent()) {
                // Another host's workdir: its manager finishes the destroy; claiming it here would only hold it up.
                log.debug("Session {}: pending destroy left to the manager on the workdir's host", sessionId);
                return false;
            }
            return destroyLocked(e, e.deactivate(false, 0, 0), null, false);
        } finally {
            sessions.dropIfIdle(e);
            locks.unlock(e);
        }
    }

    // ---------------------------------------------------------------- housekeeping (called by the housekeeper)

    /** Reaps the session if it is still idle; returns whether it did. Runs on a scheduler thread. */
    @Override
    public boolean reapIfIdle(SessionEntry e) {
        e.reapQueued = false;
        if (!locks.tryLock(e)) {
            return false; // busy with a lifecycle step: that is activity
        }
        try (MDC.MDCCloseable ignored = MDC.putCloseable(MDC_SESSION, e.sessionId)) {
            long now = clock.millis();
            if (e.isGone()) {
                return false;
            }
            if (e.outlived(now)) {
                return killForLifetime(e, now);
            }
            if (!e.idleFor(now, idleMillis) || processes.holdsOffReap(e, e.sandboxId(), now)) {
                return false;
            }
            long idleFor = now - e.lastActivity();
            String sandboxId = e.sandboxId();
            if (!stop(e, StopReason.IDLE)) {
                return false;
            }
            stats.idleReaped.increment();
            events.emit(new SandboxEvent.IdleReaped(e.sessionId, sandboxId, clock.instant(), Duration.ofMillis(idleFor)));
            return true;
        } finally {
            sessions.dropIfIdle(e);
            locks.unlock(e);
        }
    }

    /** The janitor's hard limit: kill even mid-exec; a persistent session keeps its workdir. Lock held. */
    private boolean killForLifetime(SessionEntry e, long now) {
        String sandboxId = e.sandboxId();
        long lived = now - e.startedAt;
        e.lifetimeKilled = sandboxId;
        if (!stop(e, StopReason.LIFETIME)) {
            return false;
        }
        stats.lifetimeKilled.increment();
        events.emit(new SandboxEvent.LifetimeKilled(e.sessionId, sandboxId, clock.instant(), Duration.ofMillis(lived)));
        return true;
    }

    /** Why a container is stopped; idle reaping is the only stop that yields to activity. */
    enum StopReason {
        IDLE("idle for more than the TTL", "the sandbox was reaped (idle for more than the TTL)"),
        LIFETIME("maximum lifetime reached", "the sandbox was killed at its maximum lifetime"),
        SPEC_CHANGED("spec changed", "the sandbox was replaced (its spec changed)"),
        CLOSED("manager closed", "the sandbox was suspended (its manager closed)"),
        RESTORED("workdir restored from a snapshot", "the sandbox was removed (its workdir was restored from a snapshot)");

        final String text;
        /** What a background process's handle says happened to it. */
        final String processFate;

        StopReason(String text, String processFate) {
            this.text = text;
            this.processFate = processFate;
        }
    }

    /**
     * Removes the session's container and then records the session SUSPENDED, keeping the workdir. Called with
     * the lifecycle lock held. An ephemeral session is destroyed instead: it is never resumed.
     *
     * @return whether the container was taken away; false if the session was busy (idle reaping yields to
     *         activity) or is now owned by another manager
     * @throws SandboxException if the container could not be removed: the session then keeps it, still ACTIVE,
     *                          and is retried (never recorded SUSPENDED beside a container that lives on)
     */
    private boolean stop(SessionEntry e, StopReason reason) {
        boolean onlyIfIdle = reason == StopReason.IDLE;
        String sandboxId = e.deactivate(onlyIfIdle, clock.millis(), idleMillis);
        if (sandboxId == null) {
            return false;
        }
        processes.containerGone(sandboxId, reason.processFate);
        if (e.record.ephemeral() || (reason == StopReason.CLOSED && e.record.attributes().containsKey(SCOPE_OWNER))) {
            destroyLocked(e, sandboxId, e.record.createdAt(), false);
            log.info("Session {}: removed {} container {} ({}); workdir purged", e.sessionId,
                    e.record.ephemeral() ? "single-use" : "manager-scoped", shortId(sandboxId), reason.text);
            return true;
        }
        // Read, remove, record: a store that is down keeps the container (still served); an engine that is down
        // keeps it too, still recorded ACTIVE; never SUSPENDED beside a container that lives on.
        Optional<SessionRecord> current;
        try {
            current = store.find(e.sessionId);
            removals.remove(sandboxId);
        } catch (RuntimeException notNow) {
            e.reactivate(sandboxId);
            e.stopFailed(clock.millis());
            throw notNow;
        }
        e.reapBackoffMillis = 0;
        Optional<SessionRecord> written = current
                .filter(r -> r.state() == SessionState.ACTIVE && sandboxId.equals(r.sandboxId())
                        && instanceId.equals(r.owner()))
                .flatMap(r -> updateQuietly(r.withSandbox(SessionState.SUSPENDED, null, null).withOwner(null, null)
                        .withLastActivity(Instant.ofEpochMilli(e.lastActivity()))));
        if (written.isEmpty()) {
            // Another manager took the session over (our lease had lapsed) and manages it now, or the store
            // failed just now (the orphan sweep then records the session SUSPENDED, and a call resumes it).
            log.info("Session {}: removed container {} ({}); the session is no longer recorded as ours", e.sessionId,
                    shortId(sandboxId), reason.text);
            sessions.forget(e);
            return true;
        }
        e.record = written.get();
        stats.suspendedOne();
        log.info("Session {}: {} container {} ({}); workdir kept", e.sessionId, onlyIfIdle ? "reaped" : "removed",
                shortId(sandboxId), reason.text);
        return true;
    }

    /**
     * The container stopped answering (removed outside this manager, or its PID 1 died and it exited): remove
     * what is left of it and record the session SUSPENDED, so that the next call resumes.
     */
    @Override
    public void forgetContainer(SessionEntry e, String sandboxId) {
        locks.lock(e);
        try {
            if (!sandboxId.equals(e.sandboxId())) {
                return;
            }
            e.deactivate(false, 0, 0);
            processes.containerGone(sandboxId, "its container stopped or was removed outside the manager");
            // An exited container is still there: never leave it (if this fails, the orphan sweep removes it,
            // since this manager no longer holds it).
            removals.removeQuietly(sandboxId);
            store.update(e.record.withSandbox(SessionState.SUSPENDED, null, null).withOwner(null, null))
                    .ifPresent(r -> e.record = r);
        } finally {
            sessions.dropIfIdle(e);
            locks.unlock(e);
        }
    }

    /**
     * The store says another manager owns the session now (it took over after our lease lapsed, for
     * example after a long pause). The container is theirs to manage: forget it without removing it.
     */
    @Override
    public void lostOwnership(SessionEntry e) {
        locks.lock(e);
        try {
            if (e.isGone() || !e.isActive()) {
                return;
            }
            Optional<SessionRecord> now = store.find(e.sessionId);
            if (now.isPresent() && instanceId.equals(now.get().owner())) {
                return; // raced with our own write: still ours
            }
            log.warn("Session {}: ownership passed to {}; forgetting container {}", e.sessionId,
                    now.map(SessionRecord::owner).orElse("nobody"), shortId(e.sandboxId()));
            forwards.closeFor(e.sandboxId()); // not ours to serve any more
            e.deactivate(false, 0, 0);
            sessions.forget(e);
        } finally {
            locks.unlock(e);
        }
    }

    // ---------------------------------------------------------------- reconcile, stats, close

    // ---------------------------------------------------------------- snapshots

    /** Snapshots the session's workdir, under its lifecycle lock. */
    SnapshotId snapshot(String sessionId) {
        SessionIds.requireValid(sessionId);
        checkOpen();
        return locks.underLock(sessionId, e -> snapshots.take(local(e)));
    }

    /** Replaces the session's workdir with a snapshot's; its container, if live, is removed first. */
    void restore(String sessionId, SnapshotId snapshot) {
        SessionIds.requireValid(sessionId);
        Objects.requireNonNull(snapshot, "snapshot");
        checkOpen();
        SnapshotDescriptor source = snapshots.find(snapshot);
        locks.underLock(sessionId, e -> {
            usable(sessionId);
            if (e.isActive()) {
                stop(e, StopReason.RESTORED);
            }
            SessionRecord rec = local(e);
            if (rec.state() == SessionState.ACTIVE) {
                throw new SandboxAcquireException("session " + sessionId + " is held by manager " + rec.owner()
                        + "; restore it there, or once it is suspended", null, true);
            }
            driver.restoreWorkspace(source.location(), rec.workspace(), specs.decode(rec.spec()));
            log.info("Session {}: workdir restored from snapshot {}", sessionId, snapshot);
            return null;
        });
    }

    /**
     * Holds both sessions' lifecycle locks for the whole fork, taken in id order (a fork the other way round
     * cannot deadlock with this one): the target's, so that a concurrent acquire or fork of the same new id
     * cannot interleave; the source's, so that no destroy or restore of the source runs during the copy.
     *
     * @return the new session's incarnation
     */
    Instant fork(String sessionId, String newSessionId) {
        SessionIds.requireValid(sessionId);
        SessionIds.requireValid(newSessionId);
        checkOpen();
        if (sessionId.equals(newSessionId)) {
            throw new IllegalArgumentException("a session cannot be forked into itself: " + sessionId);
        }
        if (!driver.capabilities().contains(DriverCapability.SNAPSHOTS)) {
            throw new SandboxUnsupportedException("the " + driver.name() + " driver cannot copy workdirs");
        }
        boolean sourceFirst = sessionId.compareTo(newSessionId) < 0;
        return locks.underLock(sourceFirst ? sessionId : newSessionId, first ->
                locks.underLock(sourceFirst ? newSessionId : sessionId, second ->
                        forkLocked(sessionId, sourceFirst ? second : first)));
    }

    /** Creates the fork's session on a copy of the source's workdir. Both lifecycle locks held. */
    private Instant forkLocked(String sessionId, SessionEntry target) {
        String newSessionId = target.sessionId;
        SessionRecord source = local(sessionId); // an archived source is brought back to this host first
        Optional<SessionRecord> existing = store.find(newSessionId);
        if (target.isActive() || (existing.isPresent() && existing.get().state() != SessionState.DESTROYED)) {
            throw new SandboxAcquireException("cannot fork " + sessionId + " into " + newSessionId
                    + ": that session exists already");
        }
        SandboxSpec spec = specs.decode(source.spec());
        SpecCodec.Encoded enc = specs.encoded(spec);
        acquireLocked(target, spec, enc.text(), enc.fingerprint(), source.workspace());
        log.info("Session {}: forked from {}", newSessionId, sessionId);
        return target.record.createdAt();
    }

    /** The session's record with its workdir on this host (unpacked from the archive tier first). Lock held. */
    private SessionRecord local(SessionEntry e) {
        return local(e.sessionId);
    }

    /** {@link #local(SessionEntry)} by id, for a step that holds the session's lock through another entry. */
    private SessionRecord local(String sessionId) {
        SessionRecord rec = usable(sessionId);
        if (!Archives.isArchived(rec)) {
            return rec;
        }
        return archives.restore(rec, specs.decode(rec.spec()), took -> { }).orElseThrow(StaleRecord::new);
    }

    @Override
    public SessionRecord unarchive(String sessionId) {
        checkOpen();
        return locks.underLock(sessionId, this::local);
    }

    @Override
    public int archiveIdle() {
        checkOpen();
        if (!archives.enabled()) {
            return 0;
        }
        int archived = 0;
        for (String sessionId : archives.due()) {
            if (closed.isClosed()) {
                break;
            }
            try {
                // Waits for a running lifecycle step (a start, a reap) rather than skipping the session.
                if (locks.underLock(sessionId, e -> !e.isActive() && archives.archive(sessionId))) {
                    archived++;
                }
            } catch (SandboxException failed) {
                log.warn("Session {}: not archived: {}", sessionId, failed.toString());
            }
        }
        return archived;
    }

    /** The session's record, if it exists and is neither destroyed nor being destroyed. */
    private SessionRecord usable(String sessionId) {
        return store.find(sessionId)
                .filter(r -> r.state() != SessionState.DESTROYED && r.state() != SessionState.DESTROYING)
                .orElseThrow(() -> SessionRecords.notFound(sessionId));
    }

    /**
     * Suspends every session held (each under its lock) and drains the warm pools, in parallel on the scheduler,
     * waiting up to a minute for each: the manager is closing.
     */
    void suspendAll() {
        List<Future<?>> stops = new ArrayList<>();
        for (SessionEntry e : sessions.all()) {
            stops.add(submitOrRun(() -> {
                locks.lock(e);
                try {
                    if (!e.isGone()) {
                        stop(e, StopReason.CLOSED);
                    }
                } finally {
                    locks.unlock(e);
                }
            }));
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

    @Override
    public boolean isClosed() {
        return closed.isClosed();
    }

    @Override
    public void checkOpen() {
        closed.checkOpen();
    }

    /**
     * Runs close()'s work on the scheduler, in parallel; on the calling thread if the scheduler no longer takes
     * tasks (a caller's scheduler shut down before close): close() must finish its work either way.
     */
    private Future<?> submitOrRun(Runnable task) {
        try {
            return scheduler.submit(task);
        } catch (java.util.concurrent.RejectedExecutionException shutDown) {
            java.util.concurrent.FutureTask<Void> inline = new java.util.concurrent.FutureTask<>(task, null);
            inline.run();
            return inline;
        }
    }

    static String shortId(String id) {
        return id != null && id.length() > 12 ? id.substring(0, 12) : id;
    }
}
