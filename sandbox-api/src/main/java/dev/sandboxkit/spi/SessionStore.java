package dev.sandboxkit.spi;

import dev.sandboxkit.SessionState;
import org.jspecify.annotations.Nullable;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Durable session metadata, shared by every manager that uses the same store. Implementations are
 * thread-safe and, for shared stores, safe across processes. Failures are reported as
 * {@link dev.sandboxkit.SessionStoreException} (retryable when the store is unreachable).
 *
 * <p>Instants are kept at least to the millisecond; the engine only writes millisecond instants, so a
 * record read back equals the record written.
 *
 * <p>Writes are optimistic: {@link #update} succeeds only if the stored version still equals the
 * record's version, so two writers can never both win. {@link #heartbeat} is the one unversioned
 * write: it only moves the owner's lease and last-activity forward.
 */
public interface SessionStore extends AutoCloseable {

    /**
     * A store that lives in this JVM's memory and dies with it.
     *
     * @return a new, empty store
     */
    static SessionStore inMemory() {
        return new InMemorySessionStore();
    }

    /**
     * Reads a session.
     *
     * @param sessionId the session
     * @return the record, or empty
     */
    Optional<SessionRecord> find(String sessionId);

    /**
     * Inserts a new session with version 1.
     *
     * @param record the record; its version must be 1
     * @return {@code false} if a record with that id already exists (nothing is written)
     * @throws IllegalArgumentException if the record's version is not 1
     */
    boolean insert(SessionRecord record);

    /**
     * Compare-and-set: writes the record if the stored version equals {@code record.version()}, storing
     * it with version + 1. The stored last-activity never moves backwards.
     *
     * @param record the new content, carrying the version it was read at
     * @return the stored record (new version), or empty on a version conflict or a missing record
     */
    Optional<SessionRecord> update(SessionRecord record);

    /**
     * Deletes a session if its stored version equals {@code expectedVersion}.
     *
     * @param sessionId       the session
     * @param expectedVersion the version read
     * @return {@code true} if deleted
     */
    boolean delete(String sessionId, long expectedVersion);

    /**
     * One page of the sessions in a state, in session-id order: the first {@code limit} whose id sorts after
     * {@code afterSessionId} ({@code null} for the first page). The engine walks every page, passing the last id
     * of one page to ask for the next, and stops at a page shorter than {@code limit}: a store must order by
     * session id (any fixed total order of its own, such as the database collation, used for both the ordering
     * and the comparison) and return fewer than {@code limit} records only when no more match. The reconcile
     * pass reads the ACTIVE sessions this way, the janitor the DESTROYING ones.
     *
     * @param state          the state
     * @param afterSessionId the last id of the previous page, exclusive; {@code null} to start
     * @param limit          the page size, at least 1
     * @return the page, ordered by session id
     */
    List<SessionRecord> findByState(SessionState state, @Nullable String afterSessionId, int limit);

    /**
     * Renews the owner's lease on every session it owns, and moves last-activity forward for the given
     * sessions (never backwards). Does not change versions.
     *
     * @param owner        the manager's instance id
     * @param lastActivity session id to its latest activity; may be empty
     * @param leaseExpiry  the new lease expiry
     * @return the ids of the sessions the owner still owns
     */
    List<String> heartbeat(String owner, Map<String, Instant> lastActivity, Instant leaseExpiry);

    /**
     * Whether the records live only in this process's memory and die with it, as {@link #inMemory()}'s do. The
     * orphan sweep uses it: while such a store lives, its process holds a lock on a file beside the workdirs, so that
     * an application restarted on the same workspace root can prove its crashed predecessor's store gone and remove
     * the containers that store accounted for. Default {@code false}: a store shared with other processes, or kept
     * on disk, outlives any one of them.
     *
     * @return {@code true} for a store that dies with its process
     */
    default boolean isProcessLocal() {
        return false;
    }

    /** Releases the store's resources. Default: nothing to release. */
    @Override
    default void close() {
    }
}
