package dev.sandboxkit.internal;

import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/** The default store: a concurrent map in this JVM. Use the JDBC store to survive restarts. */
public final class InMemorySessionStore implements SessionStore {
    private final ConcurrentHashMap<String, SessionRecord> records = new ConcurrentHashMap<>();

    @Override
    public Optional<SessionRecord> find(String sessionId) {
        return Optional.ofNullable(records.get(sessionId));
    }

    @Override
    public boolean insert(SessionRecord record) {
        if (record.version() != 1) {
            throw new IllegalArgumentException("a new record must have version 1, got " + record.version());
        }
        return records.putIfAbsent(record.sessionId(), record) == null;
    }

    @Override
    public Optional<SessionRecord> update(SessionRecord record) {
        SessionRecord[] written = new SessionRecord[1];
        records.computeIfPresent(record.sessionId(), (id, stored) -> {
            if (stored.version() != record.version()) {
                return stored;
            }
            SessionRecord next = record.withVersion(stored.version() + 1);
            if (stored.lastActivity().isAfter(next.lastActivity())) {
                next = next.withLastActivity(stored.lastActivity());
            }
            written[0] = next;
            return next;
        });
        return Optional.ofNullable(written[0]);
    }

    @Override
    public boolean delete(String sessionId, long expectedVersion) {
        boolean[] deleted = new boolean[1];
        records.computeIfPresent(sessionId, (id, stored) -> {
            if (stored.version() == expectedVersion) {
                deleted[0] = true;
                return null;
            }
            return stored;
        });
        return deleted[0];
    }

    @Override
    public List<SessionRecord> findIdleBefore(Instant cutoff, int limit) {
        return records.values().stream()
                .filter(r -> r.state() == SessionState.ACTIVE && r.lastActivity().isBefore(cutoff))
                .sorted(Comparator.comparing(SessionRecord::lastActivity))
                .limit(limit)
                .toList();
    }

    @Override
    public List<SessionRecord> findByState(SessionState state, int limit) {
        Objects.requireNonNull(state, "state");
        return records.values().stream()
                .filter(r -> r.state() == state)
                .sorted(Comparator.comparing(SessionRecord::lastActivity).thenComparing(SessionRecord::sessionId))
                .limit(limit)
                .toList();
    }

    @Override
    public List<SessionRecord> findByOwner(String owner) {
        return records.values().stream().filter(r -> owner.equals(r.owner())).toList();
    }

    @Override
    public List<String> heartbeat(String owner, Map<String, Instant> lastActivity, Instant leaseExpiry) {
        List<String> owned = new ArrayList<>();
        for (String id : records.keySet()) {
            records.computeIfPresent(id, (k, r) -> {
                if (!Objects.equals(owner, r.owner())) {
                    return r;
                }
                owned.add(k);
                Instant activity = lastActivity.get(k);
                SessionRecord next = r.withOwner(owner, leaseExpiry);
                if (activity != null && activity.isAfter(r.lastActivity())) {
                    next = next.withLastActivity(activity);
                }
                return next;
            });
        }
        return owned;
    }
}
