package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxTimeoutException;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.SessionStoreException;
import dev.sandboxkit.spi.WorkspaceBackend;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Carries out a destroy the {@link LifecycleEngine} decided, with the session's lifecycle lock held: claims it in
 * the store (DESTROYING), removes the containers, the workdir, its archived copy and its unkept snapshots, and only
 * then records it DESTROYED, so that a destroy cut short anywhere is finished by whoever comes next.
 */
final class SessionDestroyer {
    private static final Logger log = LoggerFactory.getLogger(SessionDestroyer.class);

    private final WorkspaceBackend workspaces;
    private final SessionStore store;
    private final Clock clock;
    private final Leases leases;
    private final String instanceId;
    private final Removals removals;
    private final ProcessSupport processes;
    private final Archives archives;
    private final Snapshots snapshots;
    private final Stats stats;
    private final Events events;

    SessionDestroyer(WorkspaceBackend workspaces, SessionStore store, Clock clock, Leases leases, String instanceId,
                     Removals removals, ProcessSupport processes, Archives archives, Snapshots snapshots, Stats stats,
                     Events events) {
        this.workspaces = workspaces;
        this.store = store;
        this.clock = clock;
        this.leases = leases;
        this.instanceId = instanceId;
        this.removals = removals;
        this.processes = processes;
        this.archives = archives;
        this.snapshots = snapshots;
        this.stats = stats;
        this.events = events;
    }

    /**
     * Destroys the session, lifecycle lock held: records it DESTROYING (which claims the destroy), removes its
     * containers, deletes its workdir, and only then records it DESTROYED. A step that fails throws and leaves
     * the session DESTROYING with its claim released: the janitor, the next destroy or acquire of the id, or the
     * manager on the workdir's host finishes it. A workdir on another host is refused before the claim.
     *
     * @param live           the container taken from the entry, or null
     * @param incarnation    the handle's incarnation (a later session reusing the id is left alone), or null
     * @param waitForOthers  whether a destroy another live manager is running is waited for (the API's destroy,
     *                       which returns only once the session is gone), rather than left to it
     * @return whether the session is gone; false only when left to another manager's destroy
     */
    boolean destroyLocked(SessionEntry e, String live, Instant incarnation, boolean waitForOthers) {
        String sessionId = e.sessionId;
        long waitDeadline = 0;
        for (int attempt = 1; ; attempt++) {
            Optional<SessionRecord> found = store.find(sessionId);
            if (found.isEmpty() || found.get().state() == SessionState.DESTROYED
                    || (incarnation != null && !incarnation.equals(found.get().createdAt()))) {
                if (live != null) {
                    removals.remove(live);
                }
                return true;
            }
            SessionRecord rec = found.get();
            Instant now = leases.now();
            boolean claimedBefore = rec.state() == SessionState.DESTROYING;
            if (claimedBefore && !instanceId.equals(rec.owner()) && !rec.leaseExpired(now)) {
                if (live != null) {
                    removals.remove(live);
                    live = null;
                }
                if (!waitForOthers) {
                    log.info("Session {}: already being destroyed by manager {}", sessionId, rec.owner());
                    return false;
                }
                if (waitDeadline == 0) {
                    long leaseMillis = Duration.between(now, leases.lease(now)).toMillis();
                    waitDeadline = System.nanoTime() + Duration.ofMillis(Math.max(60_000, 2 * leaseMillis)).toNanos();
                }
                awaitOtherDestroy(rec, waitDeadline);
                attempt = 0; // it finished, failed (its claim released) or lapsed: look again
                continue;
            }
            SessionRecords.requireWorkdirHere(workspaces, rec, "destroy it there"); // before the claim: nothing written
            Optional<SessionRecord> claimed = store.update(rec.withSandbox(SessionState.DESTROYING, rec.sandboxId(),
                    rec.sandboxStartedAt()).withOwner(instanceId, leases.lease(now)).withLastActivity(now));
            if (claimed.isEmpty()) {
                if (attempt >= SessionLocks.MAX_ATTEMPTS) {
                    throw new SessionStoreException("session " + sessionId
                            + " kept changing under concurrent updates; destroy again", null, true);
                }
                continue;
            }
            if (rec.state() == SessionState.SUSPENDED) {
                stats.suspended.updateAndGet(n -> Math.max(0, n - 1));
            }
            SessionRecord destroying = claimed.get();
            processes.containerGone(live, "the session was destroyed, and its sandbox with it");
            processes.containerGone(destroying.sandboxId(), "the session was destroyed, and its sandbox with it");
            try {
                if (live != null) {
                    removals.remove(live);
                }
                if (destroying.sandboxId() != null && !destroying.sandboxId().equals(live)) {
                    removals.remove(destroying.sandboxId());
                }
                if (!Archives.isStoredAway(destroying)) {
                    workspaces.deleteWorkspace(destroying.workspace()); // else deleted when archived, maybe elsewhere
                }
                archives.deleteFor(destroying);
                snapshots.deleteUnkept(sessionId);
            } catch (RuntimeException notDone) {
                // Release the claim (lease ends now), so that any manager that can finish it need not wait for it.
                SessionRecords.updateQuietly(store, destroying.withOwner(instanceId, leases.now()));
                log.warn("Session {}: destroy not finished ({}); it stays DESTROYING and the janitor retries",
                        sessionId, notDone.toString());
                throw notDone;
            }
            if (store.update(destroying.withSandbox(SessionState.DESTROYED, null, null).withOwner(null, null))
                    .isEmpty()) {
                live = null; // removed already; a concurrent destroy of the id changed the record: look again
                continue;
            }
            stats.destroyed.increment();
            log.info("Session {}: destroyed (container and workdir removed{})", sessionId,
                    rec.ephemeral() ? ", single-use" : "");
            events.emit(new SandboxEvent.Destroyed(sessionId, live != null ? live : rec.sandboxId(), clock.instant(),
                    rec.ephemeral()));
            return true;
        }
    }

    /**
     * Waits, lifecycle lock held, until another manager's claimed destroy moved on: the record changed (finished,
     * or failed and released its claim) or its claim lapsed. Polls the store.
     *
     * @throws SandboxTimeoutException at the deadline, or if interrupted (the interrupt flag is kept)
     */
    private void awaitOtherDestroy(SessionRecord claimed, long deadlineNanos) {
        log.info("Session {}: being destroyed by manager {}; waiting for it to finish", claimed.sessionId(),
                claimed.owner());
        while (true) {
            Optional<SessionRecord> now = store.find(claimed.sessionId());
            if (now.isEmpty() || now.get().version() != claimed.version() || now.get().leaseExpired(leases.now())) {
                return;
            }
            if (System.nanoTime() - deadlineNanos >= 0) {
                throw new SandboxTimeoutException("session " + claimed.sessionId() + " is being destroyed by manager "
                        + claimed.owner() + ", which has not finished it in time; destroy it again later");
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                throw new SandboxTimeoutException("interrupted while waiting for manager " + claimed.owner()
                        + " to finish destroying session " + claimed.sessionId());
            }
        }
    }
}
