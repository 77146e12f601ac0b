package dev.sandboxkit.spi;

/**
 * Optional features a {@link WorkspaceBackend} may declare in {@link WorkspaceBackend#workspaceCapabilities()}: what
 * varies between backends in keeping workdirs. The engine refuses an operation that needs an undeclared one
 * ({@link dev.sandboxkit.SandboxUnsupportedException}, or a {@link dev.sandboxkit.SandboxFileException} with reason
 * {@code UNSUPPORTED} for the files API); the conformance kit tests only what is declared.
 */
public enum WorkspaceCapability {
    /** The workdir is a host directory the JVM can read (the Docker driver's bind mounts). */
    HOST_WORKSPACE,
    /** {@link WorkspaceBackend#files} is implemented: the files API works on this backend's workdirs. */
    FILES,
    /**
     * Workdir snapshots: {@link WorkspaceBackend#snapshotWorkspace}, {@link WorkspaceBackend#restoreWorkspace},
     * {@link WorkspaceBackend#listSnapshots}, {@link WorkspaceBackend#labelSnapshot} and
     * {@link WorkspaceBackend#deleteSnapshot}.
     */
    SNAPSHOTS,
    /**
     * {@link WorkspaceBackend#exportWorkspace} and {@link WorkspaceBackend#importWorkspace} are implemented: a
     * suspended session's workdir can be packed into an archive tier and unpacked on another host
     * ({@code SandboxManager.Builder.archive}).
     */
    WORKSPACE_ARCHIVE,
    /**
     * {@link WorkspaceBackend#seedWorkspace} is implemented: a spec's template can be a host directory
     * ({@link dev.sandboxkit.WorkspaceTemplate#directory}). Snapshot templates need {@link #SNAPSHOTS} only.
     */
    DIRECTORY_TEMPLATES
}
