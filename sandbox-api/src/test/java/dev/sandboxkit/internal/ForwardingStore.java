package dev.sandboxkit.internal;

import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** A store that forwards every call; tests override the calls they watch or delay. */
class ForwardingStore implements SessionStore {
    private final SessionStore delegate;

    ForwardingStore(SessionStore delegate) {
        this.delegate = delegate;
    }

    @Override
    public boolean isProcessLocal() {
        return delegate.isProcessLocal();
    }

    @Override
    public Optional<SessionRecord> find(String sessionId) {
        return delegate.find(sessionId);
    }

    @Override
    public boolean insert(SessionRecord record) {
        return delegate.insert(record);
    }

    @Override
    public Optional<SessionRecord> update(SessionRecord record) {
        return delegate.update(record);
    }

    @Override
    public boolean delete(String sessionId, long expectedVersion) {
        return delegate.delete(sessionId, expectedVersion);
    }

    @Override
    public List<SessionRecord> findByState(SessionState state, String afterSessionId, int limit) {
        return delegate.findByState(state, afterSessionId, limit);
    }

    @Override
    public List<String> heartbeat(String owner, Map<String, Instant> lastActivity, Instant leaseExpiry) {
        return delegate.heartbeat(owner, lastActivity, leaseExpiry);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
