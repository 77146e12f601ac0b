package dev.sandboxkit.internal;

import dev.sandboxkit.EgressPolicy;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.ComputeDriver;
import dev.sandboxkit.spi.WorkspaceBackend;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import static dev.sandboxkit.internal.LifecycleEngine.SCOPE_OWNER;
import static dev.sandboxkit.internal.LifecycleEngine.shortId;

/**
 * Starts a session's container and records it ACTIVE: a new session's workdir and first record (from a warm pool
 * when one fits the spec), or a fresh container on the workdir a suspended session has. The engine decides when;
 * every call here runs with the session's lifecycle lock held, and a lost compare-and-set throws {@link StaleRecord}
 * so that the engine's step starts over from a fresh read.
 */
final class ContainerStarter {
    private static final Logger log = LoggerFactory.getLogger(ContainerStarter.class);

    private final ComputeDriver compute;
    private final WorkspaceBackend workspaces;
    private final SessionStore store;
    private final Clock clock;
    private final Leases leases;
    private final String instanceId;
    private final ManagerIdentity identity;
    private final ContainerSetup setup;
    private final Snapshots snapshots;
    private final Archives archives;
    private final WarmPools pools;
    private final Removals removals;
    private final Stats stats;
    private final Events events;
    private final Egress egress;
    /** The phase of a start that brings up the egress endpoint (in the Created and Resumed events). */
    static final String PHASE_EGRESS = "egress";

    ContainerStarter(ComputeDriver compute, WorkspaceBackend workspaces, SessionStore store, Clock clock, Leases leases,
                     ManagerIdentity identity, ContainerSetup setup, Snapshots snapshots, Archives archives,
                     WarmPools pools, Removals removals, Stats stats, Events events, Egress egress) {
        this.compute = compute;
        this.workspaces = workspaces;
        this.store = store;
        this.clock = clock;
        this.leases = leases;
        this.instanceId = identity.instanceId();
        this.identity = identity;
        this.setup = setup;
        this.snapshots = snapshots;
        this.archives = archives;
        this.pools = pools;
        this.removals = removals;
        this.stats = stats;
        this.events = events;
        this.egress = egress;
    }

    /**
     * Creates a new session (or a new incarnation of a destroyed one) and starts its first container: from the warm
     * pool for its spec if one has a sandbox, else cold, on a workdir first filled from {@code copyFrom} (another
     * workdir: a fork), else from the spec's template.
     *
     * @param found     the id's destroyed record, whose version the new incarnation replaces; empty for a new id
     */
    void startNew(SessionEntry e, SandboxSpec spec, String encoded, String fingerprint,
                  Optional<SessionRecord> found, String copyFrom) {
        String sessionId = e.sessionId;
        PoolManager pool = copyFrom == null ? pools.forSpec(fingerprint) : null;
        if (pool != null) {
            PoolManager.Slot slot = pool.checkout();
            if (slot != null && startFromPool(e, spec, encoded, fingerprint, found, pool, slot)) {
                return;
            }
        }
        Instant now = leases.now();
        String workspace = workspaces.createWorkspace(sessionId, spec);
        SessionRecord fresh = newRecord(sessionId, SessionState.SUSPENDED, null, workspace, encoded, fingerprint,
                spec.ephemeral(), now, null);
        SessionRecord rec = writeNew(fresh, found).orElseThrow(StaleRecord::new);
        try {
            // After the record claims the id (a loser of that race must not fill the winner's workdir), before the
            // first container: seeded once, never on resume. A failure discards the session below.
            if (copyFrom != null) {
                workspaces.restoreWorkspace(copyFrom, workspace, spec);
            } else {
                snapshots.seed(workspace, spec);
            }
            start(e, rec, spec, true);
        } catch (RuntimeException ex) {
            if (!(ex instanceof StaleRecord)) {
                discardFreshSession(rec);
            }
            throw ex;
        }
    }

    /** Marks a manager-scoped session as this manager's to end (and unmarks one whose spec no longer is). */
    private Map<String, String> scoped(Map<String, String> attributes, SandboxSpec spec) {
        if (spec.managerScoped()) {
            attributes.put(SCOPE_OWNER, instanceId);
        } else {
            attributes.remove(SCOPE_OWNER);
        }
        return attributes;
    }

