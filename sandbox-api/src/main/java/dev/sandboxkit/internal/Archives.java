package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.ArchiveDigests;
import dev.sandboxkit.spi.ArchiveStore;
import dev.sandboxkit.spi.WorkspaceCapability;
import dev.sandboxkit.spi.WorkspaceBackend;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.zip.GZIPInputStream;

/**
 * The archive tier: a session suspended for longer than the configured age has its workdir packed (tar +
 * gzip), put into the {@link ArchiveStore} under its SHA-256, and deleted locally; the next use fetches,
 * checks and unpacks it into a fresh workdir of whichever host uses it. The session record carries the state,
 * so every step is decided by the store's compare-and-set and survives a crash:
 * <ul>
 *   <li>{@code uploading} (owner = the uploader, under its lease): the local copy is still there. A resume
 *       elsewhere waits for the lease; once it lapses, the upload counts as never done;</li>
 *   <li>{@code archived}: the object is complete and verified, the local copy is deleted (or garbage);</li>
 *   <li>{@code restoring} (owner = the restorer): the object is still there; a restore whose owner died is
 *       done again from scratch, into a freshly emptied workdir.</li>
 * </ul>
 * The local copy is deleted only after the store's put returned (verified) and the record says archived; the
 * object is deleted only after the record points at the restored workdir.
 */
final class Archives {
    static final String STATE = "archive.state";
    static final String KEY = "archive.key";
    static final String SHA256 = "archive.sha256";
    static final String BYTES = "archive.bytes";
    private static final String UPLOADING = "uploading";
    private static final String ARCHIVED = "archived";
    private static final String RESTORING = "restoring";
    private static final int PAGE = 200;
    private static final Logger log = LoggerFactory.getLogger(Archives.class);

    private final WorkspaceBackend workspaces;
    private final SessionStore store;
    private final Clock clock;
    private final Leases leases;
    private final String instanceId;
    private final SpecCodec specs;
    /** Where packing deflates while the caller's thread walks the workdir. */
    private final Executor io;
    private final @Nullable ArchiveStore archiveStore;
    private final long afterMillis;
    private final Path spool;
    /** Session id to the record version whose workdir was not on this host: not tried again until it changes. */
    private final Map<String, Long> elsewhere = new ConcurrentHashMap<>();

    Archives(WorkspaceBackend workspaces, SessionStore store, Clock clock, Leases leases, String instanceId,
             SpecCodec specs, Executor io, @Nullable ArchiveStore archiveStore, @Nullable Duration after, Path spool) {
        this.workspaces = workspaces;
        this.store = store;
        this.clock = clock;
        this.leases = leases;
        this.instanceId = instanceId;
        this.specs = specs;
        this.io = io;
        this.archiveStore = archiveStore;
        this.afterMillis = after == null ? Long.MAX_VALUE : after.toMillis();
        this.spool = spool;
    }

    boolean enabled() {
        return archiveStore != null;
    }

    /** How often the pass runs: with the orphan sweep, a cheap read of the suspended sessions. */
    long passMillis(long reconcileMillis) {
        return Math.max(10, reconcileMillis);
    }

    static boolean isArchived(SessionRecord rec) {
        return rec.attributes().containsKey(STATE);
    }

    /**
     * What another live manager is doing to a suspended session's workdir ("archived" or "restored"), or
     * null when it is not in an archive step: an acquire that finds the record held says so, and waits.
     */
    static @Nullable String stepHeldBy(SessionRecord rec) {
        String state = rec.attributes().get(STATE);
        return UPLOADING.equals(state) ? "archived" : RESTORING.equals(state) ? "restored" : null;
    }

    /** Whether the workdir lives in the archive tier (its local copy is gone, or only a partial restore). */
    static boolean isStoredAway(SessionRecord rec) {
        String state = rec.attributes().get(STATE);
        return ARCHIVED.equals(state) || RESTORING.equals(state);
    }

