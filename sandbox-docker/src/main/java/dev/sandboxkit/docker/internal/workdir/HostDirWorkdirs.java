package dev.sandboxkit.docker.internal.workdir;

import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.docker.internal.files.HostSnapshots;
import dev.sandboxkit.docker.internal.files.HostWorkspaces;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.SnapshotDescriptor;
import dev.sandboxkit.spi.WorkspaceCapability;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** Workdirs as host directories {@code <root>/<sessionId>} (see {@link HostWorkspaces}, {@link HostSnapshots}). */
public final class HostDirWorkdirs implements Workdirs {
    private final HostWorkspaces workspaces;
    private final HostSnapshots snapshots;

    /**
     * Host directories below {@code root}.
     *
     * @param root        the workspace root
     * @param defaultUser the sandbox user of a root JVM when the spec names none
     */
    public HostDirWorkdirs(Path root, String defaultUser) {
        this.workspaces = new HostWorkspaces(root, defaultUser);
        this.snapshots = new HostSnapshots(workspaces);
    }

    @Override
    public Set<WorkspaceCapability> capabilities() {
        return EnumSet.of(WorkspaceCapability.HOST_WORKSPACE, WorkspaceCapability.FILES, WorkspaceCapability.SNAPSHOTS,
                WorkspaceCapability.WORKSPACE_ARCHIVE, WorkspaceCapability.DIRECTORY_TEMPLATES);
    }

    @Override
    public String sandboxUser(SandboxSpec spec) {
        return workspaces.sandboxUser(spec);
    }

    @Override
    public String create(String sessionId, SandboxSpec spec) {
        return workspaces.create(sessionId, spec);
    }

    @Override
    public void delete(String location) {
        workspaces.delete(location);
    }

    /**
     * Where a workdir of another workspace root is (another host's, since each host has its own root).
     *
     * @param location a recorded workdir
     * @return empty if it is under this root; else {@code "root <its parent>"}
     */
    public Optional<String> elsewhere(String location) {
        return workspaces.isUnderRoot(location) ? Optional.empty()
                : Optional.of("root " + Path.of(location).toAbsolutePath().normalize().getParent());
    }

    /** Renames the slot's host directory to the session's; the running container's mount follows it. */
    @Override
    public String adopt(String location, String sessionId) {
        return workspaces.adopt(location, sessionId);
    }

    @Override
    public Mount mount(CreateRequest request) {
        if (!workspaces.exists(request.workspace())) {
            // The engine would create a missing bind source as root:root 0755; recreate it properly instead.
            if (!Path.of(request.workspace()).equals(workspaces.root().resolve(request.sessionId()))) {
                throw new SandboxAcquireException("workdir " + request.workspace() + " does not exist");
            }
            workspaces.create(request.sessionId(), request.spec());
        } else {
            // The session's user may have changed since its last container: the workdir must be the new user's.
            workspaces.claim(request.workspace(), request.spec());
        }
        // A mount rather than a "src:dst:rw" bind: session ids may contain ':', and a missing source
        // is an error here instead of being created as root:root 0755.
        return new Mount(false, request.workspace());
    }

    /** Host-side, on the bind-mounted directory; no container needed (see {@code internal.files.HostFiles}). */
    @Override
    public SandboxFiles files(String location, SandboxSpec spec, FileLimits limits) {
        return workspaces.files(location, spec, limits);
    }

    /** Walks the host directory through descriptors, links kept as links (see {@code HostFiles.exportTree}). */
    @Override
    public void export(String location, SandboxSpec spec, OutputStream out) throws IOException {
        workspaces.export(location, spec, out);
    }

    @Override
    public void importInto(String location, SandboxSpec spec, InputStream in) {
        workspaces.importInto(location, spec, in);
    }

    /** Copies the workdir to {@code <root>/.snapshots/<id>} (see {@link HostSnapshots}). */
    @Override
    public SnapshotDescriptor snapshot(String location, Map<String, String> labels) {
        return snapshots.snapshot(location, labels);
    }

    @Override
    public void restore(String source, String location, SandboxSpec spec) {
        snapshots.restore(source, location, spec);
    }

    /** Copies a spec's template directory in, as a restore does (see {@link HostSnapshots#seed}). */
    @Override
    public void seed(Path directory, String location, SandboxSpec spec) {
        snapshots.seed(directory, location, spec);
    }

    @Override
    public List<SnapshotDescriptor> listSnapshots(Map<String, String> labels) {
        return snapshots.list(labels);
    }

    @Override
    public void labelSnapshot(String location, Map<String, String> labels) {
        snapshots.label(location, labels);
    }

    @Override
    public void deleteSnapshot(String location) {
        snapshots.delete(location);
    }

    /** Deletes workdir content a restore set aside and could not delete (see {@code internal.files.Trash}). */
    @Override
    public void sweep() {
        snapshots.sweep();
    }

    /** Waits for the background deletions of restores. */
    @Override
    public void close() {
        snapshots.close();
    }
}
