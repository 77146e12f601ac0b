package dev.sandboxkit.docker.internal.engine;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ExecResult.Termination;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.TerminalSize;
import dev.sandboxkit.spi.TerminalConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static dev.sandboxkit.docker.internal.engine.EngineClient.segment;
import static dev.sandboxkit.docker.internal.engine.EngineConnection.NO_DEADLINE;
import static dev.sandboxkit.docker.internal.engine.EngineExec.shortId;

/**
 * A command on a terminal, as an engine exec with {@code Tty: true}: created with stdin, stdout and stderr
 * attached, started on an upgraded connection (one raw stream, not multiplexed, since the terminal merges the
 * output), sized right after the start (and from inside by {@link EngineExec#TTY_ENTER}), resized by
 * {@code POST /exec/{id}/resize}, its exit code from exec inspect.
 *
 * <p>No thread of its own: the caller's reads of {@link #output()} and calls of {@link #waitFor} do all the
 * waiting, and they are also where the request's timeout is enforced (the program is killed when a read or a
 * wait finds the deadline passed) and where a container removed behind the driver's back is noticed (a silent
 * read asks the engine every {@value #LIVENESS_SECONDS} s). A removal through the driver ends the output at once
 * ({@link EngineExec#containerRemoved} closes the stream). Killing uses the exec's marker, as for any exec, so
 * {@link #close()} also ends what the program left running on the terminal.
 */
final class EngineTerminal implements TerminalConnection {
    private static final Logger log = LoggerFactory.getLogger(EngineTerminal.class);
    static final long LIVENESS_SECONDS = 5;
    private static final long LIVENESS_NANOS = TimeUnit.SECONDS.toNanos(LIVENESS_SECONDS);
    /** Most of a failed start's complaint read back, and for how long. */
    private static final int MAX_COMPLAINT = 4096;
    private static final long COMPLAINT_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final EngineExec execs;
    private final EngineClient client;
    private final EngineExec.Run run;
    private final DuplexStream stream;
    private final Input input = new Input();
    private final Output output = new Output();
    /** What a command that never started printed (the runtime's complaint), handed out before the stream. */
    private final byte[] complaint;
    private int complaintRead;
    private volatile boolean timedOut;
    private volatile boolean closedHere;
    private volatile ExecResult status;

    private EngineTerminal(EngineExec execs, EngineClient client, EngineExec.Run run, DuplexStream stream,
                           byte[] complaint, ExecResult status) {
        this.execs = execs;
        this.client = client;
        this.run = run;
        this.stream = stream;
        this.complaint = complaint;
        this.status = status;
    }

    /**
     * Creates, starts and sizes the exec. A start the runtime refused (it is over at once) is read back here: a
     * missing {@code /bin/sh} for the size wrapper is {@link EngineExec.NoShell} (the caller retries unwrapped),
     * a container going away is {@link SandboxNotFoundException}, and a command that cannot run is a terminal
     * that shows the complaint and exits 126 or 127, as an exec does.
     */
    static EngineTerminal open(EngineExec execs, EngineClient client, EngineExec.Run run) {
        ExecGate.Pass pass = client.gate().enter(run.containerId);
        try {
            run.execId = execs.create(run);
        } catch (RuntimeException e) {
            pass.close();
            throw e;
        }
        run.podman = execs.podman();
        execs.register(run);
        boolean handedOut = false;
        try {
            EngineClient.Started started;
            try {
                pass.started(run.execId);
                started = client.startExec(run.execId, System.nanoTime() + EngineClient.REQUEST_TIMEOUT_NANOS, true);
            } catch (InterruptedIOException e) {
                throw execs.interrupted(run);
            } catch (IOException e) {
                if (execs.gone(run, null)) {
                    throw new SandboxNotFoundException("container " + shortId(run.containerId) + " is gone");
                }
                throw client.host().unreachable(e);
            } finally {
                pass.close();
            }
            if (started.error() != null) {
                EngineTerminal refused = refused(execs, client, run, started.error());
                handedOut = true;
                return refused;
            }
            run.stream = started.stream();
            DuplexStream duplex;
            try {
                duplex = run.stream.duplex();
            } catch (IOException e) {
                throw new SandboxExecException("cannot set up the terminal stream: " + e.getMessage(), e);
            }
            resize(client, run, run.tty);
            EngineTerminal t = afterStart(execs, client, run, duplex);
            handedOut = true;
            return t;
        } finally {
            if (!handedOut) {
                execs.deregister(run);
                EngineConnection c = run.stream;
                if (c != null) {
                    c.close();
                }
            }
        }
    }

