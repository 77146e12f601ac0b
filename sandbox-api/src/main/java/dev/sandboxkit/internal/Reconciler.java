package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SandboxDescriptor;
import dev.sandboxkit.spi.ComputeDriver;
import dev.sandboxkit.spi.WorkspaceBackend;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.spi.WorkspaceDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The orphan sweep: compares the managed containers (found by label) with the store and removes the ones
 * no live manager accounts for, so that a crashed process leaks nothing for long.
 *
 * <p>A container is judged only by the records of the store it was created under (its store label, see
 * {@link StoreIdentity}): one of another store is never touched, unless that store was an in-memory one whose
 * process is provably gone. Then, in order: a container of another manager whose lease is live is never touched;
 * one of this manager that it does not hold (and is not starting) is an orphan; otherwise the container is removed
 * when its session is unknown, suspended or destroyed, when it is not the session's current container, or when
 * the session's owner has let its lease expire or left no presence in the store for longer than the grace (the
 * session is first recorded SUSPENDED by compare-and-set, so it resumes on its next use). ACTIVE records whose
 * container is gone become SUSPENDED. Then the labelled workdirs no record names and the unkept snapshots of gone
 * sessions, with stricter rules (see sweepWorkdirs): a workdir is data.
 */
final class Reconciler {
    private static final Logger log = LoggerFactory.getLogger(Reconciler.class);
    /** Records per store query; a pass reads every page, so the page size bounds only each query. */
    static final int PAGE_SIZE = 500;

    private final ComputeDriver compute;
    private final WorkspaceBackend workspaces;
    private final SessionStore store;
    private final Clock clock;
    private final Leases leases;
    private final String instanceId;
    private final String fleet;
    private final String storeId;
    private final SessionRegistry sessions;
    private final Removals removals;
    private final Stats stats;
    private final Events events;
    private final LifecycleActions engine;
    private final Collection<PoolManager> pools;
    private final Snapshots snapshots;
    private final StoreIdentity storeIdentity;
    /** How old an unaccounted-for resource must be before only its age is taken as proof. */
    private final Duration grace;
    /** When the next pass reads every record for manager-scoped sessions of gone managers (clock millis). */
    private long nextScopedSweep;
    /** Scope owners first seen without presence in this store, and when. */
    private final Map<String, Instant> absentSince = new HashMap<>();

    Reconciler(ComputeDriver compute, WorkspaceBackend workspaces, SessionStore store, Clock clock, Leases leases,
               ManagerIdentity identity, SessionRegistry sessions, Removals removals, Stats stats, Events events,
               LifecycleActions engine, Collection<PoolManager> pools, Snapshots snapshots, StoreIdentity storeIdentity,
               Duration grace) {
        this.compute = compute;
        this.workspaces = workspaces;
        this.store = store;
        this.clock = clock;
        this.leases = leases;
        this.instanceId = identity.instanceId();
        this.fleet = identity.fleet();
        this.storeId = identity.storeId();
        this.sessions = sessions;
        this.removals = removals;
        this.stats = stats;
        this.events = events;
        this.engine = engine;
        this.pools = List.copyOf(pools);
        this.snapshots = snapshots;
        this.storeIdentity = storeIdentity;
        this.grace = grace;
    }

