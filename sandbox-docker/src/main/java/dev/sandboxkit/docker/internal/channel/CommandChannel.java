package dev.sandboxkit.docker.internal.channel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ExecResult.Termination;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.docker.internal.engine.EngineClient;
import dev.sandboxkit.docker.internal.engine.EngineErrors;
import dev.sandboxkit.docker.internal.engine.EngineConnection;
import dev.sandboxkit.docker.internal.engine.EngineExec;
import dev.sandboxkit.docker.internal.engine.ExecGate;
import dev.sandboxkit.docker.internal.engine.ExecOutput;
import dev.sandboxkit.docker.internal.engine.StreamDemux;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.sandboxkit.docker.internal.engine.EngineClient.segment;
import static dev.sandboxkit.docker.internal.engine.EngineConnection.NO_DEADLINE;

/**
 * One command channel: a long-lived attached exec in a sandbox running {@code channel-supervisor.sh}, a POSIX
 * shell loop that runs one command after another. A command costs the supervisor a fork and the command's
 * own exec (plus {@code setsid}'s) instead of an engine exec (~40 ms). A channel carries one command at a
 * time and is read by the thread that runs the command: no reader threads.
 *
 * <h2>Protocol</h2>
 * Request (our stdin, read by the shell's {@code read} builtin, which never reads past a newline):
 * <pre>
 * &lt;nonce&gt; &lt;stdin length, or -1&gt;\n
 * __x '&lt;exec id&gt;' '&lt;working dir&gt;' &lt;n&gt; 'NAME=value'... 'argv0' 'argv1'...\n   (single-quoted; a newline is '"$nl"')
 * [stdin bytes, then &lt;nonce&gt;\n]                                  (copied exactly by dd, then checked)
 * </pre>
 * The supervisor runs the second line with {@code eval} in a forked subshell whose stdin is the staged stdin
 * (or {@code /dev/null}) and whose stdout and stderr are this command's own FIFOs {@code o<j>} and
 * {@code e<j>}. Two relay {@code cat}s copy {@code o1 t1 o2 t2 ...} and {@code e1 u1 ...} to the supervisor's
 * stdout and stderr, which the engine multiplexes to us. Output (see {@link ChannelOutput}):
 * <pre>
 * stdout:              user stdout  #&lt;nonce&gt;T
 * stderr: #&lt;nonce&gt;S  user stderr, with #&lt;nonce&gt;R&lt;exit&gt;. somewhere in it  #&lt;nonce&gt;T
 * </pre>
 *
 * <h2>Why output cannot forge a frame</h2>
 * <ul>
 * <li>The nonce is 128 bits from {@link SecureRandom}, fresh for every command. It travels only in the
 *     request on the supervisor's stdin, a pipe no command can read (commands get a staged file or
 *     {@code /dev/null} as stdin), and lives in a non-exported shell variable, so it is in no command's
 *     environment, arguments or files. Output that contains a frame therefore needs a guess of 128 random
 *     bits; an old nonce (from an earlier command) does not match.</li>
 * <li>Commands never hold the supervisor's stdout or stderr: they write only their own FIFOs. The frames are
 *     written by the supervisor, the end frames into {@code t<j>}/{@code u<j>}, which the relay opens only
 *     after {@code o<j>}/{@code e<j>} reached end of file. So an end frame follows every byte the command (and
 *     whatever it left running) wrote, and output written later cannot reach a later command: the relay has
 *     moved on to other FIFOs. This is also the engine's own rule: an exec's output ends when every writer
 *     closed it (with the engine's 2 s cut-off after the process exit, which {@link #run} applies too).</li>
 * <li>The parser is strict: stderr must start with the start frame, nothing may follow an end frame, an
 *     exit frame appears once on stderr only; anything else is a protocol violation that retires the channel.
 *     A command that knows no nonce can thus end neither its own result early nor another's.</li>
 * </ul>
 * A process of the sandbox user that attacks the supervisor itself (reads its memory, signals it, opens the
 * channel's FIFOs by path) can disturb its own session's results, just as it could kill any of its processes;
 * it cannot make the library misparse silently: the strict parser or the timeouts end such a channel.
 *
 * <p>Liveness: if the supervisor dies, the engine closes the stream at most 2 s later (its own limit for
 * an exec's output after the process exit), even though relays may still hold it.
 */
