package dev.sandboxkit.docker.internal.workdir;

import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.docker.internal.files.HostWorkspaces;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.WorkspaceCapability;
import dev.sandboxkit.spi.SnapshotDescriptor;
import dev.sandboxkit.spi.WorkspaceDescriptor;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The Docker driver's workspace half: every workspace call of the SPI (workdirs, snapshots, archives, files) goes
 * to the backend that owns the location, a volume's ({@code volume:<name>}) or a host directory's; new workdirs go
 * to the preferred one ({@code docker.workdirs}). Thread-safe.
 */
public final class DockerWorkspaces implements AutoCloseable {
    /** The highest uid or gid the engine runs a container as (runc refuses 2^31 and above). */
    static final long MAX_ENGINE_ID = Integer.MAX_VALUE;

    private final HostDirWorkdirs hostDirs;
    private final VolumeWorkdirs volumes;
    /** Where new workdirs go: {@link #hostDirs} or {@link #volumes}. Existing ones stay with their location's. */
    private final Workdirs preferred;

    /**
     * Both backends, one of them preferred.
     *
     * @param hostDirs   host directories under the workspace root
     * @param volumes    named volumes on the engine
     * @param useVolumes whether new workdirs are volumes
     */
    public DockerWorkspaces(HostDirWorkdirs hostDirs, VolumeWorkdirs volumes, boolean useVolumes) {
        this.hostDirs = hostDirs;
        this.volumes = volumes;
        this.preferred = useVolumes ? volumes : hostDirs;
    }

    /**
     * What new workdirs can do.
     *
     * @return the preferred backend's capabilities
     */
    public Set<WorkspaceCapability> capabilities() {
        return preferred.capabilities();
    }

    /** The backend a location belongs to: a volume's ({@code volume:<name>}) or a host directory's. */
    private Workdirs of(String location) {
        return VolumeWorkdirs.owns(location) ? volumes : hostDirs;
    }

    private static HostWorkspaces.Ids ids(Workdirs workdirs, SandboxSpec spec) {
        return HostWorkspaces.Ids.parse(workdirs.sandboxUser(spec));
    }

    /**
     * Fails before anything is created for ids Linux accepts but the engine would refuse at start.
     *
     * @param ids the sandbox user's ids
     */
    public static void requireEngineIds(HostWorkspaces.Ids ids) {
        if (ids.uid() > MAX_ENGINE_ID || ids.gid() > MAX_ENGINE_ID) {
            throw new SandboxConfigurationException("the sandbox user " + ids + " cannot run on Docker: the engine "
                    + "(runc) accepts uids and gids 0.." + MAX_ENGINE_ID + " only");
        }
    }

    /**
     * See {@link dev.sandboxkit.spi.SandboxDriver#createWorkspace}.
     *
     * @param sessionId the session
     * @param spec      its spec
     * @return the location
     */
    public String create(String sessionId, SandboxSpec spec) {
        requireEngineIds(ids(preferred, spec));
        return preferred.create(sessionId, spec);
    }

    /**
     * Makes the request's workdir ready for its container and says how to mount it (see {@link Workdirs#mount}).
     *
     * @param request the container about to be created
     * @return the mount
     */
    public Workdirs.Mount mount(CreateRequest request) {
        Workdirs workdirs = of(request.workspace());
        requireEngineIds(ids(workdirs, request.spec()));
        return workdirs.mount(request);
    }

    /**
     * The user the request's container runs as.
     *
     * @param request the container about to be created
     * @return {@code uid[:gid]}
     */
    public String sandboxUser(CreateRequest request) {
        return of(request.workspace()).sandboxUser(request.spec());
    }

    /**
     * See {@link dev.sandboxkit.spi.SandboxDriver#deleteWorkspace}.
     *
     * @param workspace the workdir
     */
    public void delete(String workspace) {
        of(workspace).delete(workspace);
    }

    /**
     * A host directory under another workspace root is another host's; a volume is on the engine.
     *
     * @param workspace the workdir
     * @return the other root, if any
     */
    public Optional<String> elsewhere(String workspace) {
        return VolumeWorkdirs.owns(workspace) ? Optional.empty() : hostDirs.elsewhere(workspace);
    }

