package dev.sandboxkit.internal;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.FileLimits;
import dev.sandboxkit.ForwardOptions;
import dev.sandboxkit.PortForward;
import dev.sandboxkit.ProcessOptions;
import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxProcess;
import dev.sandboxkit.SandboxUnsupportedException;
import dev.sandboxkit.ShellSession;
import dev.sandboxkit.ShellSessionEndedException;
import dev.sandboxkit.Terminal;
import dev.sandboxkit.spi.ComputeCapability;
import dev.sandboxkit.spi.ComputeDriver;
import dev.sandboxkit.spi.WorkspaceBackend;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.spi.TerminalConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiFunction;

/**
 * What a caller does inside a session's live sandbox: execs, shell sessions, background processes, terminals,
 * port forwards and files. None of it takes the session's lifecycle lock: each operation holds an exec slot of
 * the session (activity, which the reaper waits for) and asks the {@link LifecycleActions} to resume a suspended
 * session, or to forget a container that vanished.
 */
final class LiveOperations {
    private static final Logger log = LoggerFactory.getLogger(LiveOperations.class);

    private final ComputeDriver compute;
    private final WorkspaceBackend workspaces;
    private final SessionStore store;
    private final SessionRegistry sessions;
    private final Clock clock;
    private final FileLimits fileLimits;
    private final Events events;
    private final ProcessSupport processes;
    private final PortForwards forwards;
    private final LifecycleActions lifecycle;
    /** Terminals open now, so that the manager's close() can end them. */
    private final Set<ManagedTerminal> terminals = ConcurrentHashMap.newKeySet();

    LiveOperations(ComputeDriver compute, WorkspaceBackend workspaces, SessionStore store, SessionRegistry sessions,
                   Clock clock, FileLimits fileLimits, Events events, ProcessSupport processes, PortForwards forwards,
                   LifecycleActions lifecycle) {
        this.compute = compute;
        this.workspaces = workspaces;
        this.store = store;
        this.sessions = sessions;
        this.clock = clock;
        this.fileLimits = fileLimits;
        this.events = events;
        this.processes = processes;
        this.forwards = forwards;
        this.lifecycle = lifecycle;
    }

    // ---------------------------------------------------------------- exec

    /** Runs a command in the session's live sandbox (resuming it first); {@code incarnation} null reaches any. */
    ExecResult exec(String sessionId, ExecRequest request, Instant incarnation) {
        Objects.requireNonNull(sessionId, "sessionId");
        Objects.requireNonNull(request, "request");
        requireTtySupport(request);
        return inLiveSandbox(sessionId, incarnation, (e, sandboxId) -> execIn(e, sandboxId, request, request));
    }

    /** A request with a terminal needs a driver that has terminals: say so rather than run it without one. */
    private void requireTtySupport(ExecRequest request) {
        if (request.tty() != null && !compute.computeCapabilities().contains(ComputeCapability.TTY)) {
            throw new SandboxUnsupportedException("the " + compute.name() + " driver cannot run commands on a "
                    + "terminal (PTY): it does not declare the TTY capability");
        }
    }

    /**
     * Runs an action on the session's live sandbox as an exec: resumes a suspended session first, counts the
     * action as activity (the reaper waits for it), and if the container vanished before the action started
     * (removed outside this manager) suspends and resumes transparently, once.
     */
    private <T> T inLiveSandbox(String sessionId, Instant incarnation, BiFunction<SessionEntry, String, T> action) {
        for (int attempt = 1; ; attempt++) {
            lifecycle.checkOpen();
            SessionEntry e = sessions.get(sessionId);
            String sandboxId = e == null ? null : e.beginExec(clock.millis());
            if (sandboxId == null) {
                lifecycle.resume(sessionId, incarnation);
                continue;
            }
            if (incarnation != null && !incarnation.equals(e.record.createdAt())) {
                e.endExec(clock.millis());
                throw SessionRecords.notFound(sessionId); // a later session reuses the id: not this handle's
            }
            boolean vanished = false;
            try {
                return action.apply(e, sandboxId);
            } catch (SandboxNotFoundException notFound) {
                if (attempt >= 2 || e.isGone() || !sandboxId.equals(e.sandboxId())) {
                    throw notFound;
                }
                vanished = true;
            } finally {
                e.endExec(clock.millis());
            }
            if (vanished) {
                log.warn("Session {}: container {} vanished; resuming with a fresh one", sessionId,
                        LifecycleEngine.shortId(sandboxId));
                lifecycle.forgetContainer(e, sandboxId);
            }
        }
    }

