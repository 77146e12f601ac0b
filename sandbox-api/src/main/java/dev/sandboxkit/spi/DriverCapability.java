package dev.sandboxkit.spi;

/** Optional features a driver may declare; the conformance kit tests only what is declared. */
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
     * Commands can run on a pseudo-terminal: {@link dev.sandboxkit.ExecRequest#withTty} is honoured by
     * {@link SandboxDriver#exec}, and {@link SandboxDriver#openTerminal} is implemented.
     */
    TTY
}
