package dev.sandboxkit.langchain4j;

import dev.langchain4j.code.CodeExecutionEngine;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.testkit.SandboxTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The code execution engine on the real engine: one single-use sandbox per call, nothing left behind. */
@Tag("slow")
@SandboxTest(driver = "docker")
class CodeExecutionEngineDockerTest {

    @Test
    void runsEachProgramInAFreshSandboxAndPurgesIt(@TempDir Path root, SandboxSpec spec) throws Exception {
        String fleet = "code-" + UUID.randomUUID().toString().substring(0, 8);
        try (SandboxManager manager = SandboxManager.builder().driver("docker").workspaceRoot(root).fleet(fleet).build()) {
            CodeExecutionEngine engine = SandboxCodeExecutionEngine.builder(manager).spec(spec)
                    .command("sh").fileName("main.sh").timeout(Duration.ofSeconds(2)).build();

            assertThat(engine.execute("echo $((6 * 7))")).isEqualTo("42\n");
            assertThat(engine.execute("echo left behind > /workspace/trace; ls /workspace")).isEqualTo("main.sh\ntrace\n");
            assertThat(engine.execute("ls /workspace; cat /workspace/trace")).as("the next run starts clean")
                    .isEqualTo("Exit code: 1\n--- stdout ---\nmain.sh\n--- stderr ---\n"
                            + "cat: can't open '/workspace/trace': No such file or directory\n");
            assertThat(engine.execute("echo oops >&2; exit 3")).isEqualTo("Exit code: 3\n--- stderr ---\noops\n");
            assertThat(engine.execute("echo started; sleep 30")).startsWith("Timed out: the command was still running "
                    + "after 2 s and was killed.");
            assertThat(engine.execute("")).isEmpty();

            assertThat(docker("ps", "-aq", "--filter", "label=" + SandboxLabels.FLEET + "=" + fleet)).as("containers").isEmpty();
            try (var entries = Files.list(root)) {
                assertThat(entries.filter(p -> p.getFileName().toString().startsWith("code-"))).as("workdirs").isEmpty();
            }
            assertThat(manager.stats().destroyed()).isEqualTo(6);
        }
    }

    private static String docker(String... args) throws IOException, InterruptedException {
        String[] cmd = new String[args.length + 1];
        cmd[0] = "docker";
        System.arraycopy(args, 0, cmd, 1, args.length);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(p.waitFor()).as(out).isZero();
        return out;
    }
}
