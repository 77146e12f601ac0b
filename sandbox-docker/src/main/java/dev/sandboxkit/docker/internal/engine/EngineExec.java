package dev.sandboxkit.docker.internal.engine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ExecResult.Termination;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static dev.sandboxkit.docker.internal.engine.EngineClient.segment;
import static dev.sandboxkit.docker.internal.engine.EngineConnection.NO_DEADLINE;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The exec path, on the raw Engine API because docker-java's exec start neither half-closes stdin nor
 * kills on close. Exactly three engine calls per exec: create, start (upgraded to the raw stream, read
 * and written on the calling thread), inspect for the exit code.
 *
 * <p>Killing: every exec carries {@value #MARKER}{@code =<random>} in its environment. On timeout,
 * interrupt or listener failure a second exec runs {@link ExecKiller#KILL_SCRIPT}, which SIGKILLs every process
 * (and process group) whose environment holds that marker. Images without {@code /bin/sh} fall back to
 * killing the host pid tree when the engine is local.
 */
public final class EngineExec {
    /** The environment variable every exec carries, so that its processes can be found and killed. */
    public static final String MARKER = "SANDBOXKIT_EXEC_ID";
    /** Time allowed after a timeout to kill, drain and inspect. */
    private static final long GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(1000);
    private static final long DRAIN_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    static final long ABORT_KILL_NANOS = TimeUnit.SECONDS.toNanos(3);
    /** Silence after which a running exec asks whether its container still lives (see {@link #pump}). */
    private static final long LIVENESS_NANOS = TimeUnit.SECONDS.toNanos(2);
    static final Duration MAX_TIMEOUT = Duration.ofDays(36_500);

    /**
     * How every command is started ({@code exec-command.sh}): the command channel's supervisor embeds it, and
     * plain execs that ask for a working directory run it through {@link #ENTER}. Lives here, not in the
     * channel package, so that the engine package depends on nothing above it.
     */
    public static final String EXEC_COMMAND = resource("exec-command.sh");

    /**
     * Runs a command that asks for a working directory: {@code sh -c ENTER sh <dir> argv...} from {@code /}.
     * The engine would enter the directory as root before switching to the sandbox user, so a directory the
     * user cannot enter would work on a plain exec and fail on the command channel; this way both give 126.
     */
    static final String ENTER = EXEC_COMMAND
            + "__cd \"$1\"\nunset PWD OLDPWD SHLVL\nshift\n__run '' \"$@\"\n";
    /**
     * {@link #ENTER} for a command on a terminal: {@code sh -c TTY_ENTER sh <columns> <rows> <dir> argv...}. Sets
     * the terminal's size from inside before the command runs: engines before API 1.42 open the terminal at
     * 0x0 and take the size only by a resize after the start, which a quick command (stty size) can beat.
     */
    static final String TTY_ENTER = EXEC_COMMAND
            + "stty cols \"$1\" rows \"$2\" 2>/dev/null\nshift 2\n"
            + "__cd \"$1\"\nunset PWD OLDPWD SHLVL\nshift\n__run '' \"$@\"\n";
    /** The runtime's message when execve failed after the process started (printed by runc's init, exit 1). */
    private static final java.util.regex.Pattern E2BIG = java.util.regex.Pattern.compile(
            "exec [^\n]*: argument list too long\r?\n");
    /**
     * A request smaller than this cannot reach ARG_MAX (at least 128 KiB) unless the image's own environment
     * is huge; below it, a program that prints runc's line and exits 1 keeps its exit code.
     */
    private static final long E2BIG_MIN_BYTES = 64 * 1024;

    private static final Logger log = LoggerFactory.getLogger(EngineExec.class);

    private final EngineClient client;
    private final DockerHost host;
    /** Running execs by container, so that {@link #containerRemoved} can end them. */
    private final Map<String, Set<Run>> active = new ConcurrentHashMap<>();
    private final ExecKiller killer;

    /**
     * The plain exec path on {@code client}'s engine.
     *
     * @param client the engine client
     */
    public EngineExec(EngineClient client) {
        this.client = client;
        this.host = client.host();
        this.killer = new ExecKiller(this, client);
    }

    /**
     * Runs a command as an engine exec and waits for its result.
     *
     * @param containerId the container
     * @param request     the command
     * @return the result; a timeout or a removal during the run is a result, not an exception
     * @throws SandboxNotFoundException if the container is gone and the command did not start
     * @throws SandboxExecException     if the command could not be started or its output not read
     */
    public ExecResult exec(String containerId, ExecRequest request) {
        if (request.tty() != null) {
            // Always through the shell wrapper, which sets the size; without /bin/sh as the engine does it.
            try {
                return execute(new Run(containerId, request, request.effectiveWorkingDir(), true), true);
            } catch (NoShell e) {
                return execute(new Run(containerId, request, request.effectiveWorkingDir(), false), true);
            }
        }
        if (request.workingDir() == null || request.workingDir().equals(SandboxSpec.WORKSPACE)) {
            return execute(new Run(containerId, request, SandboxSpec.WORKSPACE, false), true);
        }
        try {
            return execute(new Run(containerId, request, request.workingDir(), true), true);
        } catch (NoShell e) {
            // No /bin/sh in the image: enter the directory the engine's way (as root, see exec-command.sh).
            return execute(new Run(containerId, request, request.workingDir(), false), true);
        }
    }

    /**
     * A housekeeping exec (the command channel's kills) from {@code /}: the sandbox may have broken /workspace.
     *
     * @param containerId the container
     * @param request     the command; its working directory is ignored
     * @return the result, as from {@link #exec}
     */
    public ExecResult execFromRoot(String containerId, ExecRequest request) {
        return execute(new Run(containerId, request, "/", false), true);
    }

    /**
     * Kills, with their process groups, the processes of a container that carry {@value #MARKER}{@code =marker}
     * (an exec started outside this class, such as a port relay). Best effort: never throws.
     *
     * @param containerId the container
     * @param marker      the marker value the exec was created with
     */
    public void killMarked(String containerId, String marker) {
        killer.killMarked(containerId, marker);
    }

    /**
     * Called before the driver removes a container: its running execs will report KILLED.
     *
     * @param containerId the container
     */
    public void containerRemoving(String containerId) {
        Set<Run> runs = active.get(containerId);
        if (runs != null) {
            runs.forEach(r -> r.containerRemoved = true);
        }
    }

    /**
     * Called once a container is removed: wakes its execs' readers, in case the engine left a stream open.
     *
     * @param containerId the container
     */
    public void containerRemoved(String containerId) {
        Set<Run> runs = active.get(containerId);
        if (runs != null) {
            for (Run r : runs) {
                r.containerRemoved = true;
                EngineConnection stream = r.stream;
                if (stream != null) {
                    stream.close();
                }
            }
        }
    }

    /** One exec's state. */
    static final class Run {
        final String containerId;
        final ExecRequest request;
        final long started = System.nanoTime();
        final long deadline;
        final long hardDeadline;
        final String marker = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
        final ExecOutput out;
        final String workingDir;
        /** Runs under {@link #ENTER} so that the sandbox user enters the working directory itself. */
        final boolean entered;
        /** The terminal's size, or {@code null} for an exec with separate pipes. */
        final dev.sandboxkit.TerminalSize tty;
        /** A terminal the caller types into: stdin is attached whether or not the request has stdin bytes. */
        final boolean interactive;
        String execId;
        /** Podman's exec inspect has no pid (always 0) and its start failures come as stderr. */
        boolean podman;
        volatile EngineConnection stream;
        volatile boolean containerRemoved;

        Run(String containerId, ExecRequest request, String workingDir, boolean entered) {
            this(containerId, request, workingDir, entered, false);
        }

        Run(String containerId, ExecRequest request, String workingDir, boolean entered, boolean interactive) {
            this.containerId = containerId;
            this.request = request;
            this.workingDir = workingDir;
            this.entered = entered;
            this.tty = request.tty();
            this.interactive = interactive;
            Duration timeout = request.timeout();
            if (timeout != null && timeout.compareTo(MAX_TIMEOUT) > 0) {
                timeout = null; // would overflow nanoTime arithmetic; a century is no limit anyway
            }
            this.deadline = timeout == null ? NO_DEADLINE : started + timeout.toNanos();
            this.hardDeadline = timeout == null ? NO_DEADLINE : deadline + GRACE_NANOS;
            this.out = new ExecOutput(request.stdoutLimit(), request.stderrLimit(), request.listener());
            this.out.raw(tty != null);
        }

        ExecResult result(int exitCode, Termination termination) {
            return ExecResult.builder().exitCode(exitCode).stdoutBytes(out.stdout()).stderrBytes(out.stderr())
                    .stdoutTruncated(out.stdoutTruncated()).stderrTruncated(out.stderrTruncated())
                    .termination(termination).duration(Duration.ofNanos(System.nanoTime() - started)).build();
        }
    }

    ExecResult execute(Run run, boolean killOnTimeout) {
        ExecGate.Pass pass = client.gate().enter(run.containerId);
        try {
            run.execId = create(run);
        } catch (RuntimeException e) {
            pass.close();
            throw e;
        }
        run.podman = podman();
        run.out.podman(run.podman);
        register(run);
        try {
            EngineClient.Started started;
            try {
                pass.started(run.execId);
                started = client.startExec(run.execId, callDeadline(run.deadline), run.tty != null);
            } catch (SocketTimeoutException e) {
                if (passed(run.deadline)) {
                    return timedOut(run, killOnTimeout);
                }
                throw host.unreachable(e);
            } catch (InterruptedIOException e) {
                throw killer.interrupted(run);
            } catch (IOException e) {
                // The start may have reached the runtime: KILLED, never "not found", so it is not run twice.
                if (gone(run, null)) {
                    return run.result(-1, Termination.KILLED);
                }
                throw host.unreachable(e);
            } finally {
                pass.close();
            }
            if (started.error() != null) {
                return startRefused(run, started.error());
            }
            run.stream = started.stream();
            if (run.containerRemoved) {
                run.stream.close();
            }
            if (run.tty != null) {
                EngineTerminal.resize(client, run, run.tty);
            }
            return pump(run, killOnTimeout);
        } finally {
            deregister(run);
            EngineConnection stream = run.stream;
            if (stream != null) {
                stream.close();
            }
        }
    }

    /** POST /containers/{id}/exec. */
    String create(Run run) {
        ExecRequest req = run.request;
        ObjectNode body = EngineClient.JSON.createObjectNode();
        body.put("AttachStdin", req.stdinLength() >= 0 || run.interactive).put("AttachStdout", true)
                .put("AttachStderr", true).put("Tty", run.tty != null);
        if (run.tty != null) {
            body.putArray("ConsoleSize").add(run.tty.rows()).add(run.tty.columns()); // API 1.42+; older ignore it
        }
        ArrayNode cmd = body.putArray("Cmd");
        if (run.entered && run.tty != null) {
            cmd.add("/bin/sh").add("-c").add(TTY_ENTER).add("sh").add(Integer.toString(run.tty.columns()))
                    .add(Integer.toString(run.tty.rows())).add(run.workingDir);
        } else if (run.entered) {
            cmd.add("/bin/sh").add("-c").add(ENTER).add("sh").add(run.workingDir);
        }
        req.command().forEach(cmd::add);
        ArrayNode env = body.putArray("Env");
        req.env().forEach((k, v) -> {
            if (!k.equals(MARKER)) {
                env.add(k + "=" + v);
            }
        });
        env.add(MARKER + "=" + run.marker);
        body.put("WorkingDir", run.entered ? "/" : run.workingDir);
        EngineClient.Response r;
        try {
            r = client.call("POST", "/containers/" + segment(run.containerId) + "/exec", body);
        } catch (SocketTimeoutException e) {
            throw host.unreachable(e);
        } catch (InterruptedIOException e) {
            throw new SandboxExecException("interrupted before the command started in " + shortId(run.containerId));
        } catch (IOException e) {
            throw host.unreachable(e);
        }
        switch (r.status()) {
            case 201:
                try {
                    return r.json().get("Id").asText();
                } catch (IOException | RuntimeException e) {
                    throw new SandboxExecException("unexpected exec create answer: " + r.message(), e);
                }
            case 404:
                throw new SandboxNotFoundException("container " + shortId(run.containerId) + " does not exist");
            default:
                String message = r.message();
                if (EngineErrors.notRunning(r.status(), message) || gone(run, message)) {
                    throw new SandboxNotFoundException("container " + shortId(run.containerId)
                            + " is gone or not running: " + message);
                }
                if (r.status() == 409) {
                    throw new SandboxExecException("cannot exec in container " + shortId(run.containerId) + ": "
                            + message);
                }
                throw new SandboxExecException("the engine refused the exec (" + r.status() + "): " + message);
        }
    }

    /**
     * After the engine or runtime refused an exec: whether its container is gone or stopping (then the
     * command did not run because there is no sandbox any more). Patient when the text reads like a removal.
     */
    boolean gone(Run run, String message) {
        return client.containerGone(run.containerId, message == null || !EngineErrors.commandFailure(message),
                () -> run.containerRemoved);
    }

    /** Reads the stream to its end, writing stdin meanwhile, then collects the exit code. */
    private ExecResult pump(Run run, boolean killOnTimeout) {
        EngineConnection conn = run.stream;
        if (run.request.stdinLength() >= 0) {
            if (run.tty != null) {
                conn.sendKeepOpen(ByteBuffer.wrap(run.request.stdin())); // typed; a half-close would end the output
            } else {
                conn.sendThenShutdown(ByteBuffer.wrap(run.request.stdin()));
            }
        }
        try {
            long livenessAt = System.nanoTime() + LIVENESS_NANOS;
            while (true) {
                run.out.consume(conn.buffer());
                // Checked here too: a process that never stops printing never lets fill() time out.
                if (passed(run.deadline)) {
                    return timedOut(run, killOnTimeout);
                }
                long wait = run.deadline == NO_DEADLINE || livenessAt - run.deadline < 0 ? livenessAt
                        : run.deadline;
                int n = conn.fill(wait);
                if (n < 0) {
                    break;
                }
                if (n > 0) {
                    livenessAt = System.nanoTime() + LIVENESS_NANOS;
                } else if (passed(run.deadline)) {
                    return timedOut(run, killOnTimeout);
                } else {
                    // Silent for a while: under gVisor the engine may keep a removed container's stream open.
                    if (client.containerGone(run.containerId, false, () -> run.containerRemoved)) {
                        conn.close();
                        return run.result(-1, Termination.KILLED);
                    }
                    livenessAt = System.nanoTime() + LIVENESS_NANOS;
                }
            }
        } catch (ExecOutput.ListenerFailure e) {
            killer.abort(run);
            throw new SandboxExecException("the output listener threw; the process was killed", e.getCause());
        } catch (InterruptedIOException e) {
            throw killer.interrupted(run);
        } catch (IOException e) {
            if (gone(run, null)) {
                return run.result(-1, Termination.KILLED);
            }
            killer.abort(run);
            throw new SandboxExecException("lost the output stream of an exec in " + shortId(run.containerId)
                    + ": " + e.getMessage(), e);
        }
        conn.close();
        return finish(run, killOnTimeout);
    }

    /** After the stream ended: the exit code, or why there is none. */
    private ExecResult finish(Run run, boolean killOnTimeout) {
        Exit exit;
        try {
            exit = awaitExit(run, run.deadline);
        } catch (InterruptedIOException e) {
            throw killer.interrupted(run);
        } catch (IOException e) {
            throw host.unreachable(e);
        }
        if (exit == Exit.GONE) {
            return run.result(-1, Termination.KILLED);
        }
        if (exit == Exit.STILL_RUNNING) {
            // The process closed its output but runs on past the timeout.
            return timedOut(run, killOnTimeout);
        }
        // dockerd keeps an exec's pid after it ended (0: it never started); Podman always reports 0, so there
        // only its start-failure line (exit 126 or 127, nothing else before it) tells.
        boolean neverStarted = run.podman
                ? (exit.code() == 126 || exit.code() == 127) && run.out.heldStartFailure() != null
                : exit.pid() == 0;
        if (neverStarted && (exit.code() == 126 || run.podman)) {
            // The runtime could not start the process: the command's fault, or a container going away.
            String message = run.out.heldStartFailure();
            if (message != null && run.entered && EngineErrors.commandFailure(message) && message.contains("\"/bin/sh\"")) {
                throw new NoShell();
            }
            if ((message == null || !EngineErrors.commandFailure(message)) && gone(run, message)) {
                throw new SandboxNotFoundException("container " + shortId(run.containerId) + " is gone"
                        + (message == null ? "" : ": " + message.strip()));
            }
        }
        int code = run.out.finish(exit.code(), neverStarted);
        if (code == 137 && gone(run, null)) {
            return run.result(code, Termination.KILLED);
        }
        if (code == 1 && !neverStarted && argumentBytes(run.request) >= E2BIG_MIN_BYTES && run.out.stdout().length == 0
                && E2BIG.matcher(new String(run.out.stderr(), StandardCharsets.UTF_8)).matches()) {
            // runc's init reports an execve that failed (exit 1); a shell reports a command it cannot execute as 126
            return run.result(126, Termination.EXITED);
        }
        return run.result(code, Termination.EXITED);
    }

    /** What execve copies for a request: every argument and NAME=value with its NUL. */
    private static long argumentBytes(ExecRequest request) {
        long n = 0;
        for (String arg : request.command()) {
            n += arg.getBytes(StandardCharsets.UTF_8).length + 1;
        }
        for (Map.Entry<String, String> e : request.env().entrySet()) {
            n += e.getKey().getBytes(StandardCharsets.UTF_8).length + e.getValue().getBytes(StandardCharsets.UTF_8).length + 2;
        }
        return n;
    }

    /** A wrapped exec found no {@code /bin/sh}: run the command unwrapped. */
    static final class NoShell extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NoShell() {
            super(null, null, false, false);
        }
    }

    /**
     * What exec inspect said once the process ended.
     *
     * @param code exit code
     * @param pid  host pid; 0 when the process never started
     */
    record Exit(int code, long pid) {
        static final Exit GONE = new Exit(-1, -1);
        static final Exit STILL_RUNNING = new Exit(-1, -1);
    }

    /**
     * Polls the exec until the engine has its exit code. Right after the stream ends the engine may
     * still report it running for a moment; a process that closed its output may run much longer.
     */
    Exit awaitExit(Run run, long deadline) throws IOException {
        long sleepMillis = 1;
        long nextContainerCheck = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (true) {
            EngineClient.Response r = client.call("GET", "/exec/" + segment(run.execId) + "/json", null);
            // Podman answers 500 "... does not exist in database: no such container" once the container is gone.
            if (r.status() == 404 || (r.status() != 200 && EngineErrors.removal(r.message()))) {
                return Exit.GONE;
            }
            if (r.status() != 200) {
                throw new SandboxExecException("exec inspect answered " + r.status() + ": " + r.message());
            }
            JsonNode j = r.json();
            JsonNode code = j.get("ExitCode");
            if (!j.path("Running").asBoolean(false) && code != null && code.isNumber()) {
                return new Exit(code.asInt(), j.path("Pid").asLong(-1));
            }
            if (run.containerRemoved) {
                return Exit.GONE;
            }
            if (passed(deadline)) {
                return Exit.STILL_RUNNING;
            }
            if (System.nanoTime() - nextContainerCheck >= 0) {
                // The engine can lose an exec's exit when its container dies; do not wait forever.
                if (client.containerGone(run.containerId, false, () -> run.containerRemoved)) {
                    return Exit.GONE;
                }
                nextContainerCheck = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            }
            sleep(Math.min(sleepMillis, Math.max(1, TimeUnit.NANOSECONDS.toMillis(
                    EngineConnection.remainingNanos(deadline)))));
            sleepMillis = Math.min(sleepMillis * 2, 50);
        }
    }

    /** The engine answered exec start with an error instead of a stream. */
    private ExecResult startRefused(Run run, EngineClient.Response error) {
        String message = error.message();
        if (error.status() == 404 || EngineErrors.notRunning(error.status(), message)) {
            throw new SandboxNotFoundException("container " + shortId(run.containerId) + " is gone: " + message);
        }
        if (EngineErrors.commandFailure(message)) {
            if (run.entered && message.contains("\"/bin/sh\"")) {
                throw new NoShell();
            }
            run.out.startFailure(message);
            return run.result(EngineErrors.startFailureExitCode(message), Termination.EXITED);
        }
        if (gone(run, message)) {
            throw new SandboxNotFoundException("container " + shortId(run.containerId) + " is gone: " + message);
        }
        throw new SandboxExecException("the engine could not start the exec (" + error.status() + "): " + message);
    }

    /** Kills the process tree, drains what it printed, and reports TIMED_OUT, all within the grace period. */
    private ExecResult timedOut(Run run, boolean killOnTimeout) {
        if (!killOnTimeout) {
            return run.result(-1, Termination.TIMED_OUT);
        }
        long hard = run.hardDeadline == NO_DEADLINE ? System.nanoTime() + GRACE_NANOS : run.hardDeadline;
        killer.kill(run, hard - TimeUnit.MILLISECONDS.toNanos(300));
        EngineConnection conn = run.stream;
        if (conn != null) {
            long drainUntil = Math.min(System.nanoTime() + DRAIN_NANOS, hard - TimeUnit.MILLISECONDS.toNanos(100));
            try {
                while (!passed(drainUntil) && conn.fill(drainUntil) > 0) {
                    run.out.consume(conn.buffer());
                }
            } catch (ExecOutput.ListenerFailure e) {
                throw new SandboxExecException("the output listener threw; the process was killed", e.getCause());
            } catch (InterruptedIOException e) {
                Thread.currentThread().interrupt();
                throw new SandboxExecException("interrupted while killing a timed-out exec", e);
            } catch (IOException e) {
                // the stream broke: keep what we have
            }
            conn.close();
        }
        run.out.releaseIfHeld();
        int code = -1;
        try {
            Exit exit = awaitExit(run, hard);
            if (exit != Exit.GONE && exit != Exit.STILL_RUNNING) {
                code = exit.code();
            }
        } catch (IOException | SandboxException e) {
            log.debug("Could not read the exit code of timed-out exec {}: {}", run.execId, e.toString());
        }
        return run.result(code, Termination.TIMED_OUT);
    }

    /** Kills the exec's processes; see {@link ExecKiller#kill}. Best effort, never throws. */
    void kill(Run run, long deadline) {
        killer.kill(run, deadline);
    }

    /** Kills after an interrupt, keeps the thread's interrupt status, and returns the exception to throw. */
    SandboxExecException interrupted(Run run) {
        return killer.interrupted(run);
    }

    /** Whether the engine is Podman; known once the exec was created (that call negotiated the API). */
    boolean podman() {
        try {
            return client.podman();
        } catch (IOException e) {
            throw host.unreachable(e);
        }
    }

    /**
     * Starts a command on a terminal and returns its streams at once (see {@link EngineTerminal}).
     *
     * @param containerId the container
     * @param request     the command, with {@link ExecRequest#tty()} set
     * @return the running terminal
     * @throws SandboxNotFoundException if the container is gone
     * @throws SandboxExecException     if the command could not be started
     */
    public dev.sandboxkit.spi.TerminalConnection openTerminal(String containerId, ExecRequest request) {
        if (request.tty() == null) {
            throw new IllegalArgumentException("a terminal needs a size");
        }
        try {
            return EngineTerminal.open(this, client, new Run(containerId, request, request.effectiveWorkingDir(),
                    true, true));
        } catch (NoShell e) {
            return EngineTerminal.open(this, client, new Run(containerId, request, request.effectiveWorkingDir(),
                    false, true));
        }
    }

    void register(Run run) {
        active.compute(run.containerId, (k, runs) -> {
            Set<Run> set = runs != null ? runs : ConcurrentHashMap.newKeySet();
            set.add(run);
            return set;
        });
    }

    void deregister(Run run) {
        client.gate().done(run.containerId, run.execId);
        active.computeIfPresent(run.containerId, (k, runs) -> {
            runs.remove(run);
            return runs.isEmpty() ? null : runs;
        });
    }

    private static long callDeadline(long deadline) {
        return Math.min(deadline, System.nanoTime() + EngineClient.REQUEST_TIMEOUT_NANOS);
    }

    static boolean passed(long deadline) {
        return deadline != NO_DEADLINE && System.nanoTime() - deadline >= 0;
    }

    private static void sleep(long millis) throws InterruptedIOException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted");
        }
    }

    private static String resource(String name) {
        try (InputStream in = EngineExec.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A container or exec id shortened for messages, as the docker CLI shows it.
     *
     * @param id the full id
     * @return its first 12 characters
     */
    public static String shortId(String id) {
        return id.length() > 12 ? id.substring(0, 12) : id;
    }
}
