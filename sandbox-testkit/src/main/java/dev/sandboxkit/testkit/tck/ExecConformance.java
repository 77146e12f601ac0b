package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ExecStream;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.ComputeCapability;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link ComputeDriverTck}'s exec group: exit codes, streams, env, working directory, stdin, timeouts, kills,
 * output caps and streaming, commands that cannot start, execs racing a removal.
 */
abstract class ExecConformance extends KitSupport {
    /** Slack allowed on top of an exec timeout before the call must have returned. */
    private static final Duration TIMEOUT_SLACK = Duration.ofSeconds(5);

    ExecConformance(DriverKit kit) {
        super(kit);
    }

    @Test
    @DisplayName("reports exit codes as data")
    void exitCodes() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        Sandbox sandbox = acquire();

        ExecResult ok = sandbox.exec("true");
        ExecResult three = sh(sandbox, "exit 3");
        ExecResult big = sh(sandbox, "exit 255");

        assertThat(ok.exitCode()).isZero();
        assertThat(ok.isSuccess()).isTrue();
        assertThat(three.exitCode()).isEqualTo(3);
        assertThat(three.termination()).isEqualTo(ExecResult.Termination.EXITED);
        assertThat(three.isSuccess()).isFalse();
        assertThat(big.exitCode()).isEqualTo(255);
    }

    @Test
    @DisplayName("keeps stdout and stderr apart")
    void separateStderr() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        ExecResult r = sh(acquire(), "echo out; echo err >&2; echo out2; echo err2 >&2");

        assertThat(r.stdout()).isEqualTo("out\nout2\n");
        assertThat(r.stderr()).isEqualTo("err\nerr2\n");
    }

    @Test
    @DisplayName("gives per-exec env to that exec only, on top of the spec's env")
    void perExecEnv() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        String session = newSessionId("tck-env");
        Sandbox sandbox = manager.acquire(session,
                spec().toBuilder().env("TCK_SPEC", "from-spec").env("TCK_BOTH", "spec").build());
        String show = "echo \"${TCK_SPEC:-unset} ${TCK_BOTH:-unset} ${TCK_SECRET:-unset}\"";

        ExecResult with = sandbox.exec(ExecRequest.shell(show)
                .withEnv(Map.of("TCK_SECRET", "s3cr3t value", "TCK_BOTH", "exec")));
        ExecResult after = sandbox.exec(ExecRequest.shell(show));

        assertThat(with.stdout()).isEqualTo("from-spec exec s3cr3t value\n");
        assertThat(after.stdout()).isEqualTo("from-spec spec unset\n");
    }

    @Test
    @DisplayName("runs in the workspace by default, or in the requested working directory")
    void workingDir() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        Sandbox sandbox = acquire();
        assertSucceeded(sh(sandbox, "mkdir -p sub/dir"));

        assertThat(sandbox.exec("pwd").stdout()).isEqualTo(SandboxSpec.WORKSPACE + "\n");
        assertThat(sandbox.exec(ExecRequest.of("pwd").withWorkingDir("sub/dir")).stdout())
                .isEqualTo(SandboxSpec.WORKSPACE + "/sub/dir\n");
        assertThat(sandbox.exec(ExecRequest.of("pwd").withWorkingDir(SandboxSpec.WORKSPACE + "/sub")).stdout())
                .isEqualTo(SandboxSpec.WORKSPACE + "/sub\n");
    }

    @Test
    @DisplayName("feeds stdin and then closes it, so a command reading to EOF finishes")
    void stdinThenEof() {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.STDIN);
        Sandbox sandbox = acquire();
        byte[] all = new byte[256];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        byte[] large = new byte[1024 * 1024 + 7];
        Arrays.fill(large, (byte) 'x');

        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            ExecResult text = sandbox.exec(ExecRequest.of("cat").withStdin("hello\nwörld").withTimeout(Duration.ofSeconds(20)));
            ExecResult binary = sandbox.exec(ExecRequest.of("cat").withStdin(all).withTimeout(Duration.ofSeconds(20)));
            ExecResult counted = sandbox.exec(ExecRequest.of("wc", "-c").withStdin(large).withTimeout(Duration.ofSeconds(20)));
            ExecResult empty = sandbox.exec(ExecRequest.of("cat").withStdin(new byte[0]).withTimeout(Duration.ofSeconds(20)));

            assertThat(text.timedOut()).as("cat saw EOF").isFalse();
            assertThat(text.stdout()).isEqualTo("hello\nwörld");
            assertThat(binary.stdoutBytes()).isEqualTo(all);
            assertThat(counted.stdout().trim()).isEqualTo(String.valueOf(large.length));
            assertThat(empty.timedOut()).isFalse();
            assertThat(empty.stdoutBytes()).isEmpty();
        });
    }

    @Test
    @DisplayName("gives a command that reads stdin, when none is given, EOF at once")
    void noStdinMeansEof() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        Sandbox sandbox = acquire();

        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            ExecResult r = sandbox.exec(ExecRequest.of("cat").withTimeout(Duration.ofSeconds(10)));
            assertThat(r.timedOut()).as("cat without stdin must not wait for input").isFalse();
            assertThat(r.exitCode()).isZero();
        });
    }

    @Test
    @DisplayName("kills a command that runs past its timeout, keeps its earlier output, and the sandbox stays usable")
    void timeout() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        Sandbox sandbox = acquire();
        Duration limit = Duration.ofSeconds(1);

        long t0 = System.nanoTime();
        ExecResult r = assertTimeoutPreemptively(limit.plus(TIMEOUT_SLACK).plusSeconds(10), () ->
                sandbox.exec(ExecRequest.shell("echo started; sleep 300").withTimeout(limit)));
        long took = millisSince(t0);

        assertThat(r.timedOut()).as("result %s", r).isTrue();
        assertThat(r.termination()).isEqualTo(ExecResult.Termination.TIMED_OUT);
        assertThat(r.stdout()).isEqualTo("started\n");
        assertThat(r.stderr()).as("the kill must not add text to stderr").isEmpty();
        assertThat(took).isGreaterThanOrEqualTo(limit.toMillis() - 50)
                .isLessThan(limit.plus(TIMEOUT_SLACK).toMillis());
        assertThat(sandbox.exec("echo", "still here").stdout()).isEqualTo("still here\n");
    }

    @Test
    @DisplayName("a command killed by a signal exits with 128 + the signal number and nothing is added to its output")
    void killedBySignal() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        Sandbox sandbox = acquire();

        ExecResult r = sandbox.exec(ExecRequest.shell("echo before; echo err >&2; kill -9 $$; echo after"));

        assertThat(r.exitCode()).as("result %s", r).isEqualTo(137);
        assertThat(r.timedOut()).isFalse();
        assertThat(r.stdout()).isEqualTo("before\n");
        assertThat(r.stderr()).isEqualTo("err\n");
    }

    @Test
    @DisplayName("on timeout, kills the command's children too")
    void timeoutKillsChildren() {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.KILL_PROCESS_GROUP);
        Sandbox sandbox = acquire();
        Duration limit = Duration.ofSeconds(1);

        long t0 = System.nanoTime();
        ExecResult r = assertTimeoutPreemptively(limit.plus(TIMEOUT_SLACK).plusSeconds(10), () ->
                sandbox.exec(ExecRequest.shell("sleep 300 & sleep 300").withTimeout(limit)));
        long took = millisSince(t0);

        assertThat(r.timedOut()).as("result %s", r).isTrue();
        assertThat(took).isLessThan(limit.plus(TIMEOUT_SLACK).toMillis());
        // The kill may take a moment to land: look for survivors for up to three seconds.
        String ps = "";
        for (int i = 0; i < 30; i++) {
            ps = sandbox.exec("ps").stdout();
            if (!ps.contains("sleep 300")) {
                break;
            }
            sleep(100);
        }
        assertThat(ps).as("processes left after the timeout").doesNotContain("sleep 300");
        assertThat(sandbox.exec("true").isSuccess()).isTrue();
    }

    @Test
    @DisplayName("caps each stream at its limit and marks it truncated only when it was longer")
    void outputCaps() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        Sandbox sandbox = acquire();
        List<String> command = List.of("/bin/sh", "-c", "head -c 5000 /dev/zero; yes b | head -c 3000 >&2");

        ExecResult capped = sandbox.exec(ExecRequest.of(command).withStdoutLimit(1000).withStderrLimit(2000));
        ExecResult exact = sandbox.exec(ExecRequest.of(command).withStdoutLimit(5000).withStderrLimit(3000));
        ExecResult zero = sandbox.exec(ExecRequest.of(command).withOutputLimit(0));

        assertThat(capped.stdoutBytes()).hasSize(1000).containsOnly((byte) 0);
        assertThat(capped.stdoutTruncated()).isTrue();
        assertThat(capped.stderr()).hasSize(2000).startsWith("b\nb\n");
        assertThat(capped.stderrTruncated()).isTrue();
        assertThat(capped.exitCode()).isZero();

        assertThat(exact.stdoutBytes()).hasSize(5000);
        assertThat(exact.stderr()).hasSize(3000);
        assertThat(exact.stdoutTruncated()).isFalse();
        assertThat(exact.stderrTruncated()).isFalse();

        assertThat(zero.stdoutBytes()).isEmpty();
        assertThat(zero.stderrBytes()).isEmpty();
        assertThat(zero.stdoutTruncated()).isTrue();
        assertThat(zero.stderrTruncated()).isTrue();
    }

    @Test
    @DisplayName("streams a 50 MiB output to the listener, one call at a time, while the result stays capped")
    void largeOutputStreams() {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.STREAMING);
        Sandbox sandbox = acquire();
        long size = 50L * 1024 * 1024;
        AtomicLong stdout = new AtomicLong();
        AtomicLong nonZero = new AtomicLong();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();

        ExecResult r = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> sandbox.exec(
                ExecRequest.of("head", "-c", String.valueOf(size), "/dev/zero").withTimeout(Duration.ofSeconds(50))
                        .withListener((stream, bytes, offset, length) -> {
                            if (inside.incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            if (stream == ExecStream.STDOUT) {
                                stdout.addAndGet(length);
                                for (int i = offset; i < offset + length; i++) {
                                    if (bytes[i] != 0) {
                                        nonZero.incrementAndGet();
                                    }
                                }
                            }
                            inside.decrementAndGet();
                        })));

        assertThat(r.exitCode()).isZero();
        assertThat(stdout.get()).as("bytes seen by the listener").isEqualTo(size);
        assertThat(nonZero.get()).isZero();
        assertThat(overlaps.get()).as("concurrent listener calls").isZero();
        assertThat(r.stdoutBytes()).hasSize(ExecRequest.DEFAULT_OUTPUT_LIMIT);
        assertThat(r.stdoutTruncated()).isTrue();
    }

    @Test
    @DisplayName("delivers output to the listener while the command is still running")
    void streamsWhileRunning() {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.STREAMING);
        Sandbox sandbox = acquire();
        AtomicLong firstChunkAt = new AtomicLong();
        ByteArrayOutputStream seen = new ByteArrayOutputStream();

        ExecResult r = sandbox.exec(ExecRequest.shell("echo first; sleep 1; echo second")
                .withTimeout(Duration.ofSeconds(20))
                .withListener((stream, bytes, offset, length) -> {
                    firstChunkAt.compareAndSet(0, System.nanoTime());
                    synchronized (seen) {
                        seen.write(bytes, offset, length);
                    }
                }));
        long returnedAt = System.nanoTime();

        assertThat(r.stdout()).isEqualTo("first\nsecond\n");
        synchronized (seen) {
            assertThat(seen.toString(StandardCharsets.UTF_8)).isEqualTo("first\nsecond\n");
        }
        assertThat((returnedAt - firstChunkAt.get()) / 1_000_000)
                .as("ms between the first chunk and the end of the exec").isGreaterThanOrEqualTo(500);
    }

    @Test
    @DisplayName("returns every byte value unchanged")
    void binaryOutput() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        StringBuilder format = new StringBuilder();
        byte[] expected = new byte[256];
        for (int i = 0; i < 256; i++) {
            format.append(String.format("\\%03o", i));
            expected[i] = (byte) i;
        }

        ExecResult r = acquire().exec(ExecRequest.of("/bin/sh", "-c", "printf \"$1\"; printf \"$1\" >&2", "sh",
                format.toString()));

        assertThat(r.stdoutBytes()).isEqualTo(expected);
        assertThat(r.stderrBytes()).isEqualTo(expected);
    }

    @Test
    @DisplayName("returns UTF-8 text unchanged, also across chunk boundaries")
    void utf8Output() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        String text = "héllo wörld ✓ 日本語 🙂";
        Sandbox sandbox = acquire();

        ExecResult small = sandbox.exec("printf", "%s", text);
        ExecResult large = sandbox.exec(ExecRequest.of("/bin/sh", "-c",
                "i=0; while [ $i -lt 3000 ]; do printf '%s' \"$1\"; i=$((i+1)); done", "sh", text));

        assertThat(small.stdout()).isEqualTo(text);
        assertThat(large.stdout()).isEqualTo(text.repeat(3000));
    }

    @Test
    @DisplayName("reports a missing program as exit code 127 and one that cannot run as 126, with a message, not as an exception")
    void missingBinary() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        Sandbox sandbox = acquire();
        writeFile(sandbox, "data.txt", "not a program");

        ExecResult absolute = sandbox.exec("/no/such/program", "arg");
        ExecResult onPath = sandbox.exec("no-such-program-tck");
        ExecResult notExecutable = sandbox.exec(SandboxSpec.WORKSPACE + "/data.txt");
        ExecResult directory = sandbox.exec(SandboxSpec.WORKSPACE);

        assertCannotStart(absolute, 127, "/no/such/program");
        assertCannotStart(onPath, 127, "no-such-program-tck");
        assertCannotStart(notExecutable, 126, "data.txt");
        assertCannotStart(directory, 126, SandboxSpec.WORKSPACE);
        assertThat(sandbox.exec("true").isSuccess()).isTrue();
    }

    @Test
    @DisplayName("a working directory that is missing or that the sandbox user cannot enter gives exit code 126 and runs nothing")
    void workingDirThatCannotBeEntered() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        Sandbox sandbox = acquire();
        assertSucceeded(sh(sandbox, "mkdir -p locked/inner && touch locked/inner/ran && chmod 000 locked"));
        try {
            ExecResult missing = sandbox.exec(ExecRequest.of("touch", "ran").withWorkingDir("no-such-dir"));
            assertCannotStart(missing, 126, SandboxSpec.WORKSPACE + "/no-such-dir");
            assertThat(sh(sandbox, "ls").stdout()).doesNotContain("ran");

            assumeTrue(!sh(sandbox, "cd locked 2>/dev/null && echo entered").stdout().contains("entered"),
                    "the sandbox user can enter a mode 0000 directory (root with CAP_DAC_OVERRIDE)");
            ExecResult locked = sandbox.exec(ExecRequest.of("pwd").withWorkingDir("locked"));
            ExecResult below = sandbox.exec(ExecRequest.of("rm", "ran").withWorkingDir("locked/inner"));

            assertCannotStart(locked, 126, SandboxSpec.WORKSPACE + "/locked");
            assertCannotStart(below, 126, SandboxSpec.WORKSPACE + "/locked/inner");
        } finally {
            assertSucceeded(sh(sandbox, "chmod 755 locked"));
        }
        assertThat(sh(sandbox, "ls locked/inner").stdout()).as("the command must not have run").contains("ran");
    }

    @Test
    @DisplayName("an argument list the kernel refuses (E2BIG) gives exit code 126, as a shell reports it")
    void argumentListTooLong() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        Sandbox sandbox = acquire();
        // One argument over MAX_ARG_STRLEN (128 KiB), and a total over ARG_MAX (a quarter of the stack
        // limit: 2 MiB under the usual 8 MiB).
        String longArgument = "x".repeat(128 * 1024 + 1);
        List<String> manyArguments = new ArrayList<>(List.of("echo"));
        String chunk = "y".repeat(64 * 1024);
        for (int i = 0; i < 48; i++) {
            manyArguments.add(chunk);
        }

        // Output limits above the echoed size, so a list that runs shows whole (the default limit is 1 MiB).
        ExecResult tooLong = sandbox.exec(ExecRequest.of("echo", longArgument)
                .withOutputLimit(4 * 1024 * 1024).withTimeout(Duration.ofSeconds(60)));
        ExecResult tooMany = sandbox.exec(ExecRequest.of(manyArguments)
                .withOutputLimit(4 * 1024 * 1024).withTimeout(Duration.ofSeconds(60)));
        ExecResult fits = sandbox.exec(ExecRequest.of("echo", "y".repeat(100 * 1024)).withTimeout(Duration.ofSeconds(60)));

        // A kernel that refuses the list (Linux: E2BIG) gives 126 with the reason; one without those limits (gVisor
        // has no per-argument cap) runs the command, and then its output must be whole. Never anything else.
        assertRefusedOrWhole(tooLong, longArgument.length() + 1);
        assertRefusedOrWhole(tooMany, 48 * (chunk.length() + 1));
        assertThat(fits.exitCode()).as("stderr: %s", fits.stderr()).isZero();
        assertThat(fits.stdout()).hasSize(100 * 1024 + 1);
    }

    private void assertRefusedOrWhole(ExecResult r, int wholeOutput) {
        if (r.exitCode() == 0) {
            assertThat(r.stdout()).as("a long argument list that ran").hasSize(wholeOutput);
            return;
        }
        assertThat(r.exitCode()).as("result %s, stderr: %s", r, r.stderr()).isEqualTo(126);
        assertThat(r.stdout()).isEmpty();
        assertThat(r.stderr()).containsIgnoringCase("argument list too long");
    }

    @Test
    @DisplayName("execs racing the removal of their sandbox end with their result, KILLED, or 'not found' when they did not start")
    void execsRacingRemoval() throws Exception {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        ExecutorService pool = Executors.newCachedThreadPool();
        try {
            for (int round = 0; round < 3; round++) {
                String id = createDirectly(newSessionId("tck-race"));
                String marker = "running-" + round;
                Future<ExecResult> running = pool.submit(() -> driver.exec(id,
                        ExecRequest.shell("echo before; touch " + marker + "; sleep 60")
                                .withTimeout(Duration.ofSeconds(90))));
                awaitFile(id, marker);
                CyclicBarrier go = new CyclicBarrier(5);
                List<Future<String>> racing = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    long offset = 10L * i;
                    racing.add(pool.submit(() -> {
                        go.await(30, TimeUnit.SECONDS);
                        Thread.sleep(offset);
                        return raceOutcome(id);
                    }));
                }
                go.await(30, TimeUnit.SECONDS);
                Thread.sleep(15);
                driver.remove(id);

                ExecResult killed = running.get(60, TimeUnit.SECONDS);
                assertThat(killed.termination()).as("result %s, stderr: %s", killed, killed.stderr())
                        .isEqualTo(ExecResult.Termination.KILLED);
                assertThat(killed.stdout()).isEqualTo("before\n");
                for (Future<String> f : racing) {
                    assertThat(f.get(60, TimeUnit.SECONDS)).isIn("EXITED", "KILLED", "NOT_FOUND");
                }
                assertThatThrownBy(() -> driver.exec(id, ExecRequest.of("true")))
                        .isInstanceOf(SandboxNotFoundException.class);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private String raceOutcome(String id) {
        try {
            ExecResult r = driver.exec(id, ExecRequest.of("echo", "short").withTimeout(Duration.ofSeconds(30)));
            if (r.termination() == ExecResult.Termination.KILLED) {
                return "KILLED";
            }
            return r.exitCode() == 0 && r.stdout().equals("short\n") ? "EXITED"
                    : r + " stdout: " + r.stdout() + " stderr: " + r.stderr();
        } catch (SandboxNotFoundException e) {
            return "NOT_FOUND";
        } catch (RuntimeException e) {
            return e.toString();
        }
    }

    private void awaitFile(String id, String file) {
        for (int i = 0; i < 300; i++) {
            if (driver.exec(id, ExecRequest.of("test", "-e", file)).exitCode() == 0) {
                return;
            }
            sleep(20);
        }
        throw new AssertionError(file + " did not appear");
    }

    private static void assertCannotStart(ExecResult r, int exitCode, String named) {
        assertThat(r.exitCode()).as("result %s, stderr: %s", r, r.stderr()).isEqualTo(exitCode);
        assertThat(r.termination()).isEqualTo(ExecResult.Termination.EXITED);
        assertThat(r.stdout()).isEmpty();
        assertThat(r.stderr()).as("the message names %s", named).contains(named);
    }

    private static long millisSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }
}