    /** One pass; returns the number of containers removed. */
    synchronized int run() {
        Instant now = leases.now();
        finishDestroys(now, false);
        // Records first, containers second: a record ACTIVE before the listing has its container in it
        // unless that container was really removed (and then the compare-and-set below settles it).
        // Only what the comparison needs is kept per record; the rare record acted on is read again.
        Map<String, ActiveRecord> active = new HashMap<>();
        forEachInState(SessionState.ACTIVE, r -> active.put(r.sessionId(), new ActiveRecord(r.sandboxId(), r.version())));
        List<SandboxDescriptor> containers = compute.list(Map.of(SandboxLabels.MANAGED, "true",
                SandboxLabels.FLEET, fleet));
        Set<String> held = sessions.containers();
        Map<String, Boolean> liveOwners = new HashMap<>();
        Map<String, Boolean> goneStores = new HashMap<>();
        int removed = 0;
        for (SandboxDescriptor c : containers) {
            if (held.contains(c.id()) || removals.removedRecently(c.id())
                    || pools.stream().anyMatch(p -> p.owns(c.id()))) {
                continue; // ours, or already removed by us since the listing was taken
            }
            String reason = orphanReason(c, now, liveOwners, goneStores);
            if (reason == null) {
                continue;
            }
            removals.remove(c.id());
            removed++;
            stats.orphansRemoved.increment();
            log.info("Removed orphan container {} (session {}, owner {}): {}", LifecycleEngine.shortId(c.id()),
                    c.sessionId(), c.owner(), reason);
            events.emit(new SandboxEvent.OrphanRemoved(Objects.requireNonNullElse(c.sessionId(), ""), c.id(),
                    clock.instant(), reason));
        }
        Set<String> present = new HashSet<>();
        containers.forEach(c -> present.add(c.id()));
        for (Map.Entry<String, ActiveRecord> a : active.entrySet()) {
            if (a.getValue().sandboxId() == null || !present.contains(a.getValue().sandboxId())) {
                // Only if it is still the record seen before the listing: a newer one may have a newer container.
                store.find(a.getKey()).filter(r -> r.version() == a.getValue().version())
                        .ifPresent(r -> suspendIfContainerGone(r, now, liveOwners));
            }
        }
        forgetGoneStores(goneStores);
        if (now.toEpochMilli() >= nextScopedSweep) {
            // Reads every record: at build, then once per grace, which bounds how late such a session goes.
            nextScopedSweep = now.toEpochMilli() + grace.toMillis();
            discardScopedSessions(owner -> !instanceId.equals(owner) && isGone(owner, now, liveOwners));
        }
        sweepWorkdirs(now, liveOwners);
        sweepSnapshots(now, liveOwners);
        return removed;
    }

    /**
     * Destroys the {@linkplain dev.sandboxkit.SandboxSpec#managerScoped() manager-scoped} sessions whose scope owner
     * matches: container, workdir and all. Never fails the pass.
     */
    private void discardScopedSessions(java.util.function.Predicate<String> ownerGone) {
        List<String> doomed = new java.util.ArrayList<>();
        try {
            for (SessionState state : List.of(SessionState.ACTIVE, SessionState.SUSPENDED)) {
                forEachInState(state, r -> {
                    String scopeOwner = r.attributes().get(LifecycleEngine.SCOPE_OWNER);
                    if (scopeOwner != null && ownerGone.test(scopeOwner)
                            && (r.state() == SessionState.SUSPENDED || instanceId.equals(r.owner())
                            || r.owner() == null || r.leaseExpired(leases.now()))) {
                        doomed.add(r.sessionId());
                    }
                });
            }
        } catch (RuntimeException storeDown) {
            log.warn("Could not look for manager-scoped sessions to discard: {}", storeDown.toString());
            return;
        }
        for (String sessionId : doomed) {
            try {
                if (engine.retryDestroy(sessionId)) { // destroys the session whatever its state
                    log.info("Session {}: destroyed, with its workdir: it was scoped to a manager that is gone",
                            sessionId);
                }
            } catch (RuntimeException e) {
                log.warn("Session {}: could not destroy this manager-scoped session: {}", sessionId, e.toString());
            }
        }
    }

    /** An owner whose lease in this store expired, or who left no presence in it for longer than the grace. */
    private boolean isGone(String owner, Instant now, Map<String, Boolean> liveOwners) {
        Boolean live = liveness(owner, now, liveOwners);
        return Boolean.FALSE.equals(live) || (live == null && presenceGoneSince(owner, now));
    }

    /** Absent presence counts only once the grace has passed since this manager first saw it absent. */
    private boolean presenceGoneSince(String owner, Instant now) {
        Instant first = absentSince.computeIfAbsent(owner, o -> now);
        return !first.plus(grace).isAfter(now);
    }

    /** Deletes the lock files of gone in-memory stores once none of their containers is left. */
    private void forgetGoneStores(Map<String, Boolean> goneStores) {
        goneStores.forEach((store, gone) -> {
            if (gone && compute.list(Map.of(SandboxLabels.MANAGED, "true", SandboxLabels.STORE, store)).isEmpty()) {
                storeIdentity.forget(store);
            }
        });
    }