    /** The suspended sessions old enough to archive, in store order. Reads only. */
    List<String> due() {
        List<String> out = new ArrayList<>();
        long now = clock.millis();
        String after = null;
        while (true) {
            List<SessionRecord> page = store.findByState(SessionState.SUSPENDED, after, PAGE);
            for (SessionRecord r : page) {
                if (!r.ephemeral() && !"-".equals(r.workspace()) && now - r.lastActivity().toEpochMilli() >= afterMillis
                        && (!isArchived(r) || (UPLOADING.equals(r.attributes().get(STATE)) && r.leaseExpired(leases.now())))
                        && !Long.valueOf(r.version()).equals(elsewhere.get(r.sessionId()))) {
                    out.add(r.sessionId());
                }
            }
            if (page.size() < PAGE) {
                return out;
            }
            after = page.get(page.size() - 1).sessionId();
        }
    }

    /**
     * Archives one session if it is still due. Lifecycle lock held, no container running for it in this
     * manager. Returns whether it archived.
     */
    boolean archive(String sessionId) {
        ArchiveStore archive = requireStore();
        Optional<SessionRecord> found = store.find(sessionId);
        if (found.isEmpty() || found.get().state() != SessionState.SUSPENDED || found.get().ephemeral()) {
            return false;
        }
        SessionRecord rec = found.get();
        if (isArchived(rec)) {
            if (!UPLOADING.equals(rec.attributes().get(STATE)) || !rec.leaseExpired(leases.now())) {
                return false;
            }
            // An upload whose manager died: its object may be incomplete, the local copy is intact. Start over.
            rec = cleared(rec, null).orElse(null);
            if (rec == null) {
                return false;
            }
        }
        if (!workspaces.workspaceCapabilities().contains(WorkspaceCapability.WORKSPACE_ARCHIVE)) {
            return false;
        }
        SandboxSpec spec = specs.decode(rec.spec());
        long t0 = System.nanoTime();
        Path packed = tempFile();
        try {
            // Packed before anything is written: a workdir that is not on this host is skipped without a write.
            ArchivePacker.Packed packedAs;
            try {
                String workspace = rec.workspace();
                packedAs = ArchivePacker.pack(io, packed, tar -> workspaces.exportWorkspace(workspace, spec, tar));
            } catch (SandboxException notHere) {
                elsewhere.put(sessionId, rec.version());
                log.info("Session {}: workdir {} not archived from this manager: {}", sessionId, rec.workspace(),
                        notHere.toString());
                return false;
            }
            String sha = packedAs.sha256();
            long bytes = packedAs.bytes();
            String key = sessionId + "/" + sha + ".tar.gz";
            Map<String, String> attributes = new java.util.HashMap<>(rec.attributes());
            attributes.put(STATE, UPLOADING);
            attributes.put(KEY, key);
            attributes.put(SHA256, sha);
            attributes.put(BYTES, Long.toString(bytes));
            SessionRecord claimed = store.update(rec.withOwner(instanceId, leases.lease(leases.now()))
                    .withAttributes(attributes)).orElse(null);
            if (claimed == null) {
                return false; // resumed or changed meanwhile: what was packed may be torn; drop it
            }
            try {
                archive.put(key, packed, new ArchiveDigests(bytes, sha, packedAs.md5()));
            } catch (RuntimeException uploadFailed) {
                cleared(claimed, null);
                deleteQuietly(archive, key);
                throw uploadFailed;
            }
            attributes.put(STATE, ARCHIVED);
            SessionRecord done = store.update(claimed.withOwner(null, null).withAttributes(attributes))
                    .orElse(null);
            if (done == null) {
                // Our lease lapsed and another manager moved the record on: it decides; the local copy stays.
                // The object is ours to delete unless the record names it now (the same tree archived again).
                log.warn("Session {}: archive not recorded (the record changed during the upload); kept locally",
                        sessionId);
                boolean named = store.find(sessionId).map(r -> key.equals(r.attributes().get(KEY)))
                        .orElse(false);
                if (!named) {
                    deleteQuietly(archive, key);
                }
                return false;
            }
            try {
                workspaces.deleteWorkspace(rec.workspace());
            } catch (RuntimeException e) {
                log.warn("Session {}: archived, but the local workdir {} could not be deleted: {}", sessionId,
                        rec.workspace(), e.toString());
            }
            log.info("Session {}: workdir archived to {} ({} bytes) in {} ms", sessionId, archive.describe() + "/" + key,
                    bytes, Duration.ofNanos(System.nanoTime() - t0).toMillis());
            return true;
        } catch (IOException e) {
            throw new SandboxUnavailableException("cannot pack the workdir of session " + sessionId + ": " + e, e);
        } finally {
            deleteQuietly(packed);
        }
    }