    /**
     * Runs {@code command} (with the session's environment) in the live sandbox; events, when enabled, show
     * {@code shown}: the caller's request, which a shell session wraps into its script.
     */
    private ExecResult execIn(SessionEntry e, String sandboxId, ExecRequest shown, ExecRequest command) {
        ExecRequest withEnv = ContainerSetup.withEnvironment(e.execEnv, command);
        if (!events.enabled()) {
            return classify(e, sandboxId, compute.exec(sandboxId, withEnv));
        }
        boolean first = e.takeFirstExec();
        events.emit(new SandboxEvent.ExecStarted(e.sessionId, sandboxId, clock.instant(), shown));
        ExecResult result = classify(e, sandboxId, compute.exec(sandboxId, withEnv));
        events.emit(new SandboxEvent.ExecFinished(e.sessionId, sandboxId, clock.instant(), result, first));
        return result;
    }

    /** An exec cut short because the janitor killed its container reports that, not a generic kill. */
    static ExecResult classify(SessionEntry e, String sandboxId, ExecResult result) {
        if (result.termination() != ExecResult.Termination.EXITED && result.termination() != ExecResult.Termination.TIMED_OUT
                && sandboxId.equals(e.lifetimeKilled)) {
            return ExecResult.builder().exitCode(result.exitCode()).stdoutBytes(result.stdoutBytes())
                    .stderrBytes(result.stderrBytes()).stdoutTruncated(result.stdoutTruncated())
                    .stderrTruncated(result.stderrTruncated())
                    .termination(ExecResult.Termination.LIFETIME_EXCEEDED).duration(result.duration()).build();
        }
        return result;
    }

    /**
     * Resets the idle clock of the session, or only of one incarnation of it (a handle's): a handle taken before
     * a destroy must never keep the new session that reuses the id alive.
     */
    void keepAlive(String sessionId, Instant incarnation) {
        SessionEntry e = sessions.get(sessionId);
        SessionRecord held = e == null ? null : e.record;
        if (held != null && (incarnation == null || incarnation.equals(held.createdAt())) && e.touch(clock.millis())) {
            return;
        }
        SessionRecord rec = store.find(sessionId).orElseThrow(() -> SessionRecords.notFound(sessionId));
        if (SessionRecords.goneFor(rec, incarnation)) {
            throw SessionRecords.notFound(sessionId);
        }
    }

    // ---------------------------------------------------------------- terminals

    /**
     * Opens a terminal in the session's live sandbox (resuming it first). The terminal takes an exec slot of its
     * own before the driver opens it and keeps it until it ends ({@link #terminalEnded}), so that the reaper
     * waits for it as for an exec; the slot {@link #inLiveSandbox} takes for the opening is released as usual.
     */
    Terminal openTerminal(String sessionId, ExecRequest request, Instant incarnation) {
        Objects.requireNonNull(request, "request");
        if (request.tty() == null) {
            throw new IllegalArgumentException("a terminal needs a size: pass request.withTty(TerminalSize.of(80, 24))");
        }
        requireTtySupport(request);
        return inLiveSandbox(sessionId, incarnation, (e, sandboxId) -> {
            String held = e.beginExec(clock.millis());
            if (!sandboxId.equals(held)) {
                if (held != null) {
                    e.endExec(clock.millis());
                }
                throw new SandboxNotFoundException("container " + LifecycleEngine.shortId(sandboxId)
                        + " is being removed");
            }
            ManagedTerminal terminal;
            try {
                TerminalConnection connection = compute.openTerminal(sandboxId,
                        ContainerSetup.withEnvironment(e.execEnv, request));
                terminal = new ManagedTerminal(this, e, sandboxId, connection, request.tty());
            } catch (RuntimeException | Error failed) {
                e.endExec(clock.millis());
                throw failed;
            }
            terminals.add(terminal);
            if (lifecycle.isClosed()) {
                terminal.close(); // closeTerminals() may have passed the set already
            }
            return terminal;
        });
    }

    /** A terminal ended: its exec slot is free again. Called once per terminal, on any thread. */
    void terminalEnded(SessionEntry e, ManagedTerminal terminal) {
        terminals.remove(terminal);
        e.endExec(clock.millis());
    }

    /** Ends every open terminal; the manager calls it while closing, once their containers are gone. */
    void closeTerminals() {
        for (ManagedTerminal t : terminals) {
            try {
                t.close();
            } catch (RuntimeException ex) {
                log.debug("Could not close {}: {}", t, ex.toString());
            }
        }
    }

    // ---------------------------------------------------------------- port forwards