    /**
     * Deletes workdirs (those a driver can list: labelled ones) that no session record refers to, once they are
     * older than the grace and their creator is this manager (an interrupted create, a failed
     * discard) or a manager whose lease expired. Another live manager's, or an owner this store has never heard of,
     * are left alone: a workdir is data, never deleted on a guess. Never fails the pass.
     */
    private void sweepWorkdirs(Instant now, Map<String, Boolean> liveOwners) {
        List<WorkspaceDescriptor> all;
        try {
            all = workspaces.listWorkspaces(Map.of(SandboxLabels.MANAGED, "true"));
        } catch (RuntimeException e) {
            log.warn("Could not list workdirs for the orphan sweep: {}", e.toString());
            return;
        }
        Set<String> referenced = null; // read only when a candidate turns up
        for (WorkspaceDescriptor w : all) {
            String sessionId = w.labels().get(SandboxLabels.SESSION);
            String owner = w.labels().get(SandboxLabels.OWNER);
            if (sessionId == null || owner == null || w.createdAt().plus(grace).isAfter(now)) {
                continue;
            }
            if (instanceId.equals(owner)) {
                SessionEntry e = sessions.get(sessionId);
                if (e != null || sessionId.startsWith(PoolManager.SLOT_PREFIX)) {
                    continue; // held here, or a slot of this manager's pool (waiting, or adopted under another id)
                }
            } else if (!Boolean.FALSE.equals(liveness(owner, now, liveOwners))) {
                continue; // a live manager's, or an owner unknown to this store
            }
            if (store.find(sessionId).filter(r -> r.state() != SessionState.DESTROYED).isPresent()) {
                continue;
            }
            if (referenced == null) {
                referenced = referencedWorkspaces();
            }
            if (referenced.contains(w.location())) {
                continue; // an adopted pool slot's workdir, now another session's
            }
            try {
                workspaces.deleteWorkspace(w.location());
                log.info("Removed orphan workdir {} (session {}, owner {}): no session record refers to it",
                        w.location(), sessionId, owner);
            } catch (RuntimeException e) {
                log.warn("Could not remove orphan workdir {}: {}", w.location(), e.toString());
            }
        }
    }

    /** Every workdir location a live session record names (one read of the records, paged). */
    private Set<String> referencedWorkspaces() {
        Set<String> out = new HashSet<>();
        for (SessionState state : List.of(SessionState.ACTIVE, SessionState.SUSPENDED, SessionState.DESTROYING)) {
            forEachInState(state, r -> {
                if (r.workspace() != null) {
                    out.add(r.workspace());
                }
            });
        }
        return out;
    }

    /**
     * Deletes the fleet's unkept snapshots whose session is gone (a destroy deletes them, but gives up on a failure)
     * once they are older than the grace, of this store (when labelled with one), and taken by this manager or one whose lease expired (as
     * for workdirs: another application's store on the same engine knows sessions this one does not). Kept ones are
     * never touched. Never fails the pass.
     */
    private void sweepSnapshots(Instant now, Map<String, Boolean> liveOwners) {
        try {
            snapshots.sweepOrphans(d -> {
                String sessionId = d.labels().get(SandboxLabels.SESSION);
                String owner = d.labels().get(SandboxLabels.OWNER);
                String storeLabel = d.labels().get(SandboxLabels.STORE);
                if (sessionId == null || owner == null || sessions.get(sessionId) != null
                        || (storeLabel != null && !storeLabel.equals(storeId))) {
                    return false;
                }
                if (!instanceId.equals(owner) && !Boolean.FALSE.equals(liveness(owner, now, liveOwners))) {
                    return false;
                }
                return store.find(sessionId).filter(r -> r.state() != SessionState.DESTROYED).isEmpty();
            }, now.minus(grace));
        } catch (RuntimeException e) {
            log.warn("Could not sweep orphan snapshots: {}", e.toString());
        }
    }

    /** What a pass keeps of an ACTIVE record read before the container listing. */
    private record ActiveRecord(String sandboxId, long version) {
    }