    /** The engine answered the start with an error (engines from 23 report a command that cannot run so). */
    private static EngineTerminal refused(EngineExec execs, EngineClient client, EngineExec.Run run,
                                          EngineClient.Response error) {
        String message = error.message();
        if (error.status() == 404 || EngineErrors.notRunning(error.status(), message)) {
            throw new SandboxNotFoundException("container " + shortId(run.containerId) + " is gone: " + message);
        }
        if (EngineErrors.commandFailure(message)) {
            if (run.entered && message.contains("\"/bin/sh\"")) {
                throw new EngineExec.NoShell();
            }
            execs.deregister(run);
            return ended(execs, client, run, (message + "\r\n").getBytes(StandardCharsets.UTF_8),
                    EngineErrors.startFailureExitCode(message));
        }
        if (execs.gone(run, message)) {
            throw new SandboxNotFoundException("container " + shortId(run.containerId) + " is gone: " + message);
        }
        throw new SandboxExecException("the engine could not start the terminal (" + error.status() + "): " + message);
    }

    /**
     * One inspect after the resize (which waited for the start): an exec that is already over with 126 and no
     * pid never started, and its stream holds only the runtime's complaint.
     */
    private static EngineTerminal afterStart(EngineExec execs, EngineClient client, EngineExec.Run run,
                                             DuplexStream duplex) {
        JsonNode state;
        try {
            EngineClient.Response r = client.call("GET", "/exec/" + segment(run.execId) + "/json", null);
            state = r.status() == 200 ? r.json() : null;
        } catch (InterruptedIOException e) {
            throw execs.interrupted(run);
        } catch (IOException e) {
            throw client.host().unreachable(e);
        }
        boolean over = state != null && !state.path("Running").asBoolean(true) && state.path("ExitCode").isNumber();
        boolean neverStarted = over && state.path("ExitCode").asInt() == 126
                && (run.podman || state.path("Pid").asLong(-1) == 0);
        if (!neverStarted) {
            return new EngineTerminal(execs, client, run, duplex, new byte[0], null);
        }
        String text = readComplaint(duplex);
        duplex.close();
        if (run.entered && EngineErrors.commandFailure(text) && text.contains("\"/bin/sh\"")) {
            throw new EngineExec.NoShell();
        }
        if (!EngineErrors.commandFailure(text) && execs.gone(run, text)) {
            throw new SandboxNotFoundException("container " + shortId(run.containerId) + " is gone: " + text.strip());
        }
        execs.deregister(run);
        return ended(execs, client, run, text.getBytes(StandardCharsets.UTF_8),
                EngineErrors.startFailureExitCode(text));
    }

    private static EngineTerminal ended(EngineExec execs, EngineClient client, EngineExec.Run run, byte[] shown,
                                        int exitCode) {
        ExecResult result = ExecResult.builder().exitCode(exitCode).termination(Termination.EXITED)
                .duration(Duration.ofNanos(System.nanoTime() - run.started)).build();
        return new EngineTerminal(execs, client, run, null, shown, result);
    }

    /** The stream of an exec that never started: the runtime's line, then the end (bounded in size and time). */
    private static String readComplaint(DuplexStream duplex) {
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        byte[] buffer = new byte[1024];
        long until = System.nanoTime() + COMPLAINT_NANOS;
        try {
            while (text.size() < MAX_COMPLAINT) {
                int n = duplex.read(buffer, 0, Math.min(buffer.length, MAX_COMPLAINT - text.size()), until);
                if (n <= 0) {
                    break;
                }
                text.write(buffer, 0, n);
            }
        } catch (IOException e) {
            // keep what arrived
        }
        return text.toString(StandardCharsets.UTF_8);
    }

    @Override
    public OutputStream input() {
        return input;
    }

    @Override
    public InputStream output() {
        return output;
    }

    @Override
    public void resize(TerminalSize size) {
        Objects.requireNonNull(size, "size");
        if (status != null || stream == null) {
            return;
        }
        int code = resize(client, run, size);
        if (code / 100 == 2) {
            return;
        }
        if (waitFor(Duration.ZERO).isPresent() || run.containerRemoved) {
            return; // over meanwhile: nothing to resize
        }
        throw new SandboxExecException("the engine refused to resize the terminal of exec " + shortId(run.execId)
                + (code < 0 ? " (unreachable)" : " (" + code + ")"));
    }

    /**
     * Sets a terminal's size: {@code POST /exec/{id}/resize}. The engine waits for the process to have started
     * (or failed to), so this can follow the start at once. Best effort right after the start: a process that is
     * already over cannot be resized, and that is no error.
     *
     * @return the engine's status, or -1 if it could not be asked
     */
    static int resize(EngineClient client, EngineExec.Run run, TerminalSize size) {
        try {
            EngineClient.Response r = client.call("POST", "/exec/" + segment(run.execId) + "/resize?h=" + size.rows()
                    + "&w=" + size.columns(), null);
            if (r.status() / 100 != 2) {
                log.debug("Resize of exec {} answered {}: {}", shortId(run.execId), r.status(), r.message());
            }
            return r.status();
        } catch (InterruptedIOException e) {
            Thread.currentThread().interrupt();
            return -1;
        } catch (IOException e) {
            log.debug("Resize of exec {} failed: {}", shortId(run.execId), e.toString());
            return -1;
        }
    }

