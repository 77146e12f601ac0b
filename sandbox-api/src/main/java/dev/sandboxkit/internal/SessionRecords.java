package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.WorkspaceBackend;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.Optional;

/** Checks on a session's stored record that the engine and the parts beside it make the same way. */
final class SessionRecords {
    private static final Logger log = LoggerFactory.getLogger(SessionRecords.class);

    private SessionRecords() {
    }

    /** Destroyed, or being destroyed: either way the session is no longer usable. */
    static boolean isDestroyed(SessionRecord rec) {
        return rec.state() == SessionState.DESTROYED || rec.state() == SessionState.DESTROYING;
    }

    /**
     * Whether a handle of {@code incarnation} can no longer reach the session: it is destroyed, or a later session
     * reuses the id. A null incarnation (a call through the manager) reaches any live one.
     */
    static boolean goneFor(SessionRecord rec, Instant incarnation) {
        return isDestroyed(rec) || (incarnation != null && !incarnation.equals(rec.createdAt()));
    }

    /** A compare-and-set whose failure (conflict or store down) is only logged; the janitor repairs the record. */
    static Optional<SessionRecord> updateQuietly(SessionStore store, SessionRecord rec) {
        try {
            return store.update(rec);
        } catch (SandboxException storeDown) {
            log.warn("Session {}: could not record state {}: {}", rec.sessionId(), rec.state(), storeDown.toString());
            return Optional.empty();
        }
    }

    static SandboxNotFoundException notFound(String sessionId) {
        return new SandboxNotFoundException("session " + sessionId + " does not exist or was destroyed");
    }

    /**
     * Refuses a session whose workdir is on another host (see {@link SandboxDriver#workspaceElsewhere}), before
     * anything is written: only that host's manager can use or delete it, until the archive tier moves it.
     *
     * @param doThere what the caller can do there instead, such as "destroy it there"
     * @throws SandboxConfigurationException naming where the workdir is
     */
    static void requireWorkdirHere(WorkspaceBackend workspaces, SessionRecord rec, String doThere) {
        Optional<String> where = workdirElsewhere(workspaces, rec);
        if (where.isPresent()) {
            throw new SandboxConfigurationException("session " + rec.sessionId() + ": this session's workdir is on "
                    + "another host (" + where.get() + "); " + doThere + " or archive it first (the archive tier, "
                    + "SandboxManager.Builder.archive, moves idle workdirs between hosts)");
        }
    }

    /** Where the session's workdir is if this manager's driver cannot reach it; archived ones are reachable. */
    static Optional<String> workdirElsewhere(WorkspaceBackend workspaces, SessionRecord rec) {
        if (Archives.isStoredAway(rec) || rec.workspace() == null || "-".equals(rec.workspace())) {
            return Optional.empty();
        }
        return workspaces.workspaceElsewhere(rec.workspace());
    }
}
