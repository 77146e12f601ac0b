package dev.sandboxkit.internal;

import dev.sandboxkit.EgressPolicy;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.WorkspaceBackend;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The lifecycle engine: the one place that decides when a session's container is created, reused,
 * reaped, resumed and destroyed. Drivers only carry out what it decides; the store records it. It decides;
 * {@link ContainerStarter} starts a container and {@link SessionDestroyer} carries out a destroy, both under the
 * lock this engine holds. Snapshot, restore, fork and archive are {@link WorkdirSteps}', the lease pass is
 * {@link LeaseRenewal}'s, and what runs in a live sandbox (execs, shells, processes, terminals, forwards, files) is
 * {@link LiveOperations}'; the manager's calls reach them through {@link ManagerFacade}.
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

    private final WorkspaceBackend workspaces;
    private final SessionStore store;
    private final Clock clock;
    private final Leases leases;
    private final String instanceId;
    private final long idleMillis;
    private final SessionRegistry sessions;
    private final SessionLocks locks;
    private final ClosedFlag closed;
    private final ContainerStarter starter;
    private final SessionDestroyer destroyer;
    private final SpecCodec specs;
    private final Archives archives;
    private final ProcessSupport processes;
    private final Removals removals;
    private final Stats stats;
    private final Egress egress;
    private final Events events;

    /**
     * @param idleMillis the idle TTL
     * @param starter    starts the containers this engine decides on
     * @param destroyer  carries out the destroys this engine decides on
     */
    LifecycleEngine(WorkspaceBackend workspaces, SessionStore store, Clock clock, Leases leases, String instanceId,
                    long idleMillis, SessionRegistry sessions, SessionLocks locks, ClosedFlag closed,
                    ContainerStarter starter, SessionDestroyer destroyer, SpecCodec specs, Archives archives,
                    ProcessSupport processes, Removals removals, Stats stats, Events events, Egress egress) {
        this.workspaces = workspaces;
        this.store = store;
        this.clock = clock;
        this.leases = leases;
        this.instanceId = instanceId;
        this.idleMillis = idleMillis;
        this.sessions = sessions;
        this.locks = locks;
        this.closed = closed;
        this.starter = starter;
        this.destroyer = destroyer;
        this.specs = specs;
        this.archives = archives;
        this.processes = processes;
        this.removals = removals;
        this.stats = stats;
        this.events = events;
        this.egress = egress;
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
    void acquireLocked(SessionEntry e, SandboxSpec spec, String encoded, String fingerprint,
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
            starter.start(e, rec.specFingerprint().equals(fingerprint) ? rec
                    : Egress.specChanged(rec.withSpec(encoded, fingerprint, spec.ephemeral())), spec, false);
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
            destroyer.destroyLocked(e, e.deactivate(false, 0, 0), null, false);
        } catch (SandboxException notFinished) {
            throw new SandboxAcquireException("session " + rec.sessionId() + " is still being destroyed ("
                    + notFinished.getMessage() + "); acquire it again once the destroy has finished", notFinished, true);
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

    /**
     * Stores a new egress policy on the session and applies it to the live sandbox's next connection; starts the
     * endpoint of a live sandbox that had none.
     */
    void updateEgress(String sessionId, @Nullable EgressPolicy policy) {
        SessionIds.requireValid(sessionId);
        checkOpen();
        String encoded = Egress.encode(policy);
        locks.underLock(sessionId, e -> {
            SessionRecord rec = usable(sessionId);
            Map<String, String> attributes = new HashMap<>(rec.attributes());
            attributes.put(Egress.ATTR_POLICY, encoded);
            SessionRecord written = store.update(rec.withAttributes(attributes)).orElseThrow(StaleRecord::new);
            if (e.isActive() && Objects.equals(e.sandboxId(), written.sandboxId())) {
                boolean endpointUp = Egress.policyOf(e.record, e.spec) != null;
                e.record = written;
                if (policy != null && !endpointUp) {
                    starter.startEgress(e, policy);
                } else {
                    egress.update(sessionId, policy);
                }
            }
            log.info("Session {}: egress now allows {}", sessionId, policy == null ? "no proxy" : policy.describe());
            return null;
        });
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
                destroyer.destroyLocked(e, e.deactivate(false, 0, 0), incarnation, true);
            } finally {
                // Only now: until the destroy is over, a concurrent acquire waits on this entry's lock
                // instead of starting a container on a workdir about to be deleted.
                sessions.forget(e);
                egress.forget(sessionId);
            }
            return null;
        });
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
            if (rec.isPresent() && SessionRecords.workdirElsewhere(workspaces, rec.get()).isPresent()) {
                // Another host's workdir: its manager finishes the destroy; claiming it here would only hold it up.
                log.debug("Session {}: pending destroy left to the manager on the workdir's host", sessionId);
                return false;
            }
            return destroyer.destroyLocked(e, e.deactivate(false, 0, 0), null, false);
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

    /**
     * Removes the session's container and then records the session SUSPENDED, keeping the workdir. Called with
     * the lifecycle lock held. An ephemeral session is destroyed instead: it is never resumed.
     *
     * @return whether the container was taken away; false if the session was busy (idle reaping yields to
     *         activity) or is now owned by another manager
     * @throws SandboxException if the container could not be removed: the session then keeps it, still ACTIVE,
     *                          and is retried (never recorded SUSPENDED beside a container that lives on)
     */
    boolean stop(SessionEntry e, StopReason reason) {
        boolean onlyIfIdle = reason == StopReason.IDLE;
        String sandboxId = e.deactivate(onlyIfIdle, clock.millis(), idleMillis);
        if (sandboxId == null) {
            return false;
        }
        processes.containerGone(sandboxId, reason.processFate);
        if (e.record.ephemeral() || (reason == StopReason.CLOSED && e.record.attributes().containsKey(SCOPE_OWNER))) {
            destroyer.destroyLocked(e, sandboxId, e.record.createdAt(), false);
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
                .flatMap(r -> SessionRecords.updateQuietly(store, r.withSandbox(SessionState.SUSPENDED, null, null)
                        .withOwner(null, null).withLastActivity(Instant.ofEpochMilli(e.lastActivity()))));
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

    // ---------------------------------------------------------------- workdir here, close

    /** The session's record with its workdir on this host (unpacked from the archive tier first). Lock held. */
    private SessionRecord local(SessionEntry e) {
        return local(e.sessionId);
    }

    /** {@link #local(SessionEntry)} by id, for a step that holds the session's lock through another entry. */
    SessionRecord local(String sessionId) {
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

    /** The session's record, if it exists and is neither destroyed nor being destroyed. */
    SessionRecord usable(String sessionId) {
        return store.find(sessionId)
                .filter(r -> r.state() != SessionState.DESTROYED && r.state() != SessionState.DESTROYING)
                .orElseThrow(() -> SessionRecords.notFound(sessionId));
    }

    /** Suspends the session because the manager is closing; runs on the scheduler, one session per task. */
    void suspendForClose(SessionEntry e) {
        locks.lock(e);
        try {
            if (!e.isGone()) {
                stop(e, StopReason.CLOSED);
            }
        } finally {
            locks.unlock(e);
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

    static String shortId(String id) {
        return id != null && id.length() > 12 ? id.substring(0, 12) : id;
    }
}