    @Override
    public Optional<ExecResult> waitFor(Duration timeout) {
        ExecResult known = status;
        if (known != null) {
            return Optional.of(known);
        }
        Duration capped = timeout.compareTo(EngineExec.MAX_TIMEOUT) > 0 ? EngineExec.MAX_TIMEOUT : timeout;
        long until = System.nanoTime() + capped.toNanos();
        try {
            while (true) {
                boolean deadlineFirst = run.deadline != NO_DEADLINE && !timedOut && run.deadline - until < 0;
                EngineExec.Exit exit = execs.awaitExit(run, deadlineFirst ? run.deadline : until);
                if (exit == EngineExec.Exit.GONE) {
                    return Optional.of(end(-1, Termination.KILLED));
                }
                if (exit != EngineExec.Exit.STILL_RUNNING) {
                    return Optional.of(end(exit.code(), termination(exit.code())));
                }
                if (deadlineFirst) {
                    timeOut();
                    continue;
                }
                return Optional.empty();
            }
        } catch (InterruptedIOException e) {
            Thread.currentThread().interrupt();
            throw new SandboxExecException("interrupted while waiting for the terminal in "
                    + shortId(run.containerId), e);
        } catch (IOException e) {
            throw client.host().unreachable(e);
        }
    }

    private Termination termination(int code) {
        if (run.containerRemoved || (code == 137 && execs.gone(run, null))) {
            return Termination.KILLED;
        }
        if (timedOut) {
            return Termination.TIMED_OUT;
        }
        return closedHere ? Termination.KILLED : Termination.EXITED;
    }

    /** Records the status once; the exec no longer needs watching for a removal. */
    private synchronized ExecResult end(int code, Termination termination) {
        if (status == null) {
            status = ExecResult.builder().exitCode(code).termination(termination)
                    .duration(Duration.ofNanos(System.nanoTime() - run.started)).build();
            execs.deregister(run);
        }
        return status;
    }

    /** The request's timeout passed: kill, as for an exec; the output then ends and the status says TIMED_OUT. */
    private void timeOut() {
        if (!timedOut) {
            timedOut = true;
            execs.kill(run, System.nanoTime() + EngineExec.ABORT_KILL_NANOS);
        }
    }

    @Override
    public void close() {
        if (stream == null) {
            return;
        }
        try {
            if (status == null && !run.containerRemoved && !stream.isClosed()
                    && waitFor(Duration.ZERO).isEmpty()) {
                closedHere = true;
                execs.kill(run, System.nanoTime() + EngineExec.ABORT_KILL_NANOS);
            }
        } catch (RuntimeException e) {
            log.debug("Closing the terminal of exec {}: {}", shortId(run.execId), e.toString());
        } finally {
            stream.close();
            if (status == null) {
                closedHere = true;
                execs.deregister(run);
            }
        }
    }

    @Override
    public String toString() {
        return "EngineTerminal[" + shortId(run.containerId) + ", exec " + shortId(run.execId) + "]";
    }

    /** The terminal's output: the caller's thread reads, and meanwhile minds the timeout and the container. */
    private final class Output extends InputStream {
        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return 0;
            }
            synchronized (complaint) {
                if (complaintRead < complaint.length) {
                    int n = Math.min(len, complaint.length - complaintRead);
                    System.arraycopy(complaint, complaintRead, b, off, n);
                    complaintRead += n;
                    return n;
                }
            }
            if (stream == null) {
                return -1;
            }
            while (true) {
                long liveness = System.nanoTime() + LIVENESS_NANOS;
                boolean deadlineFirst = run.deadline != NO_DEADLINE && !timedOut && run.deadline - liveness < 0;
                int n = stream.read(b, off, len, deadlineFirst ? run.deadline : liveness);
                if (n != 0) {
                    return n;
                }
                if (deadlineFirst) {
                    timeOut();
                } else if (client.containerGone(run.containerId, false, () -> run.containerRemoved)) {
                    // Under gVisor the engine can keep a removed container's stream open.
                    stream.close();
                    return -1;
                }
            }
        }
    }

    /** The terminal's input: each write goes to the program at once. */
    private final class Input extends OutputStream {
        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            Objects.checkFromIndexSize(off, len, b.length);
            if (stream == null) {
                throw new IOException("the command did not start; the terminal takes no input");
            }
            stream.write(b, off, len);
        }
    }
}