final class CommandChannel {
    static final String MARKER = EngineExec.MARKER;
    /** Shown by ps in the sandbox next to the supervisor. */
    static final String LABEL = "sandboxkit-channel";
    /** The engine's own wait for an exec's output after the process exited: leftovers get as long. */
    static final long LEFTOVER_NANOS = TimeUnit.SECONDS.toNanos(2);
    /** After the request is written the start frames come at once; silence this long means a wedged channel. */
    static final long START_NANOS = TimeUnit.SECONDS.toNanos(5);
    /**
     * How long a running command may stay silent before the container is asked whether it still lives:
     * under gVisor the engine can keep the stream of a container removed behind the driver's back open.
     */
    static final long LIVENESS_NANOS = TimeUnit.SECONDS.toNanos(2);
    /** Time allowed after a timeout to kill, drain and read the exit frame. */
    private static final long GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long READY_NANOS = TimeUnit.SECONDS.toNanos(20);
    /**
     * Output allowed before the ready line (shell warnings, runc's complaint); the line itself is under 200
     * bytes. More means something else is talking: the channel is unavailable, not worth waiting for.
     */
    private static final int MAX_BEFORE_READY = 64 * 1024;
    private static final long WRITE_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final Duration MAX_TIMEOUT = Duration.ofDays(36_500);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(CommandChannel.class);
    private static final HexFormat HEX = HexFormat.of();
    private static final byte[] SCRIPT = new String(resource("channel-supervisor.sh"), StandardCharsets.UTF_8)
            .replace("#@exec-command.sh\n", EngineExec.EXEC_COMMAND).getBytes(StandardCharsets.UTF_8);
    private static final Pattern READY = Pattern.compile(
            "SBXREADY ([0-9a-f]+) (/[A-Za-z0-9._/-]+) setsid=([01]) stdin=([01])\n");

    /** Kills processes by marker through a plain exec; see {@code channel-kill.sh}. */
    interface Killer {
        void kill(String containerId, List<String> markers);
    }

    final String containerId;
    /** The supervisor's marker: its own processes (supervisor, relays) carry it, commands do not. */
    final String id;
    /** The channel's private directory in the sandbox (FIFOs, staged stdin). */
    final String dir;
    final boolean stdinSupported;
    final boolean setsid;
    private final EngineClient client;
    private final EngineConnection conn;
    /** Set when the channel must not carry another command. */
    private volatile boolean broken;
    /** The sandbox is being removed: a broken stream means KILLED. */
    volatile boolean containerRemoved;
    private long commands;
    /** Set by {@link #idle}; read under the pool's lock. */
    private long idleSince;
    /** The nonce of the latest command, for tests that replay it as output. */
    volatile String lastNonce;

    private CommandChannel(EngineClient client, String containerId, String id, EngineConnection conn, String dir,
                           boolean setsid, boolean stdinSupported) {
        this.client = client;
        this.containerId = containerId;
        this.id = id;
        this.conn = conn;
        this.dir = dir;
        this.setsid = setsid;
        this.stdinSupported = stdinSupported;
    }

    /** The channel cannot run in this sandbox (no /bin/sh, no writable tmp, the supervisor failed). */
    static final class Unavailable extends Exception {
        private static final long serialVersionUID = 1L;

        Unavailable(String message) {
            super(message, null, false, false);
        }
    }

    /** The command certainly did not start: the caller may run it elsewhere. */
    static final class NotStarted extends Exception {
        private static final long serialVersionUID = 1L;

