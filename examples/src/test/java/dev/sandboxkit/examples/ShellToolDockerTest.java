package dev.sandboxkit.examples;

import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.testkit.SandboxTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shell tool end to end, in real containers on the local Docker engine. {@link SandboxTest} builds
 * the manager, injects it with the spec to use (the image comes from {@code -Dsandboxkit.test.image}, or
 * a tiny BusyBox image built on the spot), and destroys every conversation a test started, container and
 * workdir, when the test ends. Without Docker these tests fail with a message that says how to start it.
 */
@Tag("slow")
@SandboxTest(driver = "docker")
class ShellToolDockerTest {

    @Test
    void filesWrittenByOneCallAreThereForTheNext(SandboxManager manager, SandboxSpec spec) {
        ShellTool tool = new ShellTool(manager, spec, Duration.ofSeconds(20));

        String first = tool.run("conversation-1", "echo 'remember me' > notes.txt && echo saved");
        String second = tool.run("conversation-1", "cat notes.txt");
        String elsewhere = tool.run("conversation-2", "cat notes.txt");

        assertThat(first).isEqualTo("exit code: 0\nsaved\n");
        assertThat(second).isEqualTo("exit code: 0\nremember me\n");
        assertThat(elsewhere).startsWith("exit code: 1\n").contains("stderr:\n").contains("notes.txt");
    }

    @Test
    void aRunawayCommandIsKilledAndTheModelIsTold(SandboxManager manager, SandboxSpec spec) {
        ShellTool tool = new ShellTool(manager, spec, Duration.ofSeconds(1));

        long t0 = System.nanoTime();
        String answer = tool.run("conversation-3", "echo starting; sleep 60");
        long tookMillis = (System.nanoTime() - t0) / 1_000_000;

        assertThat(answer).isEqualTo("timed out after 1 s (the command was killed)\nstarting\n");
        assertThat(tookMillis).isLessThan(10_000);
        assertThat(tool.run("conversation-3", "echo still usable")).isEqualTo("exit code: 0\nstill usable\n");
    }

    @Test
    void longOutputIsCutForTheModel(SandboxManager manager, SandboxSpec spec) {
        ShellTool tool = new ShellTool(manager, spec, Duration.ofSeconds(20));

        String answer = tool.run("conversation-4", "yes line | head -c 100000");

        assertThat(answer).startsWith("exit code: 0\nline\nline\n")
                .endsWith("[stdout cut at " + ShellTool.OUTPUT_LIMIT + " bytes]\n");
    }
}
