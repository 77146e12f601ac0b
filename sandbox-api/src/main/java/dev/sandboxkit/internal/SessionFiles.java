package dev.sandboxkit.internal;

import dev.sandboxkit.FileInfo;
import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.UploadResult;
import dev.sandboxkit.spi.WorkspaceBackend;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;

import java.io.InputStream;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * The files API of one session, as the manager and the handles give it out: normalizes paths, finds the
 * session's workdir on every call (live or suspended, never starting a container), counts the call as
 * activity, and hands over to the driver's implementation, which owns all the security of touching the
 * workdir (see {@link dev.sandboxkit.spi.SandboxDriver#files}).
 */
final class SessionFiles implements SandboxFiles {
    private final WorkspaceBackend workspaces;
    private final SessionStore store;
    private final SessionRegistry sessions;
    private final Clock clock;
    private final FileLimits limits;
    /** Says whether the manager is open, and unarchives a workdir kept in the archive tier. */
    private final LifecycleActions lifecycle;
    private final String sessionId;
    /** The handle's incarnation, or null through the manager (any incarnation). */
    private final Instant incarnation;
    /** Last decoded spec of a suspended session, so repeated calls do not parse it again. */
    private volatile Decoded decoded;

    private record Decoded(String encoded, SandboxSpec spec) {
    }

    SessionFiles(WorkspaceBackend workspaces, SessionStore store, SessionRegistry sessions, Clock clock,
                 FileLimits limits, LifecycleActions lifecycle, String sessionId, Instant incarnation) {
        this.workspaces = workspaces;
        this.store = store;
        this.sessions = sessions;
        this.clock = clock;
        this.limits = limits;
        this.lifecycle = lifecycle;
        this.sessionId = sessionId;
        this.incarnation = incarnation;
    }

    /** The driver's files API on the session's workdir, looked up now. */
    private SandboxFiles target() {
        lifecycle.checkOpen();
        SessionEntry e = sessions.get(sessionId);
        SessionRecord rec = e == null ? null : e.record;
        SandboxSpec spec = e == null ? null : e.spec;
        if (rec != null && spec != null && e.touch(clock.millis())) {
            return checked(rec, spec);
        }
        rec = store.find(sessionId).orElseThrow(() -> SessionRecords.notFound(sessionId));
        if (Archives.isArchived(rec) && !SessionRecords.isDestroyed(rec)) {
            rec = lifecycle.unarchive(sessionId); // the workdir is in the archive tier: bring it to this host first
        }
        Decoded d = decoded;
        if (d == null || !d.encoded().equals(rec.spec())) {
            d = new Decoded(rec.spec(), SpecCodec.parse(rec.spec()));
            decoded = d;
        }
        return checked(rec, d.spec());
    }

    private SandboxFiles checked(SessionRecord rec, SandboxSpec spec) {
        if (SessionRecords.goneFor(rec, incarnation)) {
            throw SessionRecords.notFound(sessionId);
        }
        SessionRecords.requireWorkdirHere(workspaces, rec, "use its files there");
        return workspaces.files(rec.workspace(), spec, limits);
    }

    private static String path(String path) {
        return WorkspacePaths.normalize(path);
    }

    @Override
    public FileInfo stat(String path) {
        String p = path(path);
        return target().stat(p);
    }

    @Override
    public boolean exists(String path) {
        String p = path(path);
        return target().exists(p);
    }

    @Override
    public List<FileInfo> list(String path) {
        String p = path(path);
        return target().list(p);
    }

    @Override
    public byte[] readBytes(String path) {
        String p = path(path);
        return target().readBytes(p);
    }

    @Override
    public InputStream newInputStream(String path) {
        String p = path(path);
        return target().newInputStream(p);
    }

    @Override
    public void write(String path, byte[] content) {
        Objects.requireNonNull(content, "content");
        String p = path(path);
        requireNotRoot(p, path, "write");
        target().write(p, content);
    }

    @Override
    public long write(String path, InputStream content) {
        Objects.requireNonNull(content, "content");
        String p = path(path);
        requireNotRoot(p, path, "write");
        return target().write(p, content);
    }

    @Override
    public void mkdirs(String path) {
        String p = path(path);
        target().mkdirs(p);
    }

    @Override
    public void delete(String path) {
        String p = path(path);
        requireNotRoot(p, path, "delete");
        target().delete(p);
    }

    @Override
    public boolean deleteRecursively(String path) {
        String p = path(path);
        requireNotRoot(p, path, "delete");
        return target().deleteRecursively(p);
    }

    @Override
    public UploadResult uploadTar(String directory, InputStream tar) {
        Objects.requireNonNull(tar, "tar");
        String p = path(directory);
        return target().uploadTar(p, tar);
    }

    @Override
    public InputStream downloadTar(String path) {
        String p = path(path);
        return target().downloadTar(p);
    }

    private static void requireNotRoot(String normalized, String given, String what) {
        if (normalized.isEmpty()) {
            throw new SandboxFileException(what.equals("write")
                    ? SandboxFileException.Reason.IS_A_DIRECTORY : SandboxFileException.Reason.INVALID_PATH,
                    "cannot " + what + " '" + given + "': it is the workdir itself");
        }
    }

    @Override
    public String toString() {
        return "SandboxFiles[" + sessionId + "]";
    }
}
