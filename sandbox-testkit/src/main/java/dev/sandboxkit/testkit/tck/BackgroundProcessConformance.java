package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecStream;
import dev.sandboxkit.FollowResult;
import dev.sandboxkit.ProcessOptions;
import dev.sandboxkit.ProcessOutput;
import dev.sandboxkit.ProcessStatus;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxProcess;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.SandboxUnsupportedException;
import dev.sandboxkit.TerminalSize;
import dev.sandboxkit.spi.ComputeCapability;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link ComputeDriverTck}'s background processes group ({@link dev.sandboxkit.SandboxProcess}). */
abstract class BackgroundProcessConformance extends KitSupport {
    /** The counter of issue #19: one line every 100 ms, forever. */
    private static final String COUNTER = "i=0; while true; do echo $i; i=$((i+1)); sleep 0.1; done";
    private static final Duration PROCESS_WAIT = Duration.ofSeconds(20);

    BackgroundProcessConformance(DriverKit kit) {
        super(kit);
    }

    /** Reads a stream from 0 until its text satisfies the condition (real time: the process runs for real). */
    private static String awaitOutput(SandboxProcess p, ExecStream stream, java.util.function.Predicate<String> done) {
        long deadline = System.nanoTime() + PROCESS_WAIT.toNanos();
        String text = "";
        while (System.nanoTime() < deadline) {
            text = p.output(stream, 0, 1024 * 1024).text();
            if (done.test(text)) {
                return text;
            }
            sleep(50);
        }
        throw new AssertionError("output of " + p + " never matched; last: " + text);
    }

    /** Waits until {@code ps} in the sandbox shows nothing of background processes. */
    private static String awaitNothingLeft(Sandbox sandbox) {
        String ps = "";
        for (int i = 0; i < 100; i++) {
            ps = sh(sandbox, "ps -o pid,args").stdout();
            if (!ps.contains("sandboxkit-proc") && !ps.contains("999999999") && !ps.contains("while true")
                    && !ps.contains("sleep 300")) {
                return ps;
            }
            sleep(50);
        }
        return ps;
    }

    @Test
    @DisplayName("issue #19's counter: incremental output, reattach by id (handle and manager), kill of the group, nothing left")
    void counterReattachKill() {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.BACKGROUND_PROCESSES);
        Sandbox sandbox = acquire();
        SandboxProcess p = sandbox.start(ExecRequest.shell(COUNTER));
        assertThat(p.status().isRunning()).isTrue();

        awaitOutput(p, ExecStream.STDOUT, t -> t.split("\n").length >= 6);
        ProcessOutput first = p.output(ExecStream.STDOUT, 0, 4);
        ProcessOutput next = p.output(ExecStream.STDOUT, first.nextOffset(), 4);

        assertThat(first.text()).isEqualTo("0\n1\n");
        assertThat(first.droppedBytes()).isZero();
        assertThat(first.firstAvailableOffset()).isZero();
        assertThat(next.offset()).isEqualTo(4);
        assertThat(next.text()).isEqualTo("2\n3\n");
        assertThat(next.endOffset()).isGreaterThanOrEqualTo(12);
        assertThat(next.isComplete()).isFalse();

        p.close(); // detach: the process keeps running
        SandboxProcess again = sandbox.process(p.id());
        SandboxProcess viaManager = manager.process(sandbox.sessionId(), p.id());
        assertThat(again.status().isRunning()).isTrue();
        assertThat(viaManager.output(ExecStream.STDOUT, 4, 2).text()).isEqualTo("2\n");
        assertThat(sandbox.processes()).extracting(SandboxProcess::id).containsExactly(p.id());
        assertThat(manager.processes(sandbox.sessionId())).extracting(SandboxProcess::id).containsExactly(p.id());

        assertThat(viaManager.kill()).isTrue();

