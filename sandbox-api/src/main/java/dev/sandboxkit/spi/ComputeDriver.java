package dev.sandboxkit.spi;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnsupportedException;
import dev.sandboxkit.internal.LegacyCapabilities;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The compute half of a backend: starts, runs commands in, connects to and removes sandboxes (the Docker engine,
 * Kubernetes, or a fake). Implementations are thread-safe: the engine calls them from the callers' threads, the
 * reaper's and the pool's threads, and (for {@link #connect}) from its port-forward I/O threads. The lifecycle
 * engine decides when to create and remove; a driver only does it. The workdirs the sandboxes mount belong to
 * the other half, {@link WorkspaceBackend}.
 *
 * <p>Drivers report failures with the {@link dev.sandboxkit.SandboxException} subclasses: an
 * unreachable backend is {@link dev.sandboxkit.SandboxUnavailableException}, a sandbox that no longer
 * exists is {@link dev.sandboxkit.SandboxNotFoundException} (the engine then resumes the session).
 */
@SuppressWarnings("removal") // capabilities(): the old set, kept for one minor version
public interface ComputeDriver extends AutoCloseable {
    /**
     * The driver's name, for example {@code docker}.
     *
     * @return name
     */
    String name();

    /**
     * The optional compute features this driver supports; the engine refuses what needs an undeclared one, and the
     * conformance kit tests only what is declared. Fixed for the driver's lifetime.
     *
     * @return the capabilities, possibly empty
     */
    Set<ComputeCapability> computeCapabilities();

    /**
     * The compute capabilities as constants of the old single set, for code written before the SPI was split.
     * Default: {@link #computeCapabilities()}, each constant by its name.
     *
     * @return the capabilities
     * @deprecated read {@link #computeCapabilities()}; goes in the next minor version
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    default Set<DriverCapability> capabilities() {
        return LegacyCapabilities.old(computeCapabilities(), Set.of());
    }

    /**
     * Checks that the backend can be reached.
     *
     * @throws dev.sandboxkit.SandboxUnavailableException naming the endpoint, if it cannot
     */
    void ping();

    /**
     * Creates and starts a sandbox whose PID 1 is {@code sleep infinity} (under an init when the spec
     * asks), with the workdir mounted at {@value SandboxSpec#WORKSPACE}. Returns once it accepts execs.
     *
     * @param request what to start
     * @return the sandbox id
     * @throws dev.sandboxkit.SandboxAcquireException if it cannot be started (the half-created resource
     *                                                is removed)
     */
    String create(CreateRequest request);

    /**
     * Runs a command in a sandbox and waits for it, honouring every field of the request: env for this
     * exec only, working dir, stdin then EOF, timeout (kill, report {@code TIMED_OUT}), output caps and
     * the listener. Spec-level env is applied by the engine into the request before this call. A request with
     * {@link ExecRequest#tty()} (sent only to drivers that declare {@link ComputeCapability#TTY}) runs on a
     * terminal of that size: the output merged on stdout, stdin typed without an EOF.
     *
     * <p>A command that cannot start is a result, not an exception, with one line on stderr naming the
     * program or directory, as a POSIX shell reports it: 127 when the program is not found; 126 when it
     * cannot run, when the working directory is missing or the sandbox user cannot enter it (nothing runs),
     * and when the argument list is too long ({@code E2BIG}).
     *
     * <p>If the sandbox disappears while the command runs, return the output read so far with
     * {@code Termination.KILLED} and the exit code the backend reported (137 for SIGKILL), or -1 when it
     * reported none; do not throw. This holds whoever removed it, and also when the backend reports the
     * removal as a failure to run or read the command: an exec racing a removal ends {@code KILLED} if the
     * command may have started, else with {@link dev.sandboxkit.SandboxNotFoundException}.
     *
     * @param sandboxId the sandbox
     * @param request   what to run
     * @return the result
     * @throws dev.sandboxkit.SandboxNotFoundException if the sandbox does not exist (or is not running) when
     *                                                 the exec starts
     */
    ExecResult exec(String sandboxId, ExecRequest request);

    /**
     * Starts a command on a pseudo-terminal of {@link ExecRequest#tty()}'s size and returns at once with its
     * streams, for the caller to type into, read and resize while it runs. Honours the request's env (for this
     * command only), working directory and timeout (kill, report {@code TIMED_OUT}); stdin bytes, if any, are
     * typed first; the output caps and the listener do not apply (the output goes to the connection). A
     * command that cannot start shows it as for {@link #exec}: a message on the output and exit code 126 or
     * 127. If the sandbox is removed, the output ends and the status says {@code KILLED}. Declared with
     * {@link ComputeCapability#TTY}. Default: unsupported.
     *
     * @param sandboxId the sandbox
     * @param request   what to run; {@link ExecRequest#tty()} is set
     * @return the running terminal; the caller closes it
     * @throws dev.sandboxkit.SandboxNotFoundException if the sandbox does not exist (or is not running)
     * @throws SandboxUnsupportedException             if this driver has no terminals
     */
    default TerminalConnection openTerminal(String sandboxId, ExecRequest request) {
        throw new SandboxUnsupportedException("the " + name() + " driver has no terminals (PTY)");
    }

    /**
     * Opens one duplex byte stream to a TCP port on the sandbox's loopback ({@code 127.0.0.1:port} as seen from
     * inside), without giving the sandbox a network: the stream runs through the backend's own channel (an
     * attached exec, a port-forward stream). Declare {@link ComputeCapability#PORT_FORWARD}. Returns once the
     * stream is set up; a port where nothing listens gives a connection whose input ends at once (or soon), not
     * an exception, since the backend may learn it only from the relay. The engine calls it once per accepted
     * local connection, from its I/O threads. Default: unsupported.
     *
     * @param sandboxId the sandbox
     * @param port      the TCP port inside the sandbox, 1-65535
     * @return the open connection; the caller closes it
     * @throws dev.sandboxkit.SandboxUnsupportedException  if this driver cannot forward ports
     * @throws dev.sandboxkit.SandboxNotFoundException      if the sandbox does not exist (or is not running)
     * @throws dev.sandboxkit.SandboxUnavailableException   if the backend cannot be reached
     */
    default PortConnection connect(String sandboxId, int port) {
        throw new dev.sandboxkit.SandboxUnsupportedException("the " + name() + " driver cannot forward ports");
    }

    /**
     * Hard-kills and removes a sandbox, and returns only once it is gone: the engine may start a new
     * sandbox on the same workdir right after (a volume that one node mounts at a time must be free).
     * Idempotent: removing a missing sandbox is not an error.
     *
     * @param sandboxId the sandbox
     */
    void remove(String sandboxId);

    /**
     * Lists sandboxes whose labels include all of the given ones. The session label in the result
     * holds the exact session id, even where the backend had to sanitise it.
     *
     * @param labels label selector
     * @return matching sandboxes
     */
    List<SandboxDescriptor> list(Map<String, String> labels);

    /** Releases the driver's own resources (connections, threads). Does not remove sandboxes. */
    @Override
    void close();
}
