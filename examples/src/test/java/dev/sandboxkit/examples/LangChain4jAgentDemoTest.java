package dev.sandboxkit.examples;

import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.testkit.SandboxTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The LangChain4j demo on the real engine: the agent's two turns straddle an idle reap. */
@SandboxTest(driver = "docker")
class LangChain4jAgentDemoTest {

    @Test
    void theAgentFinishesItsTaskAcrossAnIdleReap(@TempDir Path root, SandboxSpec spec) throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        String report;
        try (SandboxManager manager = SandboxManager.builder().driver("docker").workspaceRoot(root)
                .idleTimeout(Duration.ofSeconds(1)).reaperInterval(Duration.ofMillis(100)).build()) {
            report = LangChain4jAgentDemo.run(manager, spec, new PrintStream(printed, true, StandardCharsets.UTF_8));
        }
        String out = printed.toString(StandardCharsets.UTF_8);
        assertThat(report).isEqualTo("# Primes up to 50\n\n15 primes, the largest 47.\n");
        assertThat(out).contains("  tool < Exit code: 0\n         --- stdout ---\n         15")
                .contains("was reaped after").contains("  tool < 2\n         3\n         5\n")
                .contains("47").contains("agent > The report is in report.md.")
                .contains("primes.sh\n         primes.txt\n         report.md");
    }
}
