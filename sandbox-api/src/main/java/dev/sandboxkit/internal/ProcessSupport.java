package dev.sandboxkit.internal;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ProcessOptions;
import dev.sandboxkit.ProcessStatus;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxProcess;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.ComputeCapability;
import dev.sandboxkit.spi.ComputeDriver;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * Background processes for the engine ({@link SandboxProcess}). Keeps no process state: each process lives in
 * its container under a supervisor ({@code process-supervisor.sh}), and every operation is one exec of
 * {@code process.sh} into the container the session has now. A process id is {@code <tag>-<time><random>},
 * where the tag is a hash of the container's id: a handle whose tag is not the live container's reports the
 * process lost without asking the container (it went with its old container).
 *
 * <p>Who may do what: starting needs the session's lease (it goes through the engine like an exec, and may
 * resume); every other operation only needs the session's live container, found in this manager's memory or
 * else in the store, so that another manager or JVM can read, signal and feed a process while the owner lives.
 * Hence only the owner starts processes, and it knows which of its containers have any: the reaper asks the
 * container ({@link #holdsOffReap}) only for those.
 *
 * <p>A process on a terminal runs under the container's {@code script(1)}, which holds the pty master there (no
 * agent outside could, and an engine exec cannot be reattached); a resize is an exec setting the slave's size.
 */
final class ProcessSupport {
    static final String OPS = ManagedShellSession.resource("process.sh");
    static final String SUPERVISOR = ManagedShellSession.resource("process-supervisor.sh");
    static final Duration OP_TIMEOUT = Duration.ofSeconds(30);
    private static final Pattern ID = Pattern.compile("[0-9a-f]{8}-[0-9a-f]{18}");
    private static final int GONE_REMEMBERED = 4096;
    private static final Logger log = LoggerFactory.getLogger(ProcessSupport.class);

    private final ComputeDriver compute;
    private final SessionStore store;
    private final SessionRegistry sessions;
    private final Clock clock;
    /** Why containers this manager removed went, by tag: a lost process's reason names it. */
    private final Map<String, String> gone = new LinkedHashMap<>(16, 0.75f, false) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
            return size() > GONE_REMEMBERED;
        }
    };

    ProcessSupport(ComputeDriver compute, SessionStore store, SessionRegistry sessions, Clock clock) {
        this.compute = compute;
        this.store = store;
        this.sessions = sessions;
        this.clock = clock;
    }

    /** Where a process's operations go now: its container, or why it is lost. */
    record Target(String sandboxId, SessionEntry owner, String lost) {
    }

    // ---------------------------------------------------------------- start

    /** Starts a process in the session's live container; called by the engine as an exec (activity, resumed). */
    SandboxProcess start(SessionEntry e, String sandboxId, ExecRequest request, ProcessOptions options) {
        if (request.listener() != null) {
            throw new IllegalArgumentException("a background process takes no listener: use SandboxProcess.follow");
        }
        if (!compute.computeCapabilities().contains(ComputeCapability.BACKGROUND_PROCESSES)) {
            throw new dev.sandboxkit.SandboxUnsupportedException("driver '" + compute.name()
                    + "' does not support background processes (it does not declare BACKGROUND_PROCESSES)");
        }
        String id = tag(sandboxId) + "-" + String.format("%012x", Math.max(0, System.currentTimeMillis()))
                + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt()).substring(2);
        long timeout = request.timeout() == null ? 0
                : Math.max(1, (request.timeout().toMillis() + 999) / 1000);
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", OPS, "sh", "start", id,
                Integer.toString(options.retainedBytes() / 4), Long.toString(timeout),
                options.countsAsActivity() ? "1" : "0", SUPERVISOR,
                request.tty() == null ? "-" : request.tty().columns() + "x" + request.tty().rows()));
        argv.addAll(request.command());
        ExecRequest start = ExecRequest.of(argv).withEnv(request.env()).withWorkingDir(request.workingDir())
                .withTimeout(OP_TIMEOUT).withOutputLimit(64 * 1024);
        e.processContainer = sandboxId;
        ExecResult r = compute.exec(sandboxId, ContainerSetup.withEnvironment(e.execEnv, start));
        if (request.tty() != null && r.termination() == ExecResult.Termination.EXITED && r.exitCode() == 6) {
            // process.sh: the image lacks script(1) or stty for a terminal.
            throw new dev.sandboxkit.SandboxUnsupportedException("session " + e.sessionId + ": " + r.stderr().strip());
        }
        if ((!r.isSuccess() || !r.stdout().startsWith("started ")) && !startedAnyway(sandboxId, id, r)) {
            String why = r.exitCode() == 126 || r.exitCode() == 127 ? "background processes need /bin/sh in the image"
                    : r.stderr().strip();
            throw new SandboxExecException("session " + e.sessionId + ": could not start a background process ("
                    + r + "): " + why);
        }
        ManagedProcess p = new ManagedProcess(this, e.sessionId, id);
        log.debug("Session {}: started background process {} ({})", e.sessionId, id, r.stdout().strip());
        if (request.stdin() != null) {
            if (request.stdinLength() > 0) {
                p.writeStdin(request.stdin());
            }
            p.closeStdin();
        }
        return p;
    }

    /**
     * Whether a start whose exec did not report success started the process all the same: gVisor's exec can
     * report its end as an error ("waiting on PID ...") when the exec left a detached process behind. The
     * container has the answer.
     */
    private boolean startedAnyway(String sandboxId, String id, ExecResult r) {
        if (r.termination() == ExecResult.Termination.EXITED) {
            return false;
        }
        try {
            ExecResult s = compute.exec(sandboxId, op(null, "status", id));
            boolean started = s.isSuccess() && !s.stdout().startsWith("none") && !s.stdout().isBlank();
            if (started) {
                log.debug("Process {}: its start exec ended {}, but it runs", id, r);
            }
            return started;
        } catch (RuntimeException noAnswer) {
            return false;
        }
    }

    // ---------------------------------------------------------------- handles and operations

    /** A handle on a process by id, for this session. */
    SandboxProcess handle(String sessionId, String id) {
        if (!ID.matcher(id).matches()) {
            throw new IllegalArgumentException("not a process id: " + id);
        }
        return new ManagedProcess(this, sessionId, id);
    }

    /** Handles on the processes of the session's live container, oldest first. */
    List<SandboxProcess> list(String sessionId) {
        Target t = locate(sessionId, null);
        if (t.sandboxId() == null) {
            if (t.lost().startsWith("the session was destroyed")) {
                throw SessionRecords.notFound(sessionId);
            }
            return List.of();
        }
        ExecResult r;
        try {
            r = compute.exec(t.sandboxId(), op(null, "list"));
        } catch (SandboxNotFoundException gone) {
            return List.of();
        }
        List<SandboxProcess> all = new ArrayList<>();
        for (String line : r.stdout().split("\n")) {
            if (ID.matcher(line).matches()) {
                all.add(new ManagedProcess(this, sessionId, line));
            }
        }
        all.sort((a, b) -> a.id().substring(9).compareTo(b.id().substring(9)));
        return all;
    }

    /** An operation's answer: the exec's result, or why the process is lost (then nothing ran). */
    record Answer(ExecResult result, String lost) {
    }

    /**
     * Runs one operation on a process: in the container it lives in if that is still the session's, else
     * nothing runs and the answer is why it is lost.
     *
     * @param activity whether the operation counts as activity (acting ones do, observing ones do not)
     */
    Answer call(String sessionId, String id, boolean activity, byte[] stdin, Duration timeout, String... args) {
        Target t = locate(sessionId, id);
        if (t.sandboxId() == null) {
            return new Answer(null, t.lost());
        }
        if (activity && t.owner() != null) {
            t.owner().touch(clock.millis());
        }
        ExecResult r;
        try {
            r = compute.exec(t.sandboxId(), op(stdin, args).withTimeout(timeout));
        } catch (SandboxNotFoundException containerGone) {
            r = null;
        }
        if (r == null || r.termination() == ExecResult.Termination.KILLED
                || r.termination() == ExecResult.Termination.LIFETIME_EXCEEDED) {
            // The container went during the operation (a reap or destroy racing it): say why, if we can.
            Target now = locate(sessionId, id);
            if (now.sandboxId() == null || r == null) {
                return new Answer(null, now.sandboxId() == null ? now.lost() : "its container is gone");
            }
        }
        if (activity && t.owner() != null) {
            t.owner().touch(clock.millis());
        }
        return new Answer(r, null);
    }

    private static ExecRequest op(byte[] stdin, String... args) {
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", OPS, "sh"));
        argv.addAll(List.of(args));
        return ExecRequest.of(argv).withStdin(stdin).withTimeout(OP_TIMEOUT).withStdoutLimit(ManagedProcess.MAX_READ)
                .withStderrLimit(64 * 1024);
    }

    /**
     * The container a process's operations go to: this manager's live container for the session if it holds
     * one, else the one the store records (another manager's). With a process id, a container other than the
     * one it was started in means the process is lost.
     */
    Target locate(String sessionId, String id) {
        SessionEntry e = sessions.get(sessionId);
        String live = e == null ? null : e.sandboxId();
        SessionEntry owner = e;
        if (live == null) {
            owner = null;
            Optional<SessionRecord> rec = store.find(sessionId);
            if (rec.isEmpty() || SessionRecords.isDestroyed(rec.get())) {
                return lost(id, "the session was destroyed, and its sandbox with it");
            }
            if (rec.get().state() != SessionState.ACTIVE || rec.get().sandboxId() == null) {
                return lost(id, "the sandbox was suspended (reaped when idle, or its manager closed), and its "
                        + "processes with it");
            }
            live = rec.get().sandboxId();
        }
        if (id != null && !id.startsWith(tag(live) + "-")) {
            return lost(id, "its container is gone (the sandbox was reaped, replaced or destroyed); the session runs in"
                    + " a fresh container now");
        }
        return new Target(live, owner, null);
    }

    private Target lost(String id, String fallback) {
        String known;
        synchronized (gone) {
            known = id == null ? null : gone.get(id.substring(0, 8));
        }
        return new Target(null, null, known != null ? known : fallback);
    }

    /** Remembers why a container of this manager went, for its processes' handles. */
    void containerGone(String sandboxId, String why) {
        if (sandboxId == null) {
            return;
        }
        synchronized (gone) {
            gone.put(tag(sandboxId), why);
        }
    }

    /**
     * The reaper's last look before it reaps an idle session: whether a process that counts as activity runs in
     * the container (then it touches the session, which holds the reap off for another TTL). Asks the container
     * only if a process was ever started in it; an answer that cannot be had lets the reap go on.
     */
    boolean holdsOffReap(SessionEntry e, String sandboxId, long now) {
        if (sandboxId == null || !sandboxId.equals(e.processContainer)) {
            return false;
        }
        try {
            ExecResult r = compute.exec(sandboxId, op(null, "busy").withTimeout(Duration.ofSeconds(10)));
            if (r.isSuccess() && r.stdout().startsWith("busy")) {
                e.touch(now);
                log.debug("Session {}: a background process runs; not reaped", e.sessionId);
                return true;
            }
        } catch (RuntimeException noAnswer) {
            log.debug("Session {}: could not check for running processes ({}); reaping", e.sessionId,
                    noAnswer.toString());
        }
        return false;
    }

    /** Parses a status line of process.sh. */
    static ProcessStatus parseStatus(String line, String id) {
        String s = line.strip();
        try {
            if (s.equals("running")) {
                return ProcessStatus.running();
            }
            if (s.startsWith("exited ")) {
                return ProcessStatus.exited(Integer.parseInt(s.substring(7)));
            }
            if (s.startsWith("signaled ")) {
                return ProcessStatus.signaled(Integer.parseInt(s.substring(9)));
            }
        } catch (IllegalArgumentException malformed) {
            throw new SandboxExecException("unreadable status of background process " + id + ": " + s);
        }
        if (s.equals("lost supervisor")) {
            return ProcessStatus.lost("its supervisor was killed inside the sandbox; how it ended is unknown");
        }
        if (s.equals("none")) {
            return ProcessStatus.lost("no such process in the sandbox (removed, or never started there)");
        }
        throw new SandboxExecException("unreadable status of background process " + id + ": " + s);
    }

    /** The first 8 hex digits of the SHA-256 of a container id: names the container in process ids. */
    static String tag(String sandboxId) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(sandboxId.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(h, 0, 4);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

}
