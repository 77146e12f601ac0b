package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnsupportedException;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.SnapshotId;
import dev.sandboxkit.spi.WorkspaceCapability;
import dev.sandboxkit.spi.WorkspaceBackend;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.spi.SnapshotDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What the manager does to a session's workdir as a whole: snapshot it, restore it from a snapshot, fork it into a
 * new session, and move idle ones to the archive tier. Each step runs under the session's lifecycle lock and uses
 * the {@link LifecycleEngine} for the container it has to stop or start.
 */
final class WorkdirSteps {
    private static final Logger log = LoggerFactory.getLogger(WorkdirSteps.class);

    private final WorkspaceBackend workspaces;
    private final SessionStore store;
    private final SpecCodec specs;
    private final Snapshots snapshots;
    private final Archives archives;
    private final SessionLocks locks;
    private final ClosedFlag closed;
    private final LifecycleEngine engine;

    WorkdirSteps(WorkspaceBackend workspaces, SessionStore store, SpecCodec specs, Snapshots snapshots,
                 Archives archives, SessionLocks locks, ClosedFlag closed, LifecycleEngine engine) {
        this.workspaces = workspaces;
        this.store = store;
        this.specs = specs;
        this.snapshots = snapshots;
        this.archives = archives;
        this.locks = locks;
        this.closed = closed;
        this.engine = engine;
    }

    /** Snapshots the session's workdir, under its lifecycle lock. */
    SnapshotId snapshot(String sessionId) {
        SessionIds.requireValid(sessionId);
        closed.checkOpen();
        return locks.underLock(sessionId, e -> snapshots.take(engine.local(e.sessionId)));
    }

    /** Replaces the session's workdir with a snapshot's; its container, if live, is removed first. */
    void restore(String sessionId, SnapshotId snapshot) {
        SessionIds.requireValid(sessionId);
        Objects.requireNonNull(snapshot, "snapshot");
        closed.checkOpen();
        SnapshotDescriptor source = snapshots.find(snapshot);
        locks.underLock(sessionId, e -> {
            engine.usable(sessionId);
            if (e.isActive()) {
                engine.stop(e, StopReason.RESTORED);
            }
            SessionRecord rec = engine.local(e.sessionId);
            if (rec.state() == SessionState.ACTIVE) {
                throw new SandboxAcquireException("session " + sessionId + " is held by manager " + rec.owner()
                        + "; restore it there, or once it is suspended", null, true);
            }
            workspaces.restoreWorkspace(source.location(), rec.workspace(), specs.decode(rec.spec()));
            log.info("Session {}: workdir restored from snapshot {}", sessionId, snapshot);
            return null;
        });
    }

    /**
     * Holds both sessions' lifecycle locks for the whole fork, taken in id order (a fork the other way round
     * cannot deadlock with this one): the target's, so that a concurrent acquire or fork of the same new id
     * cannot interleave; the source's, so that no destroy or restore of the source runs during the copy.
     *
     * @return the new session's incarnation
     */
    Instant fork(String sessionId, String newSessionId) {
        SessionIds.requireValid(sessionId);
        SessionIds.requireValid(newSessionId);
        closed.checkOpen();
        if (sessionId.equals(newSessionId)) {
            throw new IllegalArgumentException("a session cannot be forked into itself: " + sessionId);
        }
        if (!workspaces.workspaceCapabilities().contains(WorkspaceCapability.SNAPSHOTS)) {
            throw new SandboxUnsupportedException("the " + workspaces.name() + " driver cannot copy workdirs");
        }
        boolean sourceFirst = sessionId.compareTo(newSessionId) < 0;
        return locks.underLock(sourceFirst ? sessionId : newSessionId, first ->
                locks.underLock(sourceFirst ? newSessionId : sessionId, second ->
                        forkLocked(sessionId, sourceFirst ? second : first)));
    }

    /** Creates the fork's session on a copy of the source's workdir. Both lifecycle locks held. */
    private Instant forkLocked(String sessionId, SessionEntry target) {
        String newSessionId = target.sessionId;
        SessionRecord source = engine.local(sessionId); // an archived source is brought back to this host first
        Optional<SessionRecord> existing = store.find(newSessionId);
        if (target.isActive() || (existing.isPresent() && existing.get().state() != SessionState.DESTROYED)) {
            throw new SandboxAcquireException("cannot fork " + sessionId + " into " + newSessionId
                    + ": that session exists already");
        }
        SandboxSpec spec = specs.decode(source.spec());
        SpecCodec.Encoded enc = specs.encoded(spec);
        engine.acquireLocked(target, spec, enc.text(), enc.fingerprint(), source.workspace());
        log.info("Session {}: forked from {}", newSessionId, sessionId);
        return target.record.createdAt();
    }

    /** Runs one archive pass; returns how many sessions it archived. */
    int archiveIdle() {
        closed.checkOpen();
        if (!archives.enabled()) {
            return 0;
        }
        int archived = 0;
        for (String sessionId : archives.due()) {
            if (closed.isClosed()) {
                break;
            }
            try {
                // Waits for a running lifecycle step (a start, a reap) rather than skipping the session.
                if (locks.underLock(sessionId, e -> !e.isActive() && archives.archive(sessionId))) {
                    archived++;
                }
            } catch (SandboxException failed) {
                log.warn("Session {}: not archived: {}", sessionId, failed.toString());
            }
        }
        return archived;
    }
}