    /**
     * Host directories: host-side on the bind-mounted directory; volumes: the archive API (see Workdirs).
     *
     * @param workspace the workdir
     * @param spec      its session's spec
     * @param limits    the limits
     * @return the files API
     */
    public SandboxFiles files(String workspace, SandboxSpec spec, FileLimits limits) {
        return of(workspace).files(workspace, spec, limits);
    }

    /**
     * See {@link Workdirs#export}.
     *
     * @param workspace the workdir
     * @param spec      its session's spec
     * @param tar       where the archive goes
     * @throws IOException if writing fails
     */
    public void export(String workspace, SandboxSpec spec, OutputStream tar) throws IOException {
        of(workspace).export(workspace, spec, tar);
    }

    /**
     * See {@link Workdirs#importInto}.
     *
     * @param workspace the workdir
     * @param spec      its session's spec
     * @param tar       the archive
     */
    public void importInto(String workspace, SandboxSpec spec, InputStream tar) {
        requireEngineIds(ids(of(workspace), spec));
        of(workspace).importInto(workspace, spec, tar);
    }

    /**
     * See {@link Workdirs#snapshot}.
     *
     * @param workspace the workdir
     * @param labels    the snapshot's labels
     * @return the snapshot
     */
    public SnapshotDescriptor snapshot(String workspace, Map<String, String> labels) {
        return of(workspace).snapshot(workspace, labels);
    }

    /**
     * See {@link Workdirs#restore}.
     *
     * @param source    a snapshot or workdir
     * @param workspace the workdir to fill
     * @param spec      its session's spec
     */
    public void restore(String source, String workspace, SandboxSpec spec) {
        requireEngineIds(ids(of(workspace), spec));
        of(workspace).restore(source, workspace, spec);
    }

    /**
     * See {@link Workdirs#seed}.
     *
     * @param directory the template
     * @param workspace the workdir
     * @param spec      its session's spec
     */
    public void seed(Path directory, String workspace, SandboxSpec spec) {
        requireEngineIds(ids(of(workspace), spec));
        of(workspace).seed(directory, workspace, spec);
    }

    /**
     * Only volumes carry labels; a host-directory driver lists none (and leaves volumes to volume drivers).
     *
     * @param labels selector
     * @return workdirs
     */
    public List<WorkspaceDescriptor> listWorkspaces(Map<String, String> labels) {
        return preferred == volumes ? volumes.listWorkspaces(labels) : List.of();
    }

    /**
     * Both kinds: a driver may hold snapshots made before its workdir mode changed.
     *
     * @param labels selector
     * @return snapshots
     */
    public List<SnapshotDescriptor> listSnapshots(Map<String, String> labels) {
        List<SnapshotDescriptor> out = new ArrayList<>(hostDirs.listSnapshots(labels));
        if (preferred == volumes) {
            out.addAll(volumes.listSnapshots(labels));
        }
        return out;
    }

    /**
     * See {@link Workdirs#labelSnapshot}.
     *
     * @param location the snapshot
     * @param labels   its new labels
     */
    public void labelSnapshot(String location, Map<String, String> labels) {
        of(location).labelSnapshot(location, labels);
    }

    /**
     * See {@link Workdirs#deleteSnapshot}.
     *
     * @param location the snapshot
     */
    public void deleteSnapshot(String location) {
        of(location).deleteSnapshot(location);
    }

    /**
     * See {@link Workdirs#adopt}.
     *
     * @param workspace the slot's workdir
     * @param sessionId the session
     * @return the location to record
     */
    public String adopt(String workspace, String sessionId) {
        return of(workspace).adopt(workspace, sessionId);
    }

    /** Both backends' periodic clean-up (leftover helpers, trash), on the orphan sweep's listing. */
    public void sweep() {
        volumes.sweep();
        hostDirs.sweep();
    }

    @Override
    public void close() {
        volumes.close();
        hostDirs.close();
    }
}
