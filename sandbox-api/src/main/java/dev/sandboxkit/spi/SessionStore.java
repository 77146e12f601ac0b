package dev.sandboxkit.spi;

import dev.sandboxkit.internal.InMemorySessionStore;

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
     * Sessions in {@link dev.sandboxkit.SessionState#ACTIVE} whose last activity is before {@code cutoff}.
     *
     * @param cutoff exclusive upper bound on last activity
     * @param limit  maximum number of results
     * @return matching records, oldest activity first
     */
    List<SessionRecord> findIdleBefore(Instant cutoff, int limit);

    /**
     * Sessions in a state, oldest last-activity first. The janitor uses it to find destroys that are not
     * finished ({@link dev.sandboxkit.SessionState#DESTROYING}) and sessions whose container may be gone.
     *
     * @param state the state
     * @param limit maximum number of results
     * @return matching records, oldest activity first (ties by session id)
     */
    List<SessionRecord> findByState(dev.sandboxkit.SessionState state, int limit);

    /**
     * Sessions owned by a manager.
     *
     * @param owner the manager's instance id
     * @return its sessions
     */
    List<SessionRecord> findByOwner(String owner);

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

    /** Releases the store's resources. Default: nothing to release. */
    @Override
    default void close() {
    }
}
