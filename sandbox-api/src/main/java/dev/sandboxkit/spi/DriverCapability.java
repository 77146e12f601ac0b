package dev.sandboxkit.spi;

/**
 * Optional features a {@link SandboxDriver} declared in one set, before the SPI was split into its two halves.
 * Each constant has the same name in exactly one of {@link ComputeCapability} and {@link WorkspaceCapability}, and
 * the engine reads those: {@link SandboxDriver#computeCapabilities()} and
 * {@link SandboxDriver#workspaceCapabilities()} derive from {@link SandboxDriver#capabilities()} for a driver that
 * declares only this set, so such a driver keeps working unchanged.
 *
 * @deprecated declare {@link ComputeDriver#computeCapabilities()} and {@link WorkspaceBackend#workspaceCapabilities()}
 *             instead; this enum goes in the next minor version
 */
@Deprecated(since = "0.1.0", forRemoval = true)
public enum DriverCapability {
    /** Exec can feed stdin and close it (EOF). */
    STDIN,
    /** A timed-out exec is killed together with its children. */
    KILL_PROCESS_GROUP,
    /** Exec output is streamed to the listener while the process runs. */
    STREAMING,
    /** The workdir is a host directory the JVM can read (Docker bind mount). */
    HOST_WORKSPACE,
    /** Sandboxes run real processes (not a fake). */
    REAL_PROCESSES,
    /** {@link SandboxDriver#files} is implemented: the files API works on this driver's workdirs. */
    FILES,
    /**
     * Workdir snapshots: {@link SandboxDriver#snapshotWorkspace}, {@link SandboxDriver#restoreWorkspace},
     * {@link SandboxDriver#listSnapshots}, {@link SandboxDriver#labelSnapshot} and {@link SandboxDriver#deleteSnapshot}.
     */
    SNAPSHOTS,
    /**
     * {@link SandboxDriver#exportWorkspace} and {@link SandboxDriver#importWorkspace} are implemented: a suspended
     * session's workdir can be packed into an archive tier and unpacked on another host
     * ({@code SandboxManager.Builder.archive}).
     */
    WORKSPACE_ARCHIVE,
    /**
     * {@link SandboxDriver#seedWorkspace} is implemented: a spec's template can be a host directory
     * ({@link dev.sandboxkit.WorkspaceTemplate#directory}). Snapshot templates need {@link #SNAPSHOTS} only.
     */
    DIRECTORY_TEMPLATES,
    /**
     * {@link SandboxDriver#connect} is implemented: a TCP port inside the sandbox can be reached from the host
     * without giving the sandbox a network ({@code Sandbox.forward}).
     */
    PORT_FORWARD,
    /**
     * A process an exec leaves running in a session of its own outlives the exec, and later execs reach it:
     * what background processes ({@code Sandbox.start}) are built on. They also need a real shell in the image.
     */
    BACKGROUND_PROCESSES,
    /**
     * Commands can run on a pseudo-terminal: {@link dev.sandboxkit.ExecRequest#withTty} is honoured by
     * {@link SandboxDriver#exec}, and {@link SandboxDriver#openTerminal} is implemented.
     */
    TTY
}
