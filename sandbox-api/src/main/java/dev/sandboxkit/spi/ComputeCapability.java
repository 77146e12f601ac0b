package dev.sandboxkit.spi;

/**
 * Optional features a {@link ComputeDriver} may declare in {@link ComputeDriver#computeCapabilities()}: what varies
 * between drivers in running commands and reaching sandboxes. The engine refuses an operation that needs an undeclared
 * one with {@link dev.sandboxkit.SandboxUnsupportedException}; the conformance kit tests only what is declared.
 */
public enum ComputeCapability {
    /** {@link ComputeDriver#exec} feeds {@link dev.sandboxkit.ExecRequest#stdin()} and then closes it (EOF). */
    STDIN,
    /** A timed-out exec is killed together with its children. */
    KILL_PROCESS_GROUP,
    /** Exec output is streamed to the request's listener while the process runs. */
    STREAMING,
    /** Sandboxes run real processes in a real shell (not a fake). */
    REAL_PROCESSES,
    /**
     * {@link ComputeDriver#connect} is implemented: a TCP port inside the sandbox can be reached from the host
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
     * {@link ComputeDriver#exec}, and {@link ComputeDriver#openTerminal} is implemented.
     */
    TTY
}
