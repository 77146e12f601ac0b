package dev.sandboxkit.internal;

import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static dev.sandboxkit.internal.LifecycleEngine.shortId;

/**
 * The lease pass: writes every owned session's latest activity and this manager's lease to the store in one call
 * (execs themselves never touch the store), and lets go of the sessions the store says another manager owns now.
 */
final class LeaseRenewal {
    private static final Logger log = LoggerFactory.getLogger(LeaseRenewal.class);

    private final SessionStore store;
    private final Clock clock;
    private final Leases leases;
    private final String instanceId;
    private final SessionRegistry sessions;
    private final SessionLocks locks;
    private final PortForwards forwards;
    private final ClosedFlag closed;

    /** @param forwards closed when their container goes to another manager */
    LeaseRenewal(SessionStore store, Clock clock, Leases leases, String instanceId, SessionRegistry sessions,
                 SessionLocks locks, PortForwards forwards, ClosedFlag closed) {
        this.store = store;
        this.clock = clock;
        this.leases = leases;
        this.instanceId = instanceId;
        this.sessions = sessions;
        this.locks = locks;
        this.forwards = forwards;
        this.closed = closed;
    }

    /** Renews this manager's lease and flushes last-activity to the store. Runs on a scheduler thread. */
    void renew() {
        if (closed.isClosed()) {
            return;
        }
        Map<String, Instant> activity = new HashMap<>();
        Set<SessionEntry> held = new HashSet<>();
        for (SessionEntry e : sessions.all()) {
            if (!e.isActive()) {
                continue;
            }
            held.add(e);
            long last = e.lastActivity();
            if (last > e.flushedActivity) {
                activity.put(e.sessionId, Instant.ofEpochMilli(last));
            }
        }
        Instant now = clock.instant();
        List<String> owned = store.heartbeat(instanceId, activity, leases.lease(now));
        Set<String> stillOwned = new HashSet<>(owned);
        for (SessionEntry e : held) {
            Instant flushed = activity.get(e.sessionId);
            if (flushed != null) {
                e.flushedActivity = flushed.toEpochMilli();
            }
            if (!stillOwned.contains(e.sessionId)) {
                lostOwnership(e);
            }
        }
    }

    /**
     * The store says another manager owns the session now (it took over after our lease lapsed, for
     * example after a long pause). The container is theirs to manage: forget it without removing it.
     */
    private void lostOwnership(SessionEntry e) {
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
}
