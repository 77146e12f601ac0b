package dev.sandboxkit.internal;

import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ExecStream;
import dev.sandboxkit.FollowResult;
import dev.sandboxkit.OutputListener;
import dev.sandboxkit.ProcessOutput;
import dev.sandboxkit.ProcessStatus;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.SandboxProcess;
import dev.sandboxkit.SandboxUnsupportedException;
import dev.sandboxkit.TerminalSize;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;

/**
 * The {@link SandboxProcess} handle: an id and a session, nothing else. Each method is one operation of
 * {@code process.sh} run through {@link ProcessSupport#call}, which finds the container the process lives in (or
 * says why it is lost).
 */
final class ManagedProcess implements SandboxProcess {
    /** The most one {@link #output} call may ask for: bounds the JVM's memory per read. */
    static final int MAX_READ = 16 * 1024 * 1024;
    private static final int FOLLOW_CHUNK = 256 * 1024;
    private static final long FOLLOW_IDLE_MILLIS = 100;
    /** After the process ended, how long output held open by what it left running is still waited for. */
    private static final long FOLLOW_LINGER_NANOS = Duration.ofSeconds(2).toNanos();
    private static final int WAIT_POLL_MILLIS = 50;
    private static final int WAIT_POLLS_PER_EXEC = 100;
    private static final byte[] NO_STDIN = null;

    private final ProcessSupport support;
    private final String sessionId;
    private final String id;
    private volatile boolean closed;

