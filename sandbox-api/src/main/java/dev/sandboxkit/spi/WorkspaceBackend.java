package dev.sandboxkit.spi;

import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnsupportedException;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The storage half of a backend: the sessions' durable workdirs (host directories, Docker volumes, PVCs), their
 * files API, snapshots and archives. A {@link ComputeDriver} mounts them at {@value dev.sandboxkit.SandboxSpec#WORKSPACE}.
 * Implementations are thread-safe: the engine calls them from the callers' threads, the reaper's and the orphan
 * sweep's threads.
 */
public interface WorkspaceBackend {

    /**
     * The backend's name, for messages, for example {@code docker}.
     *
     * @return name
     */
    String name();

    /**
     * The optional workdir features this backend supports; the engine refuses what needs an undeclared one, and the
     * conformance kit tests only what is declared. Fixed for the backend's lifetime.
     *
     * @return the capabilities, possibly empty
     */
    Set<WorkspaceCapability> workspaceCapabilities();

    /**
     * Creates the session's durable workdir if it does not exist yet. Idempotent.
     *
     * @param sessionId the session
     * @param spec      the spec (for the owner uid, storage size, ...)
     * @return the workdir's location, stored with the session and given back in {@link CreateRequest}
     */
    String createWorkspace(String sessionId, SandboxSpec spec);

    /**
     * Deletes a workdir and everything in it, never following links planted inside. Idempotent. The engine
     * calls it only once no sandbox uses the workdir any more (its container was removed first), so the
     * sandbox cannot race the deletion.
     *
     * @param workspace the location returned by {@link #createWorkspace}
     */
    void deleteWorkspace(String workspace);

    /**
     * Whether a workdir recorded in the store is out of this driver's reach: managers on several hosts share a
     * store, not their workdirs, so a session's workdir stays on the host that created it until the archive tier
     * moves it. The engine asks before it acquires or destroys a session or opens its files, and refuses before it
     * writes anything. Default: every workdir is reachable (one cluster-wide storage, such as PVCs).
     *
     * @param workspace a location returned by {@link #createWorkspace} of this or another manager's driver
     * @return empty if this driver can reach it; else where it is, for the refusal (for a host directory,
     *         {@code "root /srv/sandboxes"}: the workspace root it lives under)
     */
    default Optional<String> workspaceElsewhere(String workspace) {
        return Optional.empty();
    }

    /**
     * Hands a warm-pool slot's workdir over to the session that checked the slot out, while its sandbox
     * keeps running. Drivers with host directories rename the directory (the bind mount follows it);
     * drivers whose volumes cannot be renamed keep the location. Default: keep it.
     *
     * @param workspace the slot's workdir location
     * @param sessionId the session it now belongs to
     * @return the location to record for the session
     */
    default String adoptWorkspace(String workspace, String sessionId) {
        return workspace;
    }

    /**
     * Access to a workdir for the files API, without needing a running sandbox. The engine validates and
     * normalizes every path before calling the returned object: paths arrive relative, {@code /}-separated,
     * without empty, {@code .} or {@code ..} components, and {@code ""} names the workdir itself.
     * Implementations must never leave the workdir nor block on anything the sandbox planted there (links,
     * FIFOs, devices, entries swapped mid-call), must honour the limits, and declare
     * {@link WorkspaceCapability#FILES}. Default: unsupported.
     *
     * @param workspace the location returned by {@link #createWorkspace}
     * @param spec      the session's spec (for the sandbox user that must own what is written)
     * @param limits    size and entry-count limits
     * @return the files API on that workdir
     * @throws SandboxFileException with reason {@code UNSUPPORTED} if this driver has none
     */
    default SandboxFiles files(String workspace, SandboxSpec spec, FileLimits limits) {
        throw new SandboxFileException(SandboxFileException.Reason.UNSUPPORTED,
                "the " + name() + " driver has no files API");
    }

    /**
     * Copies a workdir into a new snapshot, as it is while the call runs (the sandbox may keep running and
     * writing). The copy never follows what the sandbox planted: directories, regular files (content and
     * permission bits, setuid, setgid and sticky dropped) and symbolic links (as links, never followed) are
     * copied; FIFOs, sockets and devices are left out and never opened; hard links become separate files.
     * Declare {@link WorkspaceCapability#SNAPSHOTS}. Default: unsupported.
     *
     * @param workspace the location returned by {@link #createWorkspace}
     * @param labels    labels to attach, returned by {@link #listSnapshots}
     * @return the snapshot
     * @throws dev.sandboxkit.SandboxUnsupportedException if this driver has no snapshots
     */
    default SnapshotDescriptor snapshotWorkspace(String workspace, Map<String, String> labels) {
        throw new dev.sandboxkit.SandboxUnsupportedException("the " + name() + " driver has no workdir snapshots");
    }

    /**
     * Replaces a workdir's whole content with a copy of a snapshot or of another workdir, given to the spec's
     * sandbox user. The engine calls it only while no sandbox runs on {@code workspace}, or right after creating
     * that sandbox, before anything ran in it (a fork). Copies as {@link #snapshotWorkspace} does.
     *
     * @param source    a snapshot's location, or another workdir's
     * @param workspace the workdir to fill
     * @param spec      the spec of the session that owns {@code workspace}
     */
    default void restoreWorkspace(String source, String workspace, SandboxSpec spec) {
        throw new dev.sandboxkit.SandboxUnsupportedException("the " + name() + " driver has no workdir snapshots");
    }

    /**
     * Writes a workdir's whole content to {@code tar} as an uncompressed tar stream (entry names relative to the
     * workdir), for the archive tier. Called only while no sandbox runs on it. Never follows what the sandbox
     * planted: directories and regular files keep their permission bits (setuid, setgid and sticky dropped),
     * symbolic links are written as links with their target whatever it is, FIFOs, sockets and devices are left
     * out, hard links become separate files. Does not close {@code tar}. Declare
     * {@link WorkspaceCapability#WORKSPACE_ARCHIVE}. Default: unsupported.
     *
     * @param workspace the location returned by {@link #createWorkspace}
     * @param spec      the spec of the session that owns it
     * @param tar       where the archive goes
     * @throws java.io.IOException if writing to {@code tar} fails
     * @throws dev.sandboxkit.SandboxUnsupportedException if this driver cannot export workdirs
     */
    default void exportWorkspace(String workspace, SandboxSpec spec, java.io.OutputStream tar)
            throws java.io.IOException {
        throw new dev.sandboxkit.SandboxUnsupportedException("the " + name() + " driver cannot archive workdirs");
    }

    /**
     * Fills an empty workdir from a tar stream written by {@link #exportWorkspace} (of this or another host),
     * everything given to the spec's sandbox user. The stream is untrusted: absolute names, {@code ..}, hard
     * links, devices and FIFOs are refused, no entry is ever written through a link, and links are created as
     * links whatever their target. Called only while no sandbox runs on {@code workspace}, on a workdir just
     * created. Reads {@code tar} to its end and does not close it.
     *
     * @param workspace the location returned by {@link #createWorkspace}
     * @param spec      the spec of the session that owns it
     * @param tar       the archive
     * @throws java.io.IOException if reading {@code tar} fails
     * @throws dev.sandboxkit.SandboxFileException if the archive is malformed or holds a refused entry
     * @throws dev.sandboxkit.SandboxUnsupportedException if this driver cannot import workdirs
     */
    default void importWorkspace(String workspace, SandboxSpec spec, java.io.InputStream tar)
            throws java.io.IOException {
        throw new dev.sandboxkit.SandboxUnsupportedException("the " + name() + " driver cannot archive workdirs");
    }

    /**
     * Replaces a workdir's whole content with a copy of a directory on the JVM's host: a spec's template
     * ({@link dev.sandboxkit.WorkspaceTemplate#directory}), given to the spec's sandbox user. The engine calls it
     * only on a new workdir, before any sandbox ran on it. Copies as {@link #snapshotWorkspace} does, never following
     * a link in the directory (nor the directory itself, if it is a link) or in the workdir. Declare
     * {@link WorkspaceCapability#DIRECTORY_TEMPLATES}. Default: unsupported.
     *
     * @param directory the template: an absolute, normalized host path
     * @param workspace the workdir to fill, a location returned by {@link #createWorkspace}
     * @param spec      the spec of the session (or pool slot) that owns {@code workspace}
     * @throws dev.sandboxkit.SandboxConfigurationException if the directory does not exist or is not a directory
     * @throws SandboxUnsupportedException                  if this driver cannot copy host directories
     */
    default void seedWorkspace(java.nio.file.Path directory, String workspace, SandboxSpec spec) {
        throw new SandboxUnsupportedException("the " + name() + " driver cannot seed workdirs from host directories");
    }

    /**
     * Lists the session workdirs whose labels include all of the given ones, for the orphan sweep: it deletes
     * ({@link #deleteWorkspace}) those that no session record refers to once their creator is gone. A backend whose
     * workdirs carry no labels lists nothing, and then nothing of it is swept. Called on the sweep's thread.
     *
     * @param labels label selector
     * @return matching workdirs; empty by default
     */
    default List<WorkspaceDescriptor> listWorkspaces(Map<String, String> labels) {
        return List.of();
    }

    /**
     * Lists snapshots whose labels include all of the given ones.
     *
     * @param labels label selector
     * @return matching snapshots; empty if this driver has none
     */
    default List<SnapshotDescriptor> listSnapshots(Map<String, String> labels) {
        return List.of();
    }

    /**
     * Replaces a snapshot's labels. The engine changes only {@link SandboxLabels#KEPT}; a driver may index the
     * identity labels ({@link SandboxLabels#FLEET}, {@link SandboxLabels#SESSION}, {@link SandboxLabels#SNAPSHOT})
     * and refuse to change them.
     *
     * @param location the snapshot
     * @param labels   its new labels
     * @throws dev.sandboxkit.SandboxNotFoundException if it does not exist
     * @throws IllegalArgumentException                if the driver keeps an identity label that would change
     */
    default void labelSnapshot(String location, Map<String, String> labels) {
        throw new dev.sandboxkit.SandboxUnsupportedException("the " + name() + " driver has no workdir snapshots");
    }

    /**
     * Deletes a snapshot. Idempotent.
     *
     * @param location the snapshot
     */
    default void deleteSnapshot(String location) {
    }
}
