package dev.sandboxkit.examples.spring;

import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.tools.SandboxTools;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The example application as Spring Boot starts it, on the real engine: its application.properties, the starter,
 * Spring AI's auto-configuration and the scripted model bean. Each run gets its own fleet and workspace root.
 */
class SpringAiSandboxApplicationDockerTest {
    private static final String IMAGE = System.getProperty("sandboxkit.test.image", "sandboxkit-test:latest");

    @TempDir
    Path root;

    private final String fleet = "example-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);

    private String[] args() {
        return new String[] {"--sandboxkit.fleet=" + fleet, "--sandboxkit.workspace-root=" + root,
            "--sandboxkit.spec.image=" + IMAGE, "--sandboxkit.idle-timeout=1s", "--sandboxkit.reaper-interval=100ms"};
    }

    @Test
    void conversationsKeepTheirOwnFilesAcrossAnIdleReap() throws Exception {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(SpringAiSandboxApplication.class)
                .web(WebApplicationType.NONE).run(args())) {
            SandboxAssistant assistant = context.getBean(SandboxAssistant.class);
            SandboxManager manager = context.getBean(SandboxManager.class);
            String alice = context.getBean(SandboxTools.class).sessionId("alice");

            assertThat(assistant.ask("alice", "remember the build is green"))
                    .isEqualTo("The sandbox answered: Wrote 18 bytes (1 line) to /workspace/memory.txt (new file).");
            assertThat(assistant.ask("bob", "recall")).isEqualTo("The sandbox answered: No such file or directory: "
                    + "/workspace/memory.txt. Use list_files to see what exists.");

            String container = manager.session(alice).map(SessionInfo::sandboxId).orElseThrow();
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (manager.session(alice).map(SessionInfo::state).orElseThrow() != SessionState.SUSPENDED) {
                assertThat(System.nanoTime()).as("alice's sandbox reaped").isLessThan(deadline);
                Thread.sleep(50);
            }
            assertThat(assistant.ask("alice", "recall")).isEqualTo("The sandbox answered: the build is green");
            assertThat(manager.session(alice).map(SessionInfo::sandboxId).orElseThrow()).isNotEqualTo(container);
            assertThat(assistant.ask("alice", "hello")).startsWith("Ask me to");
            assertThat(context.getBean(ScriptedChatModel.class).calls()).isEqualTo(7);
        }
        assertThat(containers()).isEmpty();
    }

    @Test
    void theMainMethodRunsTheDemo() throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            SpringAiSandboxApplication.main(args());
        } finally {
            System.setOut(original);
        }
        String printed = out.toString(StandardCharsets.UTF_8);
        assertThat(printed).contains("alice> remember the build is green\nassistant> The sandbox answered: Wrote 18 bytes")
                .contains("bob> recall\nassistant> The sandbox answered: No such file or directory")
                .contains("alice> recall\nassistant> The sandbox answered: the build is green\n")
                .contains("alice> run ls -l\nassistant> The sandbox answered: Exit code: 0\n--- stdout ---\n")
                .contains("memory.txt");
        assertThat(containers()).isEmpty();
    }

    private java.util.List<String> containers() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("docker", "ps", "-a", "-q", "--filter", "label=" + SandboxLabels.FLEET + "=" + fleet)
                .redirectErrorStream(true).start();
        String listed = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(listed).isZero();
        return listed.lines().filter(l -> !l.isBlank()).toList();
    }
}