    /**
     * Opens a forward to the session's live container (resuming it first), as an exec would reach it. The
     * forward is tied to that container: its removal, for whatever reason, closes the forward.
     */
    PortForward forward(String sessionId, Instant incarnation, int containerPort, ForwardOptions options) {
        Objects.requireNonNull(options, "options");
        PortForwards.validate(compute, containerPort, options);
        return inLiveSandbox(sessionId, incarnation, (e, sandboxId) -> {
            ManagedPortForward f = forwards.open(sessionId, sandboxId, containerPort, options);
            if (!sandboxId.equals(e.sandboxId())) {
                f.close(); // removed meanwhile (destroy, lifetime): its removal may have run before we registered
                throw new SandboxNotFoundException("the sandbox of session " + sessionId
                        + " was removed while the forward was being opened");
            }
            return f;
        });
    }

    // ---------------------------------------------------------------- background processes (ProcessSupport)

    /** Starts a background process in the session's live sandbox (resuming it first), as an exec would run. */
    SandboxProcess startProcess(String sessionId, Instant incarnation, ExecRequest request, ProcessOptions options) {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(options, "options");
        return inLiveSandbox(sessionId, incarnation, (e, sandboxId) -> processes.start(e, sandboxId, request, options));
    }

    /** A handle on one of the session's background processes. */
    SandboxProcess process(String sessionId, String processId) {
        SessionIds.requireValid(sessionId);
        Objects.requireNonNull(processId, "processId");
        lifecycle.checkOpen();
        return processes.handle(sessionId, processId);
    }

    /** The session's background processes. */
    List<SandboxProcess> processes(String sessionId) {
        SessionIds.requireValid(sessionId);
        lifecycle.checkOpen();
        return processes.list(sessionId);
    }

    // ---------------------------------------------------------------- shell sessions

    /** Creates a shell session's state in the session's live sandbox (resuming it first), as an exec would reach it. */
    ShellSession openShell(String sessionId, Instant incarnation) {
        String name = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
        return inLiveSandbox(sessionId, incarnation, (e, sandboxId) -> new ManagedShellSession(this, sessionId,
                sandboxId, ManagedShellSession.stateDir(sessionId, compute.exec(sandboxId,
                ManagedShellSession.openRequest(name)))));
    }

    /**
     * One command of a shell session: activity exactly like an exec (the reaper waits for it), but it never
     * resumes: the session's state lived in the sandbox it was opened in. Events show the caller's request.
     */
    ExecResult shellExec(String sessionId, ManagedShellSession shell, ExecRequest request, ExecRequest command) {
        lifecycle.checkOpen();
        requireTtySupport(command);
        SessionEntry e = sessions.get(sessionId);
        String sandboxId = e == null ? null : e.beginExec(clock.millis());
        if (sandboxId == null) {
            throw shellEnded(sessionId);
        }
        try {
            if (!sandboxId.equals(shell.sandboxId)) {
                throw shellEnded(sessionId);
            }
            return execIn(e, sandboxId, request, command);
        } catch (SandboxNotFoundException gone) {
            throw shellEnded(sessionId);
        } finally {
            e.endExec(clock.millis());
        }
    }

    /** Whether the session's live container is {@code sandboxId} (a shell session's state lives there). */
    boolean holds(String sessionId, String sandboxId) {
        SessionEntry e = sessions.get(sessionId);
        return e != null && sandboxId.equals(e.sandboxId());
    }

    /** Discards a shell session's state, unless its sandbox is already gone (the state went with it). */
    void closeShell(String sessionId, ManagedShellSession shell) {
        SessionEntry e = sessions.get(sessionId);
        if (lifecycle.isClosed() || e == null || !shell.sandboxId.equals(e.sandboxId())) {
            return;
        }
        try {
            ExecResult r = compute.exec(shell.sandboxId, shell.closeRequest());
            if (!r.isSuccess()) {
                log.debug("Session {}: removing shell state {} ended with {}", sessionId, shell.dir, r);
            }
        } catch (RuntimeException ex) {
            log.debug("Session {}: could not remove shell state {}: {}", sessionId, shell.dir, ex.toString());
        }
    }

    private static ShellSessionEndedException shellEnded(String sessionId) {
        return new ShellSessionEndedException("the shell session in " + sessionId + " ended: its sandbox was reaped, "
                + "replaced or destroyed, and its state with it; open a new one with Sandbox.shell()");
    }

    // ---------------------------------------------------------------- files

    /**
     * The files API of the session, or of one incarnation of it (a handle's: a later session reusing the id is not
     * reached); {@code incarnation} null reaches any.
     */
    SandboxFiles files(String sessionId, Instant incarnation) {
        return new SessionFiles(workspaces, store, sessions, clock, fileLimits, lifecycle, sessionId, incarnation);
    }
}