    /** Calls {@code action} for every record in {@code state}, a store page at a time. */
    private void forEachInState(SessionState state, java.util.function.Consumer<SessionRecord> action) {
        String after = null;
        while (true) {
            List<SessionRecord> page = store.findByState(state, after, PAGE_SIZE);
            page.forEach(action);
            if (page.size() < PAGE_SIZE) {
                return;
            }
            after = page.get(page.size() - 1).sessionId();
        }
    }

    /**
     * Finishes destroys that did not finish (DESTROYING): this manager's own that failed, and those of managers
     * that are gone. A live manager's are left to it.
     */
    private void finishDestroys(Instant now, boolean onlyOurs) {
        Map<String, Boolean> liveOwners = new HashMap<>();
        List<SessionRecord> destroying = new java.util.ArrayList<>();
        forEachInState(SessionState.DESTROYING, destroying::add);
        for (SessionRecord rec : destroying) {
            boolean ours = instanceId.equals(rec.owner());
            if ((onlyOurs && !ours) || (!ours && rec.owner() != null && !rec.leaseExpired(now)
                    && isLive(rec.owner(), now, liveOwners))) {
                continue;
            }
            try {
                if (engine.retryDestroy(rec.sessionId())) {
                    log.info("Session {}: finished a destroy that had not completed", rec.sessionId());
                }
            } catch (RuntimeException stillFailing) {
                log.warn("Session {}: destroy still not finished: {}", rec.sessionId(), stillFailing.toString());
            }
        }
    }

    /**
     * The manager is closing, its sessions stopped and its pools drained: one last try at the destroys it owns,
     * and removal of anything still labelled with its owner id (removals that failed earlier), so that a
     * closed manager leaves nothing of its own behind while the engine answers.
     */
    synchronized void closing() {
        try {
            finishDestroys(leases.now(), true);
        } catch (RuntimeException storeDown) {
            log.warn("Could not finish pending destroys while closing: {}", storeDown.toString());
        }
        discardScopedSessions(instanceId::equals); // the reaped ones: the held ones went as they stopped
        List<SandboxDescriptor> left;
        try {
            left = compute.list(Map.of(SandboxLabels.MANAGED, "true", SandboxLabels.OWNER, instanceId));
        } catch (RuntimeException engineDown) {
            log.warn("Could not look for containers left behind while closing ({}); the next manager of fleet {} "
                    + "sharing this store removes them", engineDown.toString(), fleet);
            return;
        }
        for (SandboxDescriptor c : left) {
            String storeLabel = c.labels().get(SandboxLabels.STORE);
            if (storeLabel != null && !storeLabel.equals(storeId)) {
                continue; // another application that chose the same instance id
            }
            try {
                removals.remove(c.id());
                log.info("Removed container {} of session {} left behind by an earlier failed removal",
                        LifecycleEngine.shortId(c.id()), c.sessionId());
            } catch (RuntimeException stillThere) {
                log.warn("Could not remove container {} while closing: {}", LifecycleEngine.shortId(c.id()),
                        stillThere.toString());
            }
        }
    }

