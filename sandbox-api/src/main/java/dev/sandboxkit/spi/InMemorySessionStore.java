package dev.sandboxkit.spi;

import dev.sandboxkit.SessionState;
import org.jspecify.annotations.Nullable;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;

/** The default store ({@link SessionStore#inMemory()}): a concurrent map in this JVM. Use the JDBC store to survive restarts. */
final class InMemorySessionStore implements SessionStore {
    private final ConcurrentHashMap<String, SessionRecord> records = new ConcurrentHashMap<>();
    /** The ids in order, for paging: ids never change, so the set only follows inserts and deletes. */
    private final ConcurrentSkipListSet<String> ids = new ConcurrentSkipListSet<>();

    @Override
    public boolean isProcessLocal() {
        return true;
    }

    @Override
    public Optional<SessionRecord> find(String sessionId) {
        return Optional.ofNullable(records.get(sessionId));
    }

    @Override
    public boolean insert(SessionRecord record) {
        if (record.version() != 1) {
            throw new IllegalArgumentException("a new record must have version 1, got " + record.version());
        }
        // The id set changes inside the map's per-key atomic section, so a delete and a re-insert of one id
        // cannot leave the set out of step with the map.
        boolean[] inserted = new boolean[1];
        records.computeIfAbsent(record.sessionId(), id -> {
            ids.add(id);
            inserted[0] = true;
            return record;
        });
        return inserted[0];
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
                ids.remove(id);
                return null;
            }
            return stored;
        });
        return deleted[0];
    }

    @Override
    public List<SessionRecord> findByState(SessionState state, @Nullable String afterSessionId, int limit) {
        Objects.requireNonNull(state, "state");
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        List<SessionRecord> page = new ArrayList<>(Math.min(limit, 1024));
        for (String id : afterSessionId == null ? ids : ids.tailSet(afterSessionId, false)) {
            SessionRecord r = records.get(id);
            if (r != null && r.state() == state) {
                page.add(r);
                if (page.size() == limit) {
                    break;
                }
            }
        }
        return page;
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
