package dev.sandboxkit.internal;

import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The sessions this manager holds in memory, by id. An entry exists while its session has a container here,
 * an exec in flight, or a lifecycle step running; otherwise it is dropped, so idle sessions cost nothing.
 */
final class SessionRegistry {
    private final ConcurrentHashMap<String, SessionEntry> entries = new ConcurrentHashMap<>();

    /** The entry, or null if this manager holds nothing for the session. */
    SessionEntry get(String sessionId) {
        return entries.get(sessionId);
    }

    /** The entry, created if missing (for a lifecycle step about to take its lock). */
    SessionEntry entry(String sessionId) {
        return entries.computeIfAbsent(sessionId, SessionEntry::new);
    }

    /** Drops an entry for good: holders see it gone and look the session up again. */
    void forget(SessionEntry e) {
        e.markGone();
        entries.remove(e.sessionId, e);
    }

    /** Drops an entry that holds no container, runs no exec and is not gone already. Lifecycle lock held. */
    void dropIfIdle(SessionEntry e) {
        if (!e.isActive() && !e.isGone() && e.inflight() == 0) {
            forget(e);
        }
    }

    Collection<SessionEntry> all() {
        return entries.values();
    }

    long activeCount() {
        return entries.values().stream().filter(SessionEntry::isActive).count();
    }

    /** The containers held now. */
    Set<String> containers() {
        Set<String> held = new HashSet<>();
        for (SessionEntry e : entries.values()) {
            String id = e.sandboxId();
            if (id != null) {
                held.add(id);
            }
        }
        return held;
    }
}