        NotStarted(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * Starts a supervisor in the container and waits for it to report ready.
     *
     * @param setsid whether commands should run in a session of their own (costs one more exec each)
     * @throws Unavailable               if the image cannot run the supervisor
     * @throws SandboxNotFoundException  if the container does not exist or is not running
     * @throws SandboxExecException      if the engine's answers are malformed (see {@link EngineConnection})
     * @throws IOException               if the engine cannot be reached
     */
    static CommandChannel open(EngineClient client, String containerId, boolean setsid)
            throws Unavailable, IOException {
        String id = HEX.formatHex(randomBytes(8));
        long deadline = System.nanoTime() + READY_NANOS;
        ObjectNode body = EngineClient.JSON.createObjectNode();
        body.put("AttachStdin", true).put("AttachStdout", true).put("AttachStderr", true).put("Tty", false);
        ArrayNode cmd = body.putArray("Cmd");
        cmd.add("/bin/sh").add("-s").add(LABEL).add(id).add(setsid ? "1" : "0");
        body.putArray("Env").add(MARKER + "=" + id);
        body.put("WorkingDir", "/");
        // Held until the supervisor's ready line: by then its process runs, and a freeze cannot refuse it.
        try (ExecGate.Pass pass = client.gate().enter(containerId)) {
            return open(client, containerId, setsid, id, deadline, body);
        }
    }

    private static CommandChannel open(EngineClient client, String containerId, boolean setsid, String id,
            long deadline, ObjectNode body) throws Unavailable, IOException {
        EngineClient.Response created = client.call("POST", "/containers/" + segment(containerId) + "/exec", body);
        if (created.status() == 404 || EngineErrors.notRunning(created.status(), created.message())) {
            throw new SandboxNotFoundException("container " + EngineExec.shortId(containerId) + " does not exist or is "
                    + "not running");
        }
        if (created.status() != 201) {
            throw new Unavailable("the engine refused the channel exec (" + created.status() + "): " + created.message());
        }
        String execId = execId(created);
        EngineClient.Started started = client.startExec(execId, deadline);
        if (started.error() != null) {
            EngineClient.Response error = started.error();
            if (error.status() == 404 || EngineErrors.notRunning(error.status(), error.message())) {
                throw new SandboxNotFoundException("container " + EngineExec.shortId(containerId) + " is gone");
            }
            throw new Unavailable("the engine could not start /bin/sh (" + error.status() + "): " + error.message());
        }
        EngineConnection conn = started.stream();
        boolean ok = false;
        try {
            conn.write(SCRIPT, deadline);
            String ready = readReadyLine(conn, deadline);
            Matcher m = READY.matcher(ready);
            if (!m.matches() || !m.group(1).equals(id)) {
                throw new Unavailable(ready.isEmpty() ? "the supervisor did not start (no /bin/sh?)"
                        : "the supervisor did not start: " + ready.strip());
            }
            ok = true;
            return new CommandChannel(client, containerId, id, conn, m.group(2), m.group(3).equals("1"),
                    m.group(4).equals("1"));
        } finally {
            if (!ok) {
                conn.close();
            }
        }
    }

    /** The exec id of the engine's 201 answer; a 201 without one is not an engine answer this driver can use. */
    private static String execId(EngineClient.Response created) {
        JsonNode id;
        try {
            id = created.json().get("Id");
        } catch (IOException e) {
            id = null;
        }
        if (id == null || !id.isTextual() || id.asText().isEmpty()) {
            throw new SandboxExecException("unexpected exec create answer for a command channel: " + created.message());
        }
        return id.asText();
    }

    /**
     * The supervisor's first line on stdout; anything else (runc's complaint, a shell error) as text. Whatever
     * arrives instead, the wait ends: after {@value #MAX_BEFORE_READY} bytes without the line, or at the
     * deadline even while bytes keep coming.
     */
    private static String readReadyLine(EngineConnection conn, long deadline) throws IOException, Unavailable {
        ReadyLine line = new ReadyLine();
        StreamDemux demux = new StreamDemux();
        while (true) {
            demux.consume(conn.buffer(), line);
            if (line.complete) {
                if (line.extra || !demux.atFrameBoundary()) {
                    throw new Unavailable("the supervisor wrote more than its ready line: " + line.text());
                }
                return line.text.toString(StandardCharsets.UTF_8);
            }
            if (line.seen > MAX_BEFORE_READY) {
                throw new Unavailable("the supervisor wrote over " + MAX_BEFORE_READY + " bytes without a ready line: "
                        + line.text());
            }
            int n = conn.fill(deadline);
            if (n < 0) {
                return line.text.toString(StandardCharsets.UTF_8);
            }
            if (n == 0 || System.nanoTime() - deadline >= 0) {
                throw new Unavailable("the supervisor did not report ready within "
                        + TimeUnit.NANOSECONDS.toSeconds(READY_NANOS) + " s: " + line.text());
            }
        }
    }

    /** Collects output up to the first newline on stdout (at most 4 KiB of it, for messages). */
    private static final class ReadyLine implements StreamDemux.Sink {
        final ByteArrayOutputStream text = new ByteArrayOutputStream();
        int type;
        boolean complete;
        /** Bytes after the line: the supervisor must be silent until it gets a request. */
        boolean extra;
        /** Payload bytes so far, kept or not. */
        long seen;

        @Override
        public void header(int type, long size) {
            this.type = type;
        }

        @Override
        public void payload(byte[] array, int offset, int length) {
            seen += length;
            for (int k = offset; k < offset + length; k++) {
                if (complete) {
                    extra = true;
                    return;
                }
                if (text.size() < 4096) {
                    text.write(array[k]);
                }
                complete = type == 1 && array[k] == '\n';
            }
        }

        String text() {
            return text.toString(StandardCharsets.UTF_8).strip();
        }
    }

    /** Whether this channel can carry the request (the caller checked env names and sizes). */
    boolean canCarry(ExecRequest request) {
        return request.stdinLength() <= 0 || stdinSupported;
    }

    /**
     * Whether an idle channel is still usable: its stream is open and nothing arrived since its last command.
     * Cheap and non-blocking.
     */
    boolean usable() {
        return !broken && !containerRemoved && !conn.isStale();
    }

    boolean broken() {
        return broken;
    }

    long commands() {
        return commands;
    }

    /** Between commands: gives back the receive buffer (a live idle sandbox should cost next to no heap). */
    void idle(long nowMillis) {
        idleSince = nowMillis;
        conn.shrink();
    }

    /** When the latest command ended, in the clock's milliseconds. */
    long idleSince() {
        return idleSince;
    }

    /** Closes our end; an idle supervisor then reads end of file and exits (stopping its relays). */
    void close() {
        broken = true;
        conn.close();
    }

    /**
     * Runs one command on the calling thread. On return the channel is either clean (reusable) or
     * {@link #broken()}.
     *
     * @throws NotStarted                if the command did not start; it may be run elsewhere
     * @throws SandboxNotFoundException  if the container is gone and the command did not start
     * @throws SandboxExecException      if the command's outcome cannot be known (listener failure,
     *                                   interrupt, the channel died mid-command); the command was killed
     */
    ExecResult run(ExecRequest request, byte[] encodedLine, Killer killer) throws NotStarted {
        long t0 = System.nanoTime();
        Duration timeout = request.timeout();
        if (timeout != null && timeout.compareTo(MAX_TIMEOUT) > 0) {
            timeout = null; // would overflow nanoTime arithmetic; a century is no limit anyway
        }
        long deadline = timeout == null ? NO_DEADLINE : t0 + timeout.toNanos();
        String nonce = HEX.formatHex(randomBytes(16));
        lastNonce = nonce;
        String execId = HEX.formatHex(randomBytes(8));
        ChannelOutput out = new ChannelOutput(nonce, request.stdoutLimit(), request.stderrLimit(), request.listener());
        commands++;
        byte[] stdin = request.stdinLength() >= 0 ? request.stdin() : null;
        try {
            write(nonce, encodedLine, execId, stdin);
        } catch (InterruptedIOException e) {
            broken = true;
            Thread.interrupted();
            try {
                killer.kill(containerId, List.of("p:" + id, "g:" + execId, "d:" + dir));
            } finally {
                Thread.currentThread().interrupt();
            }
            throw new SandboxExecException("interrupted before the command started in "
                    + EngineExec.shortId(containerId));
        } catch (IOException e) {
            broken = true;
            return afterBrokenStream(out, execId, t0, killer, e);
        }
        long writtenAt = System.nanoTime();
        long livenessAt = writtenAt + LIVENESS_NANOS;
        boolean timedOut = false;
        long hard = NO_DEADLINE;
        long exitedAt = 0;
        try {
            while (true) {
                out.consume(conn.buffer());
                if (out.finished()) {
                    break;
                }
                long now = System.nanoTime();
                if (!timedOut && passed(deadline, now)) {
                    // Checked after every read: a process that never stops printing never lets fill() time out.
                    timedOut = true;
                    killer.kill(containerId, List.of("g:" + execId));
                    hard = System.nanoTime() + GRACE_NANOS;
                    continue;
                }
                if (timedOut && passed(hard, now)) {
                    // The kill did not bring the end frames in time: something escaped it or the channel wedged.
                    retire(killer, execId);
                    return result(out, out.exited() ? out.exitCode() : -1, Termination.TIMED_OUT, t0);
                }
                if (out.exited() && exitedAt == 0) {
                    exitedAt = now;
                }
                if (!timedOut && exitedAt != 0 && now - exitedAt >= LEFTOVER_NANOS) {
                    // The process exited but something it started keeps its output open: like the engine, stop
                    // waiting. The channel's relay is stuck on that output, so the channel goes; the leftover
                    // process is not killed (a plain exec would not kill it either).
                    ExecResult cut = result(out, out.exitCode(), Termination.EXITED, t0);
                    retire(killer, null);
                    return cut;
                }
                if (!out.started() && now - writtenAt >= START_NANOS) {
                    return wedgedBeforeStart(out, execId, t0, killer);
                }
                long wait = timedOut ? hard : deadline;
                if (exitedAt != 0 && !timedOut) {
                    wait = Math.min(wait, exitedAt + LEFTOVER_NANOS);
                }
                if (!out.started()) {
                    wait = Math.min(wait, writtenAt + START_NANOS);
                } else if (!timedOut) {
                    wait = Math.min(wait, livenessAt);
                }
                int n = conn.fill(wait);
                if (n < 0) {
                    broken = true;
                    return afterBrokenStream(out, execId, t0, killer, null);
                }
                if (n > 0) {
                    livenessAt = System.nanoTime() + LIVENESS_NANOS;
                } else if (out.started() && !timedOut && passed(livenessAt, System.nanoTime())) {
                    if (client.containerGone(containerId, false, () -> containerRemoved)) {
                        broken = true;
                        conn.close();
                        return result(out, out.exited() ? out.exitCode() : -1, Termination.KILLED, t0);
                    }
                    livenessAt = System.nanoTime() + LIVENESS_NANOS;
                }
            }
        } catch (ExecOutput.ListenerFailure e) {
            abort(killer, execId);
            throw new SandboxExecException("the output listener threw; the process was killed", e.getCause());
        } catch (ChannelOutput.ProtocolViolation e) {
            abort(killer, execId);
            throw new SandboxExecException("the command channel in " + EngineExec.shortId(containerId)
                    + " broke its protocol (" + e.getMessage() + "); the process was killed", e);
        } catch (InterruptedIOException e) {
            Thread.interrupted();
            try {
                abort(killer, execId);
            } finally {
                Thread.currentThread().interrupt();
            }
            throw new SandboxExecException("interrupted while running a command in " + EngineExec.shortId(containerId)
                    + "; the process was killed");
        } catch (IOException e) {
            broken = true;
            return afterBrokenStream(out, execId, t0, killer, e);
        }
        if (!out.atFrameBoundary() || conn.buffer().hasRemaining()) {
            broken = true; // the result is complete, but the stream is not where the next command expects it
            conn.close();
        }
        if (!timedOut && out.exitCode() == 137 && containerGone()) {
            // SIGKILL from the container's death: the supervisor may outlive its command by the moment it
            // takes to write the frames. A kill from inside the sandbox finds the container running.
            broken = true;
            return result(out, 137, Termination.KILLED, t0);
        }
        return result(out, out.exitCode(), timedOut ? Termination.TIMED_OUT : Termination.EXITED, t0);
    }

    private void write(String nonce, byte[] encodedLine, String execId, byte[] stdin) throws IOException {
        String head = nonce + " " + (stdin == null ? -1 : stdin.length) + "\n";
        byte[] prefix = ("__x " + quote(execId) + " ").getBytes(StandardCharsets.UTF_8);
        byte[] trailer = (nonce + "\n").getBytes(StandardCharsets.US_ASCII);
        byte[] h = head.getBytes(StandardCharsets.US_ASCII);
        // encodedLine starts with the working dir; the exec id, fresh per command, goes in front of it.
        int size = h.length + prefix.length + encodedLine.length + (stdin == null ? 0 : stdin.length + trailer.length);
        byte[] all = new byte[size];
        int p = 0;
        System.arraycopy(h, 0, all, p, h.length);
        p += h.length;
        System.arraycopy(prefix, 0, all, p, prefix.length);
        p += prefix.length;
        System.arraycopy(encodedLine, 0, all, p, encodedLine.length);
        p += encodedLine.length;
        if (stdin != null) {
            System.arraycopy(stdin, 0, all, p, stdin.length);
            p += stdin.length;
            System.arraycopy(trailer, 0, all, p, trailer.length);
        }
        conn.write(all, System.nanoTime() + WRITE_NANOS);
    }

    /** The stream ended or broke before the end frames. */
    private ExecResult afterBrokenStream(ChannelOutput out, String execId, long t0, Killer killer, IOException cause)
            throws NotStarted {
        log.debug("{}: stream ended before the end frames (started={}, exited={}, removed={}): {}", this, out.started(),
                out.exited(), containerRemoved, cause == null ? "end of stream" : cause.toString());
        if (containerRemoved) {
            return result(out, out.exited() ? out.exitCode() : -1, Termination.KILLED, t0);
        }
        boolean gone = containerGone();
        if (!out.started()) {
            if (gone) {
                throw new SandboxNotFoundException("container " + EngineExec.shortId(containerId) + " is gone");
            }
            // Clean up relays a dead supervisor left behind; the command never ran.
            killer.kill(containerId, List.of("p:" + id, "d:" + dir));
            throw new NotStarted("the command channel ended before the command started"
                    + (cause == null ? "" : ": " + cause));
        }
        if (gone) {
            return result(out, out.exited() ? out.exitCode() : -1, Termination.KILLED, t0);
        }
        if (out.exited()) {
            // The exit code arrived; only leftovers' output may be missing. The engine would cut it too.
            killer.kill(containerId, List.of("p:" + id, "d:" + dir));
            return result(out, out.exitCode(), Termination.EXITED, t0);
        }
        killer.kill(containerId, List.of("g:" + execId, "p:" + id, "d:" + dir));
        throw new SandboxExecException("the command channel in " + EngineExec.shortId(containerId)
                + " ended while the command ran" + (cause == null ? "" : " (" + cause.getMessage() + ")")
                + "; the process was killed", cause);
    }

    /** No start frame in time: the supervisor is wedged (a relay killed by the user, say). */
    private ExecResult wedgedBeforeStart(ChannelOutput out, String execId, long t0, Killer killer) throws NotStarted {
        log.debug("{}: no start frame within {} s; killing the channel", this, TimeUnit.NANOSECONDS.toSeconds(START_NANOS));
        broken = true;
        // Kill the supervisor before deciding: it may be just slow, and must not start the command after we
        // ran it elsewhere. Then read what it wrote until the engine closes the stream.
        killer.kill(containerId, List.of("p:" + id, "g:" + execId, "d:" + dir));
        long until = System.nanoTime() + LEFTOVER_NANOS + TimeUnit.SECONDS.toNanos(1);
        try {
            while (!passed(until, System.nanoTime()) && conn.fill(until) > 0) {
                out.consume(conn.buffer());
            }
        } catch (IOException | RuntimeException e) {
            // whatever arrived is in `out`
        }
        conn.close();
        if (out.started()) {
            throw new SandboxExecException("the command channel in " + EngineExec.shortId(containerId)
                    + " stalled after starting the command; the process was killed");
        }
        throw new NotStarted("the command channel did not answer within " + TimeUnit.NANOSECONDS.toSeconds(START_NANOS)
                + " s");
    }

    /** Kills the command and the channel after a failure that leaves the stream in an unknown state. */
    private void abort(Killer killer, String execId) {
        broken = true;
        conn.close();
        killer.kill(containerId, List.of("g:" + execId, "p:" + id, "d:" + dir));
    }

    /** Ends a channel whose relays cannot finish the current command; processes the command left are kept. */
    private void retire(Killer killer, String execId) {
        log.debug("{}: retiring the channel after {} commands (output still open{})", this, commands,
                execId == null ? " after the exit" : " after the timeout kill");
        broken = true;
        conn.close();
        killer.kill(containerId, execId == null ? List.of("p:" + id, "d:" + dir)
                : List.of("g:" + execId, "p:" + id, "d:" + dir));
    }

    /** Whether the container is gone or dying, asked after the channel failed or its command was SIGKILLed. */
    private boolean containerGone() {
        return client.containerGone(containerId, true, () -> containerRemoved);
    }

    private static ExecResult result(ChannelOutput out, int exitCode, Termination termination, long t0) {
        return ExecResult.builder().exitCode(exitCode).stdoutBytes(out.stdout()).stderrBytes(out.stderr())
                .stdoutTruncated(out.stdoutTruncated()).stderrTruncated(out.stderrTruncated())
                .termination(termination).duration(Duration.ofNanos(System.nanoTime() - t0)).build();
    }

    private static boolean passed(long deadline, long now) {
        return deadline != NO_DEADLINE && now - deadline >= 0;
    }

    private static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }

