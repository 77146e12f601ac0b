package dev.sandboxkit.docker;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecStream;
import dev.sandboxkit.ProcessOptions;
import dev.sandboxkit.ProcessOutput;
import dev.sandboxkit.ProcessStatus;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Background processes on the real engine, issue 29 (D2): {@code waitFor} reports the end only once the output is
 * complete, and the retained window is the size asked for.
 */
@Tag("slow")
@DisplayName("Background processes on the real Docker engine: output complete at waitFor, exact retained window")
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ProcessOnDockerTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path root;
    private SandboxManager manager;

    @BeforeEach
    void start() {
        DockerTestSupport.requireEngine();
        manager = SandboxManager.builder().driver("docker").workspaceRoot(root).build();
    }

    @AfterEach
    void stop() {
        manager.close();
    }

    @Test
    @DisplayName("a read right after waitFor returned EXITED has all the output, in 40 rounds (a pipe's worth and more"
            + " written on both streams right before the exit)")
    void outputCompleteWhenWaitForReturns() {
        Sandbox sandbox = manager.acquire("proc-complete", DockerTestSupport.spec().build());
        // More than a pipe holds (64 KiB) on each stream, written last, into the smallest window: its segments
        // (16 KiB) roll over several times while the copy drains the pipe after the command exited.
        ProcessOptions small = ProcessOptions.defaults().withRetainedBytes(ProcessOptions.MIN_RETAINED_BYTES);
        String command = "head -c 100000 /dev/zero | tr '\\0' o; head -c 90000 /dev/zero | tr '\\0' e >&2; exit 3";
        for (int round = 0; round < 40; round++) {
            SandboxProcess p = sandbox.start(ExecRequest.shell(command), small);
            assertThat(p.waitFor(WAIT)).as("round %d", round).isEqualTo(ProcessStatus.exited(3));

            ProcessOutput out = p.output(ExecStream.STDOUT, 0, 1024 * 1024);
            ProcessOutput err = p.output(ExecStream.STDERR, 0, 1024 * 1024);
            assertThat(out.endOffset()).as("stdout readable right after waitFor, round %d", round).isEqualTo(100_000);
            assertThat(out.isComplete()).as("stdout complete, round %d", round).isTrue();
            assertThat(out.nextOffset()).isEqualTo(100_000);
            assertThat(err.endOffset()).as("stderr readable right after waitFor, round %d", round).isEqualTo(90_000);
            assertThat(err.isComplete()).as("stderr complete, round %d", round).isTrue();
            p.remove();
        }
    }

    @Test
    @DisplayName("waitFor still returns when something the process left running holds its output open")
    void leftoverHoldingOutputDoesNotBlockWaitFor() {
        Sandbox sandbox = manager.acquire("proc-leftover", DockerTestSupport.spec().build());
        // The background sleep inherits stdout: the stream does not end with the command.
        SandboxProcess p = sandbox.start(ExecRequest.shell("echo before; sleep 60 & exit 0"));
        long t0 = System.nanoTime();
        assertThat(p.waitFor(WAIT)).isEqualTo(ProcessStatus.exited(0));
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("bounded by the linger, not the leftover")
                .isLessThan(Duration.ofSeconds(20));
        ProcessOutput out = p.output(ExecStream.STDOUT, 0, 1024);
        assertThat(out.text()).isEqualTo("before\n");
        assertThat(out.isComplete()).as("the leftover still holds stdout").isFalse();
        p.remove();
    }

    @Test
    @DisplayName("reads keep working while a fast writer rolls the smallest window over between their steps"
            + " (4 readers, 60 reads each)")
    void readsWhileTheWindowRollsOver() throws Exception {
        Sandbox sandbox = manager.acquire("proc-rollover", DockerTestSupport.spec().build());
        SandboxProcess p = sandbox.start(ExecRequest.shell("cat /dev/zero"),
                ProcessOptions.defaults().withRetainedBytes(ProcessOptions.MIN_RETAINED_BYTES));
        java.util.concurrent.ExecutorService readers = java.util.concurrent.Executors.newFixedThreadPool(4);
        try {
            List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
            for (int r = 0; r < 4; r++) {
                done.add(readers.submit(() -> {
                    long last = 0;
                    for (int i = 0; i < 60; i++) {
                        // Seen failing: "can't open .../out/852754432: no such file" (the newest segment pruned
                        // after the listing), then "arithmetic syntax error", exit 2.
                        ProcessOutput o = p.output(ExecStream.STDOUT, last, 4096);
                        assertThat(o.endOffset()).as("read %d", i).isGreaterThanOrEqualTo(last);
                        last = o.endOffset();
                    }
                    return null;
                }));
            }
            for (java.util.concurrent.Future<?> f : done) {
                f.get(3, TimeUnit.MINUTES);
            }
        } finally {
            readers.shutdownNow();
            p.kill();
        }
    }

    @Test
    @DisplayName("withRetainedBytes keeps the exact value, and the sandbox never keeps more than it")
    void retainedBytesExact() {
        int retained = ProcessOptions.MIN_RETAINED_BYTES + 3;
        ProcessOptions options = ProcessOptions.defaults().withRetainedBytes(retained);
        assertThat(options.retainedBytes()).isEqualTo(retained);

        Sandbox sandbox = manager.acquire("proc-window", DockerTestSupport.spec().build());
        SandboxProcess p = sandbox.start(ExecRequest.shell("head -c 200001 /dev/zero"), options);
        assertThat(p.waitFor(WAIT)).isEqualTo(ProcessStatus.exited(0));
        ProcessOutput o = p.output(ExecStream.STDOUT, 0, 1024 * 1024);
        assertThat(o.endOffset()).isEqualTo(200_001);
        assertThat(o.isComplete()).isTrue();
        assertThat((long) o.length()).as("kept in the window").isLessThanOrEqualTo(retained)
                .isGreaterThanOrEqualTo(3L * (retained / 4));
        assertThat(o.droppedBytes()).isEqualTo(200_001 - o.length());
    }
}