    private SessionRecord newRecord(String sessionId, SessionState state, String sandboxId, String workspace,
                                    String encoded, String fingerprint, boolean ephemeral, Instant now, Instant started) {
        return SessionRecord.builder().sessionId(sessionId).driver(compute.name()).state(state)
                .sandboxId(sandboxId).workspace(workspace).spec(encoded).specFingerprint(fingerprint)
                .ephemeral(ephemeral).createdAt(now).lastActivity(now).sandboxStartedAt(started).owner(instanceId)
                .leaseExpiry(leases.lease(now)).version(1).attributes(Map.of()).build();
    }

    /** Inserts a new session, or restarts a destroyed one's record as a new incarnation. */
    private Optional<SessionRecord> writeNew(SessionRecord fresh, Optional<SessionRecord> destroyed) {
        if (destroyed.isEmpty()) {
            return store.insert(fresh) ? Optional.of(fresh) : Optional.empty();
        }
        return store.update(fresh.withVersion(destroyed.get().version()));
    }

    /** Hands a pre-started pool sandbox to a new session. Returns false to fall back to a cold start. */
    private boolean startFromPool(SessionEntry e, SandboxSpec spec, String encoded, String fingerprint,
                                  Optional<SessionRecord> destroyed, PoolManager pool, PoolManager.Slot slot) {
        long t0 = System.nanoTime();
        String workspace;
        try {
            workspace = workspaces.adoptWorkspace(slot.workspace(), e.sessionId);
        } catch (RuntimeException ex) {
            log.warn("Session {}: could not adopt pool workdir {} ({}); starting cold", e.sessionId,
                    slot.workspace(), ex.toString());
            pool.discard(slot.sandboxId(), slot.workspace());
            return false;
        }
        Instant now = leases.now();
        SessionRecord fresh = newRecord(e.sessionId, SessionState.ACTIVE, slot.sandboxId(), workspace, encoded,
                fingerprint, spec.ephemeral(), now, Instant.ofEpochMilli(slot.startedAt()))
                .withAttributes(scoped(new HashMap<>(slot.attributes()), spec));
        Optional<SessionRecord> written;
        try {
            if (spec.egress() != null) {
                egress.start(e.sessionId, slot.sandboxId(), spec.egress()); // a new session: its spec's policy
                egress.forgetSlot(slot.slotId());
            }
            written = writeNew(fresh, destroyed);
        } catch (RuntimeException ex) {
            pool.discard(slot.sandboxId(), workspace);
            throw ex;
        }
        if (written.isEmpty()) {
            pool.discard(slot.sandboxId(), workspace); // never back into the pool: it was handed out
            throw new StaleRecord();
        }
        e.activate(written.get(), spec, setup.execEnvironment(spec, spec.egress() != null), slot.sandboxId(),
                clock.millis(), slot.startedAt());
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        stats.created.increment();
        stats.poolHits.increment();
        log.info("Session {}: took pre-started container {} from the warm pool in {} ms", e.sessionId,
                shortId(slot.sandboxId()), took.toMillis());
        if (events.enabled()) {
            events.emit(new SandboxEvent.Created(e.sessionId, slot.sandboxId(), now, Map.of("pool-checkout", took),
                    took, true));
        }
        return true;
    }

    /** An acquire that failed before its first container must not leave an empty session behind. */
    private void discardFreshSession(SessionRecord rec) {
        try {
            store.find(rec.sessionId()).filter(r -> r.state() == SessionState.SUSPENDED && r.sandboxStartedAt() == null)
                    .ifPresent(r -> store.delete(r.sessionId(), r.version()));
            workspaces.deleteWorkspace(rec.workspace());
        } catch (RuntimeException cleanup) {
            log.warn("Session {}: could not clean up after a failed acquire: {}", rec.sessionId(), cleanup.toString());
        }
    }