    /**
     * Single-quotes a word for the supervisor's {@code eval}: a quote becomes {@code '\''} and a newline
     * {@code '"$nl"'} (the supervisor holds a newline in {@code nl}), so a request line never contains a
     * newline and {@code read} takes it whole.
     */
    static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('\'');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\'') {
                b.append("'\\''");
            } else if (c == '\n') {
                b.append("'\"$nl\"'");
            } else {
                b.append(c);
            }
        }
        return b.append('\'').toString();
    }

    /**
     * The request line after the exec id: working dir, env count, env words, argv words, newline. Env
     * names are shell identifiers (the caller checked); the marker variable is left out, the supervisor
     * sets it last.
     */
    static byte[] encode(ExecRequest request) {
        StringBuilder b = new StringBuilder(256);
        b.append(quote(request.effectiveWorkingDir())).append(' ');
        Map<String, String> env = request.env();
        int count = 0;
        StringBuilder words = new StringBuilder();
        for (Map.Entry<String, String> e : env.entrySet()) {
            if (e.getKey().equals(MARKER)) {
                continue;
            }
            words.append(' ').append(quote(e.getKey() + "=" + e.getValue()));
            count++;
        }
        b.append(count).append(words);
        for (String arg : request.command()) {
            b.append(' ').append(quote(arg));
        }
        b.append('\n');
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    static byte[] resource(String name) {
        try (InputStream in = CommandChannel.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + name);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String toString() {
        return "CommandChannel[" + EngineExec.shortId(containerId) + "/" + id + "]";
    }
}