    ManagedProcess(ProcessSupport support, String sessionId, String id) {
        this.support = support;
        this.sessionId = sessionId;
        this.id = id;
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public String sessionId() {
        return sessionId;
    }

    @Override
    public ProcessStatus status() {
        ProcessSupport.Answer a = call(false, NO_STDIN, ProcessSupport.OP_TIMEOUT, "status", id);
        return a.lost() != null ? ProcessStatus.lost(a.lost()) : ProcessSupport.parseStatus(a.result().stdout(), id);
    }

    @Override
    public ProcessOutput output(ExecStream stream, long offset, int maxBytes) {
        Objects.requireNonNull(stream, "stream");
        if (offset < 0) {
            throw new IllegalArgumentException("offset must not be negative: " + offset);
        }
        if (maxBytes < 1 || maxBytes > MAX_READ) {
            throw new IllegalArgumentException("maxBytes must be 1.." + MAX_READ + ": " + maxBytes);
        }
        ProcessSupport.Answer a = call(false, NO_STDIN, ProcessSupport.OP_TIMEOUT, "read", id,
                stream == ExecStream.STDOUT ? "out" : "err", Long.toString(offset), Integer.toString(maxBytes));
        if (a.lost() != null) {
            return ProcessOutput.of(stream, new byte[0], offset, 0, offset, offset, true, ProcessStatus.lost(a.lost()));
        }
        String err = a.result().stderr().strip();
        String meta = err.substring(err.lastIndexOf('\n') + 1);
        int bar = meta.lastIndexOf('|');
        String[] n = bar < 0 ? new String[0] : meta.substring(bar + 1).split(" ");
        if (n.length != 4) {
            throw new SandboxExecException("unreadable output of background process " + id + ": " + a.result());
        }
        ProcessStatus status = ProcessSupport.parseStatus(meta.substring(0, bar), id);
        long first = Long.parseLong(n[0]);
        long end = Long.parseLong(n[1]);
        long from = Long.parseLong(n[2]);
        byte[] bytes = a.result().stdoutBytes();
        if (bytes.length > maxBytes || from + bytes.length > end) {
            throw new SandboxExecException("inconsistent output of background process " + id + ": " + meta);
        }
        boolean complete = n[3].equals("1") && from + bytes.length == end;
        return ProcessOutput.of(stream, bytes, from, Math.max(0, from - offset), first, end, complete, status);
    }

    @Override
    public FollowResult follow(OutputListener listener, long stdoutOffset, long stderrOffset) {
        Objects.requireNonNull(listener, "listener");
        long[] next = {stdoutOffset, stderrOffset};
        long[] dropped = new long[2];
        ExecStream[] streams = {ExecStream.STDOUT, ExecStream.STDERR};
        ProcessStatus status = ProcessStatus.running();
        long endedAt = 0;
        while (!closed) {
            boolean delivered = false;
            boolean complete = true;
            for (int i = 0; i < 2; i++) {
                ProcessOutput o = output(streams[i], next[i], FOLLOW_CHUNK);
                status = o.status();
                if (status.state() == ProcessStatus.State.LOST) {
                    return FollowResult.of(status, next[0], next[1], dropped[0], dropped[1]);
                }
                dropped[i] += o.droppedBytes();
                if (o.length() > 0) {
                    byte[] bytes = o.bytes();
                    listener.onOutput(streams[i], bytes, 0, bytes.length);
                    delivered = true;
                }
                next[i] = o.nextOffset();
                complete &= o.isComplete();
            }
            if (!status.isRunning()) {
                long now = System.nanoTime();
                if (complete) {
                    break;
                }
                if (endedAt == 0) {
                    endedAt = now;
                } else if (!delivered && now - endedAt > FOLLOW_LINGER_NANOS) {
                    break;
                }
            }
            if (!delivered) {
                pause(FOLLOW_IDLE_MILLIS, "following");
            }
        }
        return FollowResult.of(status, next[0], next[1], dropped[0], dropped[1]);
    }

    @Override
    public ProcessStatus waitFor(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        long deadline = System.nanoTime() + Math.max(0, timeout.toNanos());
        while (true) {
            if (Thread.currentThread().isInterrupted()) {
                throw new SandboxExecException("interrupted while waiting for background process " + id);
            }
            long left = Math.max(0, deadline - System.nanoTime()) / 1_000_000;
            int polls = (int) Math.min(WAIT_POLLS_PER_EXEC, left / WAIT_POLL_MILLIS);
            ProcessSupport.Answer a = call(false, NO_STDIN,
                    ProcessSupport.OP_TIMEOUT.plusMillis((long) polls * WAIT_POLL_MILLIS), "wait", id,
                    Integer.toString(polls));
            ProcessStatus status = a.lost() != null ? ProcessStatus.lost(a.lost())
                    : ProcessSupport.parseStatus(a.result().stdout(), id);
            if (!status.isRunning() || System.nanoTime() - deadline >= 0) {
                return status;
            }
            if (polls == 0) {
                pause(Math.max(1, left), "waiting for");
            }
        }
    }

    @Override
    public boolean signal(int signal) {
        if (signal < 1 || signal > 64) {
            throw new IllegalArgumentException("signal must be 1..64: " + signal);
        }
        ProcessSupport.Answer a = call(true, NO_STDIN, ProcessSupport.OP_TIMEOUT, "signal", id,
                Integer.toString(signal));
        return a.lost() == null && lastLine(a.result().stdout()).startsWith("sent ");
    }

    @Override
    public void writeStdin(byte[] bytes) {
        Objects.requireNonNull(bytes, "bytes");
        if (bytes.length == 0) {
            return;
        }
        ProcessSupport.Answer a = call(true, bytes.clone(), ProcessSupport.OP_TIMEOUT, "write", id);
        if (a.lost() != null) {
            throw new SandboxExecException("cannot write to background process " + id + ": it is lost (" + a.lost()
                    + ")");
        }
        ExecResult r = a.result();
        String answer = lastLine(r.stdout());
        if (r.termination() == ExecResult.Termination.TIMED_OUT) {
            throw new SandboxExecException("writing to background process " + id + " did not finish within "
                    + ProcessSupport.OP_TIMEOUT.toSeconds() + " s: it does not read its stdin");
        }
        if (answer.equals("ok")) {
            return;
        }
        if (answer.isEmpty()) {
            // No answer (Podman can lose a short exec's output when it did not read its stdin): ask again.
            ProcessStatus now = status();
            answer = now.isRunning() ? "" : "ended " + now;
        }
        String why = answer.equals("closed") ? "its stdin was closed"
                : answer.startsWith("ended ") ? "it has ended (" + answer.substring(6) + ")"
                : answer.equals("none") ? "it no longer exists in the sandbox" : "the write failed (" + r + ")";
        throw new SandboxExecException("cannot write to background process " + id + ": " + why);
    }

    @Override
    public void closeStdin() {
        call(true, NO_STDIN, ProcessSupport.OP_TIMEOUT, "close", id);
    }

    @Override
    public boolean hasTerminal() {
        ProcessSupport.Answer a = call(false, NO_STDIN, ProcessSupport.OP_TIMEOUT, "tty", id);
        if (a.lost() != null) {
            return false;
        }
        String answer = lastLine(a.result().stdout());
        return answer.startsWith("/") || answer.equals("starting");
    }

    @Override
    public void resize(TerminalSize size) {
        Objects.requireNonNull(size, "size");
        ProcessSupport.Answer a = call(true, NO_STDIN, ProcessSupport.OP_TIMEOUT, "resize", id,
                Integer.toString(size.columns()), Integer.toString(size.rows()));
        if (a.lost() != null) {
            throw new SandboxExecException("cannot resize background process " + id + ": it is lost (" + a.lost()
                    + ")");
        }
        String answer = lastLine(a.result().stdout());
        if (answer.equals("ok") || answer.startsWith("ended ")) {
            return;
        }
        if (answer.equals("notty")) {
            throw new SandboxUnsupportedException("background process " + id + " has no terminal (start it with "
                    + "ExecRequest.withTty to resize it)");
        }
        throw new SandboxExecException("cannot resize background process " + id + ": " + (answer.equals("none")
                ? "it no longer exists in the sandbox" : "the sandbox refused (" + a.result() + ")"));
    }

    @Override
    public void remove() {
        call(true, NO_STDIN, ProcessSupport.OP_TIMEOUT, "remove", id);
    }

    @Override
    public void close() {
        closed = true;
    }

    private ProcessSupport.Answer call(boolean activity, byte[] stdin, Duration timeout, String... args) {
        ProcessSupport.Answer a = support.call(sessionId, id, activity, stdin, timeout, args);
        if (a.lost() == null && a.result().termination() != ExecResult.Termination.TIMED_OUT
                && a.result().exitCode() != 0) {
            throw new SandboxExecException("background process " + id + ": the sandbox could not run '" + args[0]
                    + "' (" + a.result() + "): " + new String(a.result().stderrBytes(), StandardCharsets.UTF_8).strip());
        }
        return a;
    }

    /** The script's answer is its last line (anything before it is noise from the sandbox's tools). */
    private static String lastLine(String stdout) {
        String s = stdout.strip();
        return s.substring(s.lastIndexOf('\n') + 1);
    }

    private static void pause(long millis, String what) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxExecException("interrupted while " + what + " a background process");
        }
    }

    @Override
    public String toString() {
        return "SandboxProcess[" + sessionId + "/" + id + "]";
    }
}
