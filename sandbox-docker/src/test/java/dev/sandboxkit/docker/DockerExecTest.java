package dev.sandboxkit.docker;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ExecResult.Termination;
import dev.sandboxkit.ExecStream;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.docker.internal.engine.EngineExec;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static dev.sandboxkit.docker.DockerTestSupport.IMAGE;
import static dev.sandboxkit.docker.DockerTestSupport.spec;
import static dev.sandboxkit.docker.DockerTestSupport.start;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The exec path against the real engine, driven through the SPI. */
@Tag("slow")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DockerExecTest extends DriverOnDocker {
    /** Stopped at its timeout, not run to its end (minutes): bounded generously, a loaded machine is slow. */
    private static final String STOPPED_AT_TIMEOUT = "ms until a timed-out exec returned";

    /** Shared by the tests that leave the sandbox as they found it. */
    private String shared;

    @Override
    String tempPrefix() {
        return "sbx-exec-";
    }

    @BeforeAll
    void startShared() {
        shared = start(driver, instanceId, "s-shared", spec().build());
    }

    @Test
    void reportsExitCodesAsData() {
        ExecResult ok = driver.exec(shared, ExecRequest.of("true"));
        assertThat(ok.exitCode()).isZero();
        assertThat(ok.isSuccess()).isTrue();
        assertThat(ok.termination()).isEqualTo(Termination.EXITED);

        ExecResult three = driver.exec(shared, ExecRequest.shell("exit 3"));
        assertThat(three.exitCode()).isEqualTo(3);
        assertThat(three.termination()).isEqualTo(Termination.EXITED);
        assertThat(three.duration()).isPositive();
    }

    @Test
    void keepsStdoutAndStderrApart() {
        ExecResult r = driver.exec(shared, ExecRequest.shell("echo out; echo err >&2; echo out2; echo err2 >&2"));
        assertThat(r.stdout()).isEqualTo("out\nout2\n");
        assertThat(r.stderr()).isEqualTo("err\nerr2\n");
        assertThat(r.stdoutTruncated()).isFalse();
        assertThat(r.stderrTruncated()).isFalse();
    }

    @Test
    void perExecEnvIsVisibleToThatExecOnly() {
        ExecResult first = driver.exec(shared, ExecRequest.shell("echo \"$SECRET|$SANDBOXKIT_EXEC_ID\"")
                .withEnv("SECRET", "s3cr=t v@lue"));
        String[] parts = first.stdout().trim().split("\\|");
        assertThat(parts[0]).isEqualTo("s3cr=t v@lue");
        assertThat(parts[1]).matches("[0-9a-f]{16}");

        ExecResult second = driver.exec(shared, ExecRequest.shell("echo \"[$SECRET]|$SANDBOXKIT_EXEC_ID\""));
        assertThat(second.stdout()).startsWith("[]|");
        assertThat(second.stdout().trim().split("\\|")[1]).matches("[0-9a-f]{16}").isNotEqualTo(parts[1]);
        // The caller cannot spoof the marker the kill relies on.
        ExecResult spoof = driver.exec(shared, ExecRequest.shell("echo $SANDBOXKIT_EXEC_ID")
                .withEnv("SANDBOXKIT_EXEC_ID", "mine"));
        assertThat(spoof.stdout().trim()).matches("[0-9a-f]{16}");
    }

    @Test
    void runsInTheRequestedWorkingDirectory() {
        driver.exec(shared, ExecRequest.of("mkdir", "-p", "/workspace/sub/dir"));
        assertThat(driver.exec(shared, ExecRequest.of("pwd")).stdout()).isEqualTo("/workspace\n");
        assertThat(driver.exec(shared, ExecRequest.of("pwd").withWorkingDir("sub/dir")).stdout())
                .isEqualTo("/workspace/sub/dir\n");
        ExecResult missing = driver.exec(shared, ExecRequest.of("pwd").withWorkingDir("/workspace/nope"));
        assertThat(missing.exitCode()).isEqualTo(126);
        assertThat(missing.stderr()).contains("nope");
    }

    @Test
    void writesStdinThenEof() {
        assertThat(driver.exec(shared, ExecRequest.of("cat").withStdin("hello\nworld")).stdout()).isEqualTo("hello\nworld");
        ExecResult empty = driver.exec(shared, ExecRequest.of("cat").withStdin(new byte[0]).withTimeout(Duration.ofSeconds(10)));
        assertThat(empty.stdout()).isEmpty();
        assertThat(empty.termination()).isEqualTo(Termination.EXITED);
        ExecResult none = driver.exec(shared, ExecRequest.of("cat").withTimeout(Duration.ofSeconds(10)));
        assertThat(none.termination()).isEqualTo(Termination.EXITED);
        assertThat(driver.exec(shared, ExecRequest.of("wc", "-c").withStdin("12345")).stdout().trim()).isEqualTo("5");
    }

    @Test
    void largeStdinEchoedBackDoesNotDeadlock() {
        byte[] input = new byte[5 * 1024 * 1024];
        new Random(42).nextBytes(input);
        ExecResult r = driver.exec(shared, ExecRequest.of("cat").withStdin(input).withOutputLimit(6 * 1024 * 1024)
                .withTimeout(Duration.ofSeconds(60)));
        assertThat(r.termination()).isEqualTo(Termination.EXITED);
        assertThat(r.stdoutBytes()).isEqualTo(input);

        ExecResult both = driver.exec(shared, ExecRequest.shell("tee /dev/stderr | wc -c").withStdin(input)
                .withOutputLimit(6 * 1024 * 1024).withTimeout(Duration.ofSeconds(60)));
        assertThat(both.stdout().trim()).isEqualTo(Integer.toString(input.length));
        assertThat(both.stderrBytes()).isEqualTo(input);
    }

    @Test
    void stdinNotReadByTheProcessIsNoProblem() {
        byte[] input = new byte[4 * 1024 * 1024];
        ExecResult r = driver.exec(shared, ExecRequest.of("echo", "ignored").withStdin(input)
                .withTimeout(Duration.ofSeconds(30)));
        assertThat(r.stdout()).isEqualTo("ignored\n");
        assertThat(r.termination()).isEqualTo(Termination.EXITED);
    }

    @Test
    void timeoutKillsTheProcessAndItsChildren() {
        long t0 = System.nanoTime();
        ExecResult r = driver.exec(shared, ExecRequest.shell("echo started; sleep 300 & setsid sleep 301 & sleep 300")
                .withTimeout(Duration.ofSeconds(1)));
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);

        assertThat(r.timedOut()).isTrue();
        assertThat(r.termination()).isEqualTo(Termination.TIMED_OUT);
        assertThat(r.stdout()).isEqualTo("started\n");
        assertThat(r.exitCode()).isIn(137, -1);
        assertThat(millis).isBetween(950L, 3000L);
        assertThat(r.duration()).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
        assertThat(driver.exec(shared, ExecRequest.of("ps", "-o", "args")).stdout())
                .doesNotContain("sleep 300").doesNotContain("sleep 301");
        // Still usable.
        assertThat(driver.exec(shared, ExecRequest.of("echo", "alive")).stdout()).isEqualTo("alive\n");
    }

    @Test
    void timeoutAlsoStopsAProcessThatNeverStopsPrinting() {
        AtomicLong seen = new AtomicLong();
        long t0 = System.nanoTime();
        ExecResult r = driver.exec(shared, ExecRequest.of("yes", "flood").withTimeout(Duration.ofSeconds(1))
                .withListener((stream, bytes, offset, length) -> seen.addAndGet(length)));
        assertThat(r.timedOut()).isTrue();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as(STOPPED_AT_TIMEOUT).isLessThan(20_000);
        assertThat(r.stdoutBytes()).hasSize(ExecRequest.DEFAULT_OUTPUT_LIMIT);
        assertThat(seen.get()).isGreaterThan(ExecRequest.DEFAULT_OUTPUT_LIMIT);
        assertThat(driver.exec(shared, ExecRequest.of("ps", "-o", "args")).stdout()).doesNotContain("yes flood");
    }

    @Test
    void timeoutAlsoCoversAProcessThatClosedItsOutput() {
        long t0 = System.nanoTime();
        ExecResult r = driver.exec(shared, ExecRequest.shell("exec >&- 2>&-; sleep 302")
                .withTimeout(Duration.ofMillis(800)));
        assertThat(r.timedOut()).isTrue();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as(STOPPED_AT_TIMEOUT).isLessThan(20_000);
        assertThat(driver.exec(shared, ExecRequest.of("ps", "-o", "args")).stdout()).doesNotContain("sleep 302");
    }

    @Test
    void timeoutWithoutAShellInTheImageKillsOnTheHost() throws IOException {
        String image = noShellImage("sandboxkit-test-noshell");
        String id = start(driver, instanceId, "s-noshell", spec().image(image).build());
        assertThat(driver.exec(id, ExecRequest.of("/bin/sh", "-c", "true")).exitCode()).isEqualTo(127);
        // A working directory is entered by a shell when there is one; without, the engine's way.
        assertThat(driver.exec(id, ExecRequest.of("/bin/busybox", "mkdir", "sub")).exitCode()).isZero();
        assertThat(driver.exec(id, ExecRequest.of("/bin/busybox", "pwd").withWorkingDir("sub")).stdout())
                .isEqualTo("/workspace/sub\n");

        long t0 = System.nanoTime();
        ExecResult r = driver.exec(id, ExecRequest.of("/bin/busybox", "sleep", "303").withTimeout(Duration.ofSeconds(1)));

        assertThat(r.timedOut()).isTrue();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as(STOPPED_AT_TIMEOUT).isLessThan(20_000);
        assertThat(driver.exec(id, ExecRequest.of("/bin/busybox", "ps", "-o", "args")).stdout()).doesNotContain("sleep 303");
    }

    @Test
    void plainExecsInAWorkingDirectoryGetTheEnvironmentOfAnyOtherExec() {
        String id = start(driver, instanceId, "s-plain-env", spec().execMode(ExecMode.PLAIN).build());
        assertThat(driver.exec(id, ExecRequest.of("mkdir", "sub")).exitCode()).isZero();

        ExecResult home = driver.exec(id, ExecRequest.of("env").withEnv("MINE", "1"));
        ExecResult sub = driver.exec(id, ExecRequest.of("env").withEnv("MINE", "1").withWorkingDir("sub"));

        assertThat(environment(sub)).isEqualTo(environment(home)).contains("MINE=1").noneMatch(v -> v.startsWith("PWD="));
        assertThat(driver.exec(id, ExecRequest.of("sh", "-c", "echo \"$0 $1\"", "zero", "one").withWorkingDir("sub"))
                .stdout()).isEqualTo("zero one\n");
    }

    private static Set<String> environment(ExecResult env) {
        Set<String> vars = new HashSet<>(env.stdout().lines().toList());
        vars.removeIf(v -> v.startsWith(EngineExec.MARKER + "="));
        return vars;
    }

    @Test
    void anArgumentListOverTheEnginesMessageLimitCannotStart() {
        List<String> argv = new ArrayList<>(List.of("echo"));
        for (int i = 0; i < 72; i++) {
            argv.add("z".repeat(64 * 1024)); // 4.5 MiB: over containerd's 4 MiB messages, and over ARG_MAX
        }
        ExecResult r = driver.exec(shared, ExecRequest.of(argv).withTimeout(Duration.ofSeconds(60)));
        assertThat(r.exitCode()).as("stderr: %s", r.stderr()).isEqualTo(126);
        assertThat(r.stdout()).isEmpty();
        assertThat(r.stderr()).isNotBlank();
    }

    @Test
    void capsOutputAndMarksItTruncated() {
        ExecResult r = driver.exec(shared, ExecRequest.shell("head -c 100000 /dev/zero; head -c 10 /dev/zero >&2")
                .withOutputLimit(1000));
        assertThat(r.stdoutBytes()).hasSize(1000);
        assertThat(r.stdoutTruncated()).isTrue();
        assertThat(r.stderrBytes()).hasSize(10);
        assertThat(r.stderrTruncated()).isFalse();

        ExecResult exact = driver.exec(shared, ExecRequest.of("printf", "12345").withOutputLimit(5));
        assertThat(exact.stdout()).isEqualTo("12345");
        assertThat(exact.stdoutTruncated()).isFalse();

        ExecResult zero = driver.exec(shared, ExecRequest.of("echo", "x").withOutputLimit(0));
        assertThat(zero.stdoutBytes()).isEmpty();
        assertThat(zero.stdoutTruncated()).isTrue();
    }

    @Test
    void streams50MiBThroughTheListenerOnTheCallingThread() {
        long size = 50L * 1024 * 1024;
        AtomicLong stdout = new AtomicLong();
        AtomicLong stderr = new AtomicLong();
        AtomicLong calls = new AtomicLong();
        AtomicLong largest = new AtomicLong();
        Thread caller = Thread.currentThread();
        Set<Thread> listenerThreads = new HashSet<>();
        long t0 = System.nanoTime();
        ExecResult r = driver.exec(shared, ExecRequest.shell("head -c " + size + " /dev/zero; echo done >&2")
                .withListener((stream, bytes, offset, length) -> {
                    listenerThreads.add(Thread.currentThread());
                    calls.incrementAndGet();
                    largest.accumulateAndGet(length, Math::max);
                    (stream == ExecStream.STDOUT ? stdout : stderr).addAndGet(length);
                }));
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);

        assertThat(stdout.get()).isEqualTo(size);
        assertThat(stderr.get()).isEqualTo(5);
        assertThat(listenerThreads).containsExactly(caller);
        // Streamed in chunks, not handed over at the end: how many depends on the machine, how large does not.
        assertThat(largest.get()).as("largest listener call, in bytes").isLessThanOrEqualTo(1 << 20);
        assertThat(r.stdoutBytes()).hasSize(ExecRequest.DEFAULT_OUTPUT_LIMIT); // only the cap is kept
        assertThat(r.stdoutTruncated()).isTrue();
        assertThat(r.stderr()).isEqualTo("done\n");
        System.out.printf("50 MiB streamed in %d ms through %d listener calls%n", millis, calls.get());
    }

    @Test
    void aThrowingListenerAbortsTheExecAndKillsTheProcess() {
        assertThatThrownBy(() -> driver.exec(shared, ExecRequest.shell("echo first; sleep 304")
                .withListener((stream, bytes, offset, length) -> {
                    throw new IllegalStateException("listener broke");
                })))
                .isInstanceOf(SandboxExecException.class)
                .hasRootCauseMessage("listener broke");
        assertThat(driver.exec(shared, ExecRequest.of("ps", "-o", "args")).stdout()).doesNotContain("sleep 304");
    }

    @Test
    void passesBinaryAndUtf8ThroughUnchanged() {
        byte[] all = new byte[256 * 64];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        assertThat(driver.exec(shared, ExecRequest.of("cat").withStdin(all)).stdoutBytes()).isEqualTo(all);

        String text = "héllo ✓ 日本語 🙂";
        ExecResult r = driver.exec(shared, ExecRequest.of("echo", text));
        assertThat(r.stdout()).isEqualTo(text + "\n");
        assertThat(r.stdoutBytes()).isEqualTo((text + "\n").getBytes(StandardCharsets.UTF_8));
        ExecResult octal = driver.exec(shared, ExecRequest.of("printf", "\\000\\377\\200"));
        assertThat(octal.stdoutBytes()).containsExactly(0, 0xff, 0x80);
    }

    @Test
    void aCommandThatCannotRunGives127Or126NotAnException() {
        ExecResult missing = driver.exec(shared, ExecRequest.of("no-such-binary", "arg"));
        assertThat(missing.exitCode()).isEqualTo(127);
        assertThat(missing.termination()).isEqualTo(Termination.EXITED);
        assertThat(missing.stdout()).isEmpty();
        assertThat(missing.stderr()).contains("no-such-binary").contains("not found");

        ExecResult absolute = driver.exec(shared, ExecRequest.of("/nope/bin"));
        assertThat(absolute.exitCode()).isEqualTo(127);

        ExecResult notExecutable = driver.exec(shared, ExecRequest.of("/etc"));
        assertThat(notExecutable.exitCode()).isEqualTo(126);
        assertThat(notExecutable.stderr()).contains("permission denied");

        // A real program printing the same words is left alone.
        ExecResult lookalike = driver.exec(shared, ExecRequest.shell("echo 'OCI runtime exec failed: not really'; exit 126"));
        assertThat(lookalike.exitCode()).isEqualTo(126);
        assertThat(lookalike.stdout()).isEqualTo("OCI runtime exec failed: not really\n");
        assertThat(lookalike.stderr()).isEmpty();
    }

    @Test
    void execInAMissingOrStoppedContainerIsNotFound() {
        String id = start(driver, instanceId, "s-gone", spec().build());
        docker.stopContainerCmd(id).withTimeout(1).exec();
        assertThatThrownBy(() -> driver.exec(id, ExecRequest.of("true"))).isInstanceOf(SandboxNotFoundException.class);
        driver.remove(id);
        assertThatThrownBy(() -> driver.exec(id, ExecRequest.of("true"))).isInstanceOf(SandboxNotFoundException.class);
        assertThatThrownBy(() -> driver.exec("0".repeat(64), ExecRequest.of("true")))
                .isInstanceOf(SandboxNotFoundException.class);
    }

    @Test
    void removingTheContainerDuringAnExecReportsKilled() throws Exception {
        String id = start(driver, instanceId, "s-removed", spec().build());
        // Output still inside the container when it dies is lost with it; only what reached us must be kept.
        CountDownLatch relayed = new CountDownLatch(1);
        Future<ExecResult> running = threads.submit(() -> driver.exec(id, ExecRequest.shell("echo before; sleep 60")
                .withListener((stream, bytes, offset, length) -> relayed.countDown())));
        assertThat(relayed.await(30, TimeUnit.SECONDS)).as("output relayed").isTrue();
        waitForProcess(id, "sleep 60");

        driver.remove(id);

        ExecResult r = running.get(10, TimeUnit.SECONDS);
        assertThat(r.termination()).isEqualTo(Termination.KILLED);
        assertThat(r.stdout()).isEqualTo("before\n");
    }

    @Test
    void removalBehindTheDriversBackAlsoReportsKilled() throws Exception {
        String id = start(driver, instanceId, "s-removed-ext", spec().build());
        // Output still inside the container when it dies is lost with it; only what reached us must be kept.
        CountDownLatch relayed = new CountDownLatch(1);
        Future<ExecResult> running = threads.submit(() -> driver.exec(id, ExecRequest.shell("echo before; sleep 61")
                .withListener((stream, bytes, offset, length) -> relayed.countDown())));
        assertThat(relayed.await(30, TimeUnit.SECONDS)).as("output relayed").isTrue();
        waitForProcess(id, "sleep 61");

        docker.removeContainerCmd(id).withForce(true).exec();

        ExecResult r = running.get(10, TimeUnit.SECONDS);
        assertThat(r.termination()).isEqualTo(Termination.KILLED);
        assertThat(r.stdout()).isEqualTo("before\n");
    }

    @Test
    void aKillFromInsideIsAnOrdinaryExit() {
        ExecResult r = driver.exec(shared, ExecRequest.shell("kill -9 $$"));
        assertThat(r.exitCode()).isEqualTo(137);
        assertThat(r.termination()).isEqualTo(Termination.EXITED);
    }

    @Test
    void anInterruptKillsTheProcessAndKeepsTheInterruptStatus() throws Exception {
        AtomicReference<Thread> worker = new AtomicReference<>();
        Future<Object[]> running = threads.submit(() -> {
            worker.set(Thread.currentThread());
            try {
                driver.exec(shared, ExecRequest.shell("sleep 305"));
                return new Object[] {null, Thread.currentThread().isInterrupted()};
            } catch (RuntimeException e) {
                return new Object[] {e, Thread.interrupted()};
            }
        });
        waitForProcess(shared, "sleep 305");
        worker.get().interrupt();

        Object[] outcome = running.get(10, TimeUnit.SECONDS);
        assertThat(outcome[0]).isInstanceOf(SandboxExecException.class);
        assertThat(outcome[1]).isEqualTo(true);
        assertThat(driver.exec(shared, ExecRequest.of("ps", "-o", "args")).stdout()).doesNotContain("sleep 305");
    }

    @Test
    void concurrentExecsOnOneSandboxDoNotMixUp() throws Exception {
        List<Future<Boolean>> results = new ArrayList<>();
        for (int t = 0; t < 6; t++) {
            int thread = t;
            results.add(threads.submit(() -> {
                for (int i = 0; i < 10; i++) {
                    String token = thread + "-" + i;
                    ExecResult r = driver.exec(shared, ExecRequest.shell("cat; echo \" $TOKEN\" >&2")
                            .withStdin(token).withEnv("TOKEN", token));
                    if (!r.stdout().equals(token) || !r.stderr().equals(" " + token + "\n")) {
                        return false;
                    }
                }
                return true;
            }));
        }
        for (Future<Boolean> f : results) {
            assertThat(f.get(60, TimeUnit.SECONDS)).isTrue();
        }
    }

    private void waitForProcess(String id, String args) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < until) {
            if (driver.exec(id, ExecRequest.of("ps", "-o", "args")).stdout().contains(args)) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("process '" + args + "' never appeared");
    }
}