    /**
     * Starts a container for the session and records it ACTIVE. Called with the lifecycle lock held.
     * Takes over an ACTIVE record only if this manager owns it or its owner's lease has lapsed.
     */
    void start(SessionEntry e, SessionRecord rec, SandboxSpec spec, boolean fresh) {
        if (!Archives.isArchived(rec)) {
            // Before the takeover below writes anything.
            SessionRecords.requireWorkdirHere(workspaces, rec, "acquire it there");
        }
        Instant now = leases.now();
        if (rec.state() == SessionState.ACTIVE) {
            if (!instanceId.equals(rec.owner()) && !rec.leaseExpired(now)) {
                throw new SandboxAcquireException("session " + rec.sessionId() + " is held by live manager "
                        + rec.owner() + " (lease until " + rec.leaseExpiry() + ")", null, true);
            }
            // Ours from before, or abandoned by a crashed manager: claim it, then clear its old container.
            String old = rec.sandboxId();
            String previousOwner = rec.owner();
            rec = store.update(rec.withSandbox(SessionState.SUSPENDED, null, null)
                            .withOwner(instanceId, leases.lease(now)))
                    .orElseThrow(StaleRecord::new);
            if (old != null) {
                log.info("Session {}: taking over from {}, removing its container {}", rec.sessionId(),
                        previousOwner, shortId(old));
                removals.remove(old);
            }
        }
        if (rec.state() == SessionState.SUSPENDED && rec.owner() != null && !instanceId.equals(rec.owner())
                && !rec.leaseExpired(now)) {
            // Another live manager is archiving, restoring or starting it (a new session, or one just restored).
            throw Archives.heldElsewhere(rec, Archives.stepHeldBy(rec));
        }
        long t0 = System.nanoTime();
        Map<String, Duration> phases = new LinkedHashMap<>();
        if (Archives.isArchived(rec)) {
            rec = archives.restore(rec, spec, took -> phases.put("archive-restore", took)).orElseThrow(StaleRecord::new);
            // An upload that never finished left it where it was.
            SessionRecords.requireWorkdirHere(workspaces, rec, "acquire it there");
        }
        String sandboxId;
        try {
            sandboxId = compute.create(new CreateRequest(rec.sessionId(), spec, rec.workspace(),
                    identity.labels(rec.sessionId(), spec), phases::put));
        } catch (SandboxException createFailed) {
            // Another manager destroying the session can pull the workdir from under the create: look again.
            if (!createFailed.isRetryable() && changedSince(rec)) {
                throw new StaleRecord();
            }
            throw createFailed;
        }
        Instant started = leases.now();
        SessionRecord written;
        EgressPolicy policy = Egress.policyOf(rec, spec);
        try {
            if (policy != null) {
                long egressStart = System.nanoTime();
                egress.start(rec.sessionId(), sandboxId, policy);
                phases.put(PHASE_EGRESS, Duration.ofNanos(System.nanoTime() - egressStart));
            }
            Map<String, String> attributes = new HashMap<>(rec.attributes());
            attributes.putAll(setup.prepare(compute, rec.sessionId(), sandboxId, spec, phases, policy != null));
            written = store.update(rec.withSandbox(SessionState.ACTIVE, sandboxId, started)
                    .withOwner(instanceId, leases.lease(started)).withLastActivity(started)
                    .withAttributes(scoped(attributes, spec)))
                    .orElse(null);
        } catch (RuntimeException setupOrStoreFailed) {
            removals.removeQuietly(sandboxId);
            throw setupOrStoreFailed;
        }
        if (written == null) {
            removals.removeQuietly(sandboxId);
            throw new StaleRecord();
        }
        long nowMillis = clock.millis();
        e.activate(written, spec, setup.execEnvironment(spec, policy != null), sandboxId, nowMillis, nowMillis);
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        boolean resumed = !fresh;
        if (resumed) {
            stats.resumedOne();
        } else {
            stats.created.increment();
        }
        log.info("Session {}: {} container {} in {} ms", rec.sessionId(), resumed ? "resumed with fresh" : "created",
                shortId(sandboxId), took.toMillis());
        if (events.enabled()) {
            events.emit(resumed ? new SandboxEvent.Resumed(rec.sessionId(), sandboxId, started, phases, took)
                    : new SandboxEvent.Created(rec.sessionId(), sandboxId, started, phases, took, false));
        }
    }

    /**
     * Starts the egress endpoint of a live sandbox whose session had none, and adds its variables to the commands
     * run from now on. Lifecycle lock held.
     */
    void startEgress(SessionEntry e, EgressPolicy policy) {
        egress.start(e.sessionId, e.sandboxId(), policy);
        e.execEnv = setup.execEnvironment(e.spec, true);
    }

    /** Whether the stored record moved on since {@code rec} was read (a failed step may have raced a writer). */
    private boolean changedSince(SessionRecord rec) {
        try {
            return store.find(rec.sessionId()).map(r -> r.version() != rec.version()).orElse(true);
        } catch (RuntimeException storeDown) {
            return false;
        }
    }
}
