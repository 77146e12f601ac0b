package dev.sandboxkit.examples;

import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.testkit.FakeExec;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The same tool in unit tests that take milliseconds: a {@link FakeDriver} answers the commands from a
 * script and keeps an in-memory workdir, and a {@link ManualClock} with a {@link ManualScheduler} lets a
 * test jump past the idle TTL instead of waiting for it.
 */
class ShellToolTest {
    private static final SandboxSpec SPEC = SandboxSpec.builder().image("python:3.12-slim").build();
    private static final Duration TTL = Duration.ofMinutes(30);

    private ManualClock clock;
    private ManualScheduler scheduler;
    private FakeDriver driver;
    private SandboxManager manager;
    private ShellTool tool;

    @BeforeEach
    void setUp() {
        clock = new ManualClock();
        scheduler = new ManualScheduler(clock);
        driver = new FakeDriver(clock)
                .when(e -> e.commandLine().endsWith("echo hi > notes.txt"), e -> {
                    e.files().put("notes.txt", "hi\n".getBytes(StandardCharsets.UTF_8));
                    return FakeDriver.result(0, "", "");
                })
                .when(e -> e.commandLine().endsWith("cat notes.txt"), ShellToolTest::cat)
                .when(e -> e.commandLine().endsWith("make"), FakeDriver.result(2, "", "make: *** No targets.  Stop.\n"))
                .when(e -> e.commandLine().endsWith("sleep 60"), ExecResult.builder().exitCode(137)
                        .stdoutBytes("partial\n".getBytes(StandardCharsets.UTF_8)).stderrBytes(new byte[0])
                        .stdoutTruncated(false).stderrTruncated(false)
                        .termination(ExecResult.Termination.TIMED_OUT).duration(Duration.ofSeconds(5)).build());
        manager = SandboxManager.builder().driver(driver).clock(clock).scheduler(scheduler)
                .idleTimeout(TTL).reaperInterval(Duration.ofMinutes(1)).build();
        tool = new ShellTool(manager, SPEC, Duration.ofSeconds(5));
    }

    @AfterEach
    void tearDown() {
        manager.close();
    }

    private static ExecResult cat(FakeExec exec) {
        byte[] content = exec.files().get("notes.txt");
        return content == null ? FakeDriver.result(1, "", "cat: notes.txt: No such file or directory\n")
                : FakeDriver.result(0, new String(content, StandardCharsets.UTF_8), "");
    }

    @Test
    void formatsExitCodeAndStderrForTheModel() {
        assertThat(tool.run("c1", "make")).isEqualTo("exit code: 2\nstderr:\nmake: *** No targets.  Stop.\n");
    }

    @Test
    void runsEveryCommandWithTheToolsTimeoutInOneSandboxPerConversation() {
        tool.run("c1", "echo hi > notes.txt");
        tool.run("c1", "cat notes.txt");
        tool.run("c2", "cat notes.txt");

        assertThat(driver.execs()).extracting(e -> e.request().timeout()).containsOnly(Duration.ofSeconds(5));
        assertThat(driver.execs()).extracting(FakeExec::sessionId).containsExactly("c1", "c1", "c2");
        assertThat(driver.createCount()).isEqualTo(2);
    }

    @Test
    void tellsTheModelWhenACommandTimedOut() {
        assertThat(tool.run("c1", "sleep 60")).isEqualTo("timed out after 5 s (the command was killed)\npartial\n");
    }

    @Test
    void aConversationIdleForLongerThanTheTtlResumesWithItsFiles() {
        tool.run("c1", "echo hi > notes.txt");

        scheduler.advance(TTL.plusMinutes(2)); // the reaper runs: the container is removed, the workdir kept
        assertThat(driver.liveSandboxes()).isEmpty();

        assertThat(tool.run("c1", "cat notes.txt")).isEqualTo("exit code: 0\nhi\n");
        assertThat(driver.createCount()).isEqualTo(2);
    }
}