        assertThat(again.waitFor(PROCESS_WAIT)).isEqualTo(ProcessStatus.signaled(9));
        assertThat(p.status()).isEqualTo(ProcessStatus.signaled(9));
        assertThat(awaitNothingLeft(sandbox)).doesNotContain("sandboxkit-proc", "999999999", "while true");
        assertThat(again.output(ExecStream.STDOUT, 0, 16).text()).as("output outlives the process")
                .startsWith("0\n1\n2\n");
        again.remove();
        assertThat(again.status().state()).isEqualTo(ProcessStatus.State.LOST);
        assertThat(sandbox.processes()).isEmpty();
    }

    @Test
    @DisplayName("exit codes, SIGTERM and SIGINT to the group, waitFor timeouts, the request's timeout, a missing program")
    void exitCodesSignalsAndTimeouts() {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.BACKGROUND_PROCESSES);
        Sandbox sandbox = acquire();
        SandboxProcess three = sandbox.start(ExecRequest.shell("echo bye >&2; exit 3"));
        SandboxProcess term = sandbox.start(ExecRequest.shell("sleep 300 & sleep 300"));
        SandboxProcess interrupt = sandbox.start(ExecRequest.of("sleep", "300"));
        SandboxProcess limited = sandbox.start(ExecRequest.of("sleep", "300").withTimeout(Duration.ofSeconds(1)));
        SandboxProcess missing = sandbox.start(ExecRequest.of("no-such-program-x"));

        assertThat(three.waitFor(PROCESS_WAIT)).isEqualTo(ProcessStatus.exited(3));
        assertThat(three.output(ExecStream.STDERR, 0, 100).text()).isEqualTo("bye\n");
        assertThat(term.waitFor(Duration.ofMillis(300))).as("still running after a short wait")
                .isEqualTo(ProcessStatus.running());
        assertThat(term.signal(15)).isTrue();
        assertThat(term.waitFor(PROCESS_WAIT)).isEqualTo(ProcessStatus.signaled(15));
        assertThat(interrupt.signal(2)).isTrue();
        assertThat(interrupt.waitFor(PROCESS_WAIT)).as("SIGINT is not ignored").isEqualTo(ProcessStatus.signaled(2));
        assertThat(limited.waitFor(PROCESS_WAIT)).isEqualTo(ProcessStatus.signaled(9));
        assertThat(missing.waitFor(PROCESS_WAIT)).isEqualTo(ProcessStatus.exited(127));
        assertThat(missing.output(ExecStream.STDERR, 0, 1000).text()).contains("no-such-program-x");
        assertThat(awaitNothingLeft(sandbox)).as("the group kill took the background sleep too")
                .doesNotContain("sleep 300");
        assertThat(term.signal(15)).as("nothing left to signal").isFalse();
        assertThatThrownBy(() -> sandbox.start(ExecRequest.of("true").withListener((st, b, o, l) -> { })))
                .isInstanceOf(IllegalArgumentException.class);
        // A terminal needs script(1) in the image: the process gets one, or the start says it is unsupported.
        SandboxProcess onTerminal = null;
        try {
            onTerminal = sandbox.start(ExecRequest.of("sleep", "300").withTty(TerminalSize.DEFAULT));
        } catch (SandboxUnsupportedException noScript) {
            assertThat(noScript).hasMessageContaining("script(1)");
        }
        if (onTerminal != null) {
            assertThat(onTerminal.hasTerminal()).isTrue();
            assertThat(onTerminal.kill()).isTrue();
            assertThat(onTerminal.waitFor(PROCESS_WAIT)).isEqualTo(ProcessStatus.signaled(9));
        }
        assertThatThrownBy(() -> sandbox.process("../../etc")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("stdin: writes, closeStdin for EOF, the request's stdin; env and working directory apply")
    void stdinEnvAndWorkingDir() {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.BACKGROUND_PROCESSES);
        Sandbox sandbox = acquire();
        assertSucceeded(sh(sandbox, "mkdir -p sub"));
        SandboxProcess cat = sandbox.start(ExecRequest.shell("cat; echo \"eof $X $(pwd)\"").withEnv("X", "y")
                .withWorkingDir("sub"));
        cat.writeStdin("hello\n".getBytes(StandardCharsets.UTF_8));
        cat.writeStdin("world\n".getBytes(StandardCharsets.UTF_8));
        assertThat(cat.waitFor(Duration.ofMillis(200)).isRunning()).as("no EOF before closeStdin").isTrue();

        cat.closeStdin();

        assertThat(cat.waitFor(PROCESS_WAIT)).isEqualTo(ProcessStatus.exited(0));
        assertThat(awaitOutput(cat, ExecStream.STDOUT, t -> t.contains("eof")))
                .isEqualTo("hello\nworld\neof y " + SandboxSpec.WORKSPACE + "/sub\n");
        assertThatThrownBy(() -> cat.writeStdin(new byte[]{1})).isInstanceOf(SandboxExecException.class)
                .hasMessageContaining("ended");
        SandboxProcess given = sandbox.start(ExecRequest.of("cat").withStdin("given"));
        assertThat(given.waitFor(PROCESS_WAIT)).isEqualTo(ProcessStatus.exited(0));
        assertThat(awaitOutput(given, ExecStream.STDOUT, t -> t.equals("given"))).isEqualTo("given");
    }

    @Test
    @DisplayName("follow delivers both streams on the calling thread until the end; close() ends a follow")
    void follow() {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.BACKGROUND_PROCESSES);
        Sandbox sandbox = acquire();
        SandboxProcess p = sandbox.start(ExecRequest.shell("echo out; echo err >&2; sleep 0.3; echo done"));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread caller = Thread.currentThread();
        List<Thread> threads = new CopyOnWriteArrayList<>();

        FollowResult r = p.follow((stream, b, o, l) -> {
            threads.add(Thread.currentThread());
            (stream == ExecStream.STDOUT ? out : err).write(b, o, l);
        });

        assertThat(r.status()).isEqualTo(ProcessStatus.exited(0));
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("out\ndone\n");
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("err\n");
        assertThat(r.nextOffset(ExecStream.STDOUT)).isEqualTo(9);
        assertThat(r.droppedBytes(ExecStream.STDOUT)).isZero();
        assertThat(threads).containsOnly(caller);

        SandboxProcess counter = sandbox.start(ExecRequest.shell(COUNTER));
        FollowResult closed = counter.follow((stream, b, o, l) -> counter.close());
        assertThat(closed.status().isRunning()).isTrue();
        assertThat(closed.nextOffset(ExecStream.STDOUT)).isPositive();
        counter.kill();
    }

    @Test
    @DisplayName("output is bounded in the sandbox: the oldest bytes go, and reads say how many")
    void boundedOutput() {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.BACKGROUND_PROCESSES);
        Sandbox sandbox = acquire();
        int retained = ProcessOptions.MIN_RETAINED_BYTES;
        SandboxProcess p = sandbox.start(ExecRequest.shell("yes 0123456789abcdef | head -c 1048576"),
                ProcessOptions.defaults().withRetainedBytes(retained));

        assertThat(p.waitFor(PROCESS_WAIT)).isEqualTo(ProcessStatus.exited(0));
        ProcessOutput o = awaitOutputEnd(p);

        assertThat(o.endOffset()).isEqualTo(1048576);
        assertThat(o.firstAvailableOffset()).isBetween(1048576L - retained, 1048576L - retained * 3L / 4);
        assertThat(o.droppedBytes()).isEqualTo(o.firstAvailableOffset());
        assertThat(o.offset()).isEqualTo(o.firstAvailableOffset());
        assertThat(o.length()).isEqualTo((int) (1048576 - o.firstAvailableOffset()));
        assertThat(o.isComplete()).isTrue();
        assertThat(sh(sandbox, "du -sk /tmp/.sandboxkit/proc/" + p.id() + "/out | cut -f1").stdout().strip())
                .as("KiB kept in the sandbox").satisfies(k -> assertThat(Integer.parseInt(k)).isLessThanOrEqualTo(
                        retained / 1024 + 8));
    }

    private ProcessOutput awaitOutputEnd(SandboxProcess p) {
        for (int i = 0; i < 100; i++) {
            ProcessOutput o = p.output(ExecStream.STDOUT, 0, 1024 * 1024);
            if (o.isComplete()) {
                return o;
            }
            sleep(50);
        }
        throw new AssertionError("the output of " + p + " never completed");
    }

    @Test
    @DisplayName("TTL: a running process holds off the reaper; one that does not count does not; the reap kills it, the handle says so, and it stays lost after the resume")
    void idleTtlAndReap() {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.BACKGROUND_PROCESSES);
        Sandbox sandbox = acquire();
        String firstContainer = sandbox.info().sandboxId();
        SandboxProcess counting = sandbox.start(ExecRequest.shell(COUNTER));

        scheduler.advance(TTL.plus(REAPER_INTERVAL));

        assertThat(sandbox.info().state()).as("held off by the running process").isEqualTo(SessionState.ACTIVE);
        assertThat(counting.status().isRunning()).isTrue();
        SandboxProcess server = sandbox.start(ExecRequest.shell(COUNTER),
                ProcessOptions.defaults().withCountsAsActivity(false));
        counting.kill();
        assertThat(counting.waitFor(PROCESS_WAIT).isRunning()).isFalse();

        scheduler.advance(TTL.plus(REAPER_INTERVAL));

        assertThat(sandbox.info().state()).as("reaped though the server runs").isEqualTo(SessionState.SUSPENDED);
        ProcessStatus lost = server.status();
        assertThat(lost.state()).isEqualTo(ProcessStatus.State.LOST);
        assertThat(lost.reason()).contains("reaped");
        assertThat(manager.process(sandbox.sessionId(), server.id()).status().state())
                .isEqualTo(ProcessStatus.State.LOST);
        assertThat(sandbox.processes()).isEmpty();

        assertSucceeded(sh(sandbox, "true")); // resumes in a fresh container
        assertThat(sandbox.info().sandboxId()).isNotEqualTo(firstContainer);

        assertThat(server.status().state()).isEqualTo(ProcessStatus.State.LOST);
        assertThat(sandbox.process(server.id()).waitFor(Duration.ofSeconds(1)).reason()).contains("reaped");
        assertThat(server.output(ExecStream.STDOUT, 0, 100).status().state()).isEqualTo(ProcessStatus.State.LOST);
        assertThat(server.signal(15)).isFalse();
        assertThat(sandbox.processes()).isEmpty();
    }

    @Test
    @DisplayName("destroying the sandbox kills its processes and their handles say so")
    void destroy() {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.BACKGROUND_PROCESSES);
        Sandbox sandbox = acquire();
        SandboxProcess p = sandbox.start(ExecRequest.shell(COUNTER));
        String sessionId = sandbox.sessionId();

        sandbox.destroy();

        assertThat(p.status().state()).isEqualTo(ProcessStatus.State.LOST);
        assertThat(p.status().reason()).contains("destroyed");
        assertThat(manager.process(sessionId, p.id()).status().reason()).contains("destroyed");
        assertThatThrownBy(sandbox::processes).isInstanceOf(SandboxNotFoundException.class);
        assertThatThrownBy(() -> manager.processes(sessionId)).isInstanceOf(SandboxNotFoundException.class);
    }
}