    private String orphanReason(SandboxDescriptor c, Instant now, Map<String, Boolean> liveOwners,
                                Map<String, Boolean> goneStores) {
        String owner = c.owner();
        String sessionId = c.sessionId();
        String storeLabel = c.labels().get(SandboxLabels.STORE);
        if (storeLabel != null && !storeLabel.equals(storeId)) {
            // Another store's records account for it; this store's say nothing (an owner unknown here may be
            // another application's live manager). Only an in-memory store proven gone with its process settles it.
            if (goneStores.computeIfAbsent(storeLabel, storeIdentity::provablyGone)) {
                return c.labels().containsKey(SandboxLabels.POOL) || sessionId == null
                        ? "unused warm-pool container; its in-memory store " + storeLabel + " is gone with its process"
                        : "its in-memory store " + storeLabel + " is gone with its process, and every session in it";
            }
            return null;
        }
        if (instanceId.equals(owner)) {
            // Looked at now, not from the snapshot taken after the listing: a start that finished since then
            // holds the container, and one still running holds the session's lock.
            SessionEntry e = sessionId == null ? null : sessions.get(sessionId);
            if ((e != null && (e.lifecycle.isLocked() || c.id().equals(e.sandboxId())))
                    || (c.labels().containsKey(SandboxLabels.POOL) && pools.stream().anyMatch(PoolManager::isStarting))) {
                return null; // being started right now
            }
            return "created by this manager but not held by it (an interrupted start)";
        }
        Boolean live = owner == null ? Boolean.FALSE : liveness(owner, now, liveOwners);
        if (Boolean.TRUE.equals(live)) {
            return null; // never touch a live manager's containers
        }
        if (live == null && (storeLabel == null || c.createdAt().plus(grace).isAfter(now))) {
            // An owner that left no presence in this store: with the store label it wrote here and closed (its
            // presence goes last), which the grace confirms; without one (an older version) nothing is proven.
            return null;
        }
        String dead = owner == null ? "no owner label"
                : live == null ? "owner " + owner + " left no presence in this store and the container is older than "
                + grace : "owner " + owner + " is gone (lease expired)";
        if (c.labels().containsKey(SandboxLabels.POOL) || sessionId == null) {
            return "unused warm-pool container; " + dead;
        }
        Optional<SessionRecord> found = store.find(sessionId);
        if (found.isEmpty()) {
            return "unknown session; " + dead;
        }
        SessionRecord rec = found.get();
        if (rec.state() != SessionState.ACTIVE) {
            return "session is " + rec.state() + "; " + dead;
        }
        if (!c.id().equals(rec.sandboxId())) {
            return "not the session's current container; " + dead;
        }
        if (instanceId.equals(rec.owner()) || (rec.owner() != null && isLive(rec.owner(), now, liveOwners))) {
            return null; // the session has moved to a live manager, which manages this container
        }
        // Claim the session back to SUSPENDED first, so that exactly one sweeper removes the container.
        Optional<SessionRecord> claimed = store.update(rec.withSandbox(SessionState.SUSPENDED, null, null)
                .withOwner(null, null));
        return claimed.isPresent() ? "session was ACTIVE under a gone owner; recorded SUSPENDED" : null;
    }

    private void suspendIfContainerGone(SessionRecord rec, Instant now, Map<String, Boolean> liveOwners) {
        if (rec.sessionId().startsWith(LifecycleEngine.PRESENCE_PREFIX)) {
            return;
        }
        if (instanceId.equals(rec.owner())) {
            SessionEntry e = sessions.get(rec.sessionId());
            if (e != null && e.lifecycle.isLocked()) {
                return;
            }
            if (e != null && rec.sandboxId() != null && rec.sandboxId().equals(e.sandboxId())) {
                log.info("Session {}: container {} is gone; recording SUSPENDED", rec.sessionId(),
                        LifecycleEngine.shortId(rec.sandboxId()));
                engine.forgetContainer(e, rec.sandboxId());
                return;
            }
        } else if (rec.owner() != null && isLive(rec.owner(), now, liveOwners)) {
            return; // its owner will notice on the next exec
        }
        store.update(rec.withSandbox(SessionState.SUSPENDED, null, null)
                        .withOwner(instanceId.equals(rec.owner()) ? rec.owner() : null, null))
                .ifPresent(r -> log.info("Session {}: ACTIVE but its container {} is gone; recorded SUSPENDED",
                        r.sessionId(), LifecycleEngine.shortId(rec.sandboxId())));
    }

    /** A manager is live while its presence record's lease is renewed. */
    private boolean isLive(String owner, Instant now, Map<String, Boolean> cache) {
        return !Boolean.FALSE.equals(liveness(owner, now, cache));
    }

    /** {@code true} live, {@code false} gone (its presence lease expired), {@code null} unknown to this store. */
    private Boolean liveness(String owner, Instant now, Map<String, Boolean> cache) {
        if (owner.equals(instanceId)) {
            return Boolean.TRUE;
        }
        if (!cache.containsKey(owner)) {
            cache.put(owner, store.find(LifecycleEngine.PRESENCE_PREFIX + owner)
                    .map(r -> !r.leaseExpired(now)).orElse(null));
        }
        return cache.get(owner);
    }
}