    /**
     * Makes an archived session's workdir local again, before a container starts on it or its files are used.
     * Lifecycle lock held. Returns the record to go on with (unchanged if it was not archived), or empty when a
     * compare-and-set was lost (read again and retry).
     *
     * @param phase receives the restore's duration, recorded as the resume phase {@code archive-restore}
     */
    Optional<SessionRecord> restore(SessionRecord rec, SandboxSpec spec, Consumer<Duration> phase) {
        String state = rec.attributes().get(STATE);
        if (state == null) {
            return Optional.of(rec);
        }
        boolean heldElsewhere = rec.owner() != null && !instanceId.equals(rec.owner())
                && !rec.leaseExpired(leases.now());
        if (heldElsewhere && !ARCHIVED.equals(state)) {
            throw heldElsewhere(rec, stepHeldBy(rec));
        }
        if (UPLOADING.equals(state)) {
            // The uploader died before the object was recorded complete: the local copy is the session's.
            return cleared(rec, archiveStore);
        }
        ArchiveStore archive = archiveStore;
        String key = rec.attributes().get(KEY);
        String sha = rec.attributes().get(SHA256);
        if (archive == null) {
            throw new SandboxConfigurationException("the workdir of session " + rec.sessionId()
                    + " is in the archive tier (" + key + "); configure the same ArchiveStore on this manager"
                    + " (SandboxManager.Builder.archive) to resume it");
        }
        long t0 = System.nanoTime();
        Optional<SessionRecord> claiming = store.update(rec.withOwner(instanceId, leases.lease(leases.now()))
                .withAttributes(with(rec.attributes(), STATE, RESTORING)));
        if (claiming.isEmpty()) {
            return Optional.empty(); // another manager restores it, or it changed: look again
        }
        SessionRecord claimed = claiming.get();
        Path packed = tempFile();
        String workspace = null;
        try {
            archive.get(key, packed);
            String got = hash(packed);
            if (!got.equals(sha)) {
                throw new SandboxUnavailableException("the archive of session " + rec.sessionId() + " (" + key
                        + ") failed its check: SHA-256 " + got + ", expected " + sha
                        + "; it was not unpacked, try again", null);
            }
            // From scratch: an earlier restore may have left part of a tree in this host's workdir.
            workspace = workspaces.createWorkspace(rec.sessionId(), spec);
            workspaces.deleteWorkspace(workspace);
            workspace = workspaces.createWorkspace(rec.sessionId(), spec);
            try (InputStream in = new GZIPInputStream(new BufferedInputStream(Files.newInputStream(packed), 1 << 16),
                    1 << 16)) {
                workspaces.importWorkspace(workspace, spec, in);
            }
        } catch (IOException | RuntimeException e) {
            if (workspace != null) {
                deleteWorkspaceQuietly(workspace);
            }
            // Back to archived, so that any manager may retry at once.
            updateQuietly(claimed.withOwner(null, null).withAttributes(with(claimed.attributes(), STATE, ARCHIVED)));
            if (e instanceof IOException io) {
                throw new SandboxUnavailableException("cannot unpack the archive of session " + rec.sessionId()
                        + ": " + io, io);
            }
            throw (RuntimeException) e;
        } finally {
            deleteQuietly(packed);
        }
        Optional<SessionRecord> restored = store.update(claimed.withWorkspace(workspace)
                .withAttributes(without(claimed.attributes())));
        if (restored.isPresent()) {
            deleteQuietly(archive, key); // the record no longer names it
            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            phase.accept(took);
            log.info("Session {}: workdir restored from {} in {} ms", rec.sessionId(), archive.describe() + "/" + key,
                    took.toMillis());
        }
        return restored;
    }

    /** The retryable refusal of a session another live manager holds while it archives, restores or starts it. */
    static SandboxAcquireException heldElsewhere(SessionRecord rec, @Nullable String step) {
        String what = step == null ? "session " + rec.sessionId() + " is being started"
                : "the workdir of session " + rec.sessionId() + " is being " + step;
        return new SandboxAcquireException(what + " by live manager " + rec.owner() + " (lease until "
                + rec.leaseExpiry() + "); try again in a moment", null, true);
    }

    /** Deletes a destroyed session's archived object. Lifecycle lock held; a failure leaves the destroy unfinished. */
    void deleteFor(SessionRecord rec) {
        String key = rec.attributes().get(KEY);
        if (key == null) {
            return;
        }
        if (archiveStore == null) {
            log.warn("Session {}: destroyed, but its archive {} stays: this manager has no ArchiveStore",
                    rec.sessionId(), key);
            return;
        }
        archiveStore.delete(key);
    }

    /** Drops the archive attributes (and the object when {@code objects} is given). */
    private Optional<SessionRecord> cleared(SessionRecord rec, @Nullable ArchiveStore objects) {
        Optional<SessionRecord> out = updateQuietly(rec.withOwner(null, null).withAttributes(without(rec.attributes())));
        String key = rec.attributes().get(KEY);
        if (out.isPresent() && objects != null && key != null) {
            deleteQuietly(objects, key);
        }
        return out;
    }

    private Optional<SessionRecord> updateQuietly(SessionRecord rec) {
        try {
            return store.update(rec);
        } catch (RuntimeException e) {
            log.warn("Session {}: could not record the archive state: {}", rec.sessionId(), e.toString());
            return Optional.empty();
        }
    }

    private static Map<String, String> with(Map<String, String> attributes, String key, String value) {
        Map<String, String> out = new java.util.HashMap<>(attributes);
        out.put(key, value);
        return out;
    }

    private static Map<String, String> without(Map<String, String> attributes) {
        Map<String, String> out = new java.util.HashMap<>(attributes);
        out.keySet().removeAll(List.of(STATE, KEY, SHA256, BYTES));
        return out;
    }

    private ArchiveStore requireStore() {
        if (archiveStore == null) {
            throw new IllegalStateException("no archive store configured");
        }
        return archiveStore;
    }

    private Path tempFile() {
        try {
            Files.createDirectories(spool);
            return Files.createTempFile(spool, "sandboxkit-archive-", ".tar.gz");
        } catch (IOException e) {
            throw new SandboxUnavailableException("cannot create a spool file in " + spool + ": " + e, e);
        }
    }

    private static String hash(Path file) throws IOException {
        try (DigestInputStream in = new DigestInputStream(Files.newInputStream(file), sha256())) {
            in.transferTo(OutputStream.nullOutputStream());
            return HexFormat.of().formatHex(in.getMessageDigest().digest());
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    private void deleteWorkspaceQuietly(String workspace) {
        try {
            workspaces.deleteWorkspace(workspace);
        } catch (RuntimeException e) {
            log.warn("could not delete the partly restored workdir {}: {}", workspace, e.toString());
        }
    }

    private static void deleteQuietly(ArchiveStore archive, String key) {
        try {
            archive.delete(key);
        } catch (RuntimeException e) {
            log.warn("could not delete archive {} from {}: {}", key, archive.describe(), e.toString());
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // a spool file left over is only space
        }
    }
}
