package dev.sandboxkit.tools;

import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.testkit.FakeExec;
import dev.sandboxkit.tools.internal.Json;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The tool set on the fake driver: definitions, rendering, caps, allow-lists and error sorting, in milliseconds. */
class SandboxToolsTest {
    private static final SandboxSpec SPEC = SandboxSpec.builder().image("fake:1").build();
    private final FakeDriver driver = new FakeDriver();
    private final SandboxManager manager = SandboxManager.builder().driver(driver).build();

    @AfterEach
    void close() {
        manager.close();
    }

    private SandboxTools tools() {
        return SandboxTools.builder(manager).spec(SPEC).build();
    }

    private static String run(SandboxTools tools, String conversation, String command) {
        ToolResult r = tools.execute(conversation, "run_command", "{\"command\":" + Json.quote(command) + "}");
        assertThat(r.error()).as(r.text()).isFalse();
        return r.text();
    }

    private FakeDriver answer(String script, ExecResult result) {
        return driver.when(e -> e.commandLine().endsWith(script), result);
    }

    @Test
    void definitionsHaveNamesDescriptionsAndJsonSchemas() {
        List<ToolDefinition> defs = tools().definitions();
        assertThat(defs).extracting(ToolDefinition::name)
                .containsExactly("run_command", "read_file", "write_file", "edit_file", "list_files", "search_files");
        for (ToolDefinition d : defs) {
            assertThat(d.description()).hasSizeGreaterThan(80);
            Map<?, ?> schema = (Map<?, ?>) Json.parse(d.inputSchema());
            assertThat(schema.get("type")).isEqualTo("object");
            assertThat(schema.get("additionalProperties")).isEqualTo(false);
            Map<?, ?> props = (Map<?, ?>) schema.get("properties");
            assertThat(List.<Object>copyOf(props.keySet())).isEqualTo(d.parameters().stream().map(ToolParameter::name).toList());
            assertThat(schema.get("required")).isEqualTo(
                    d.parameters().stream().filter(ToolParameter::required).map(ToolParameter::name).toList());
            props.values().forEach(p -> assertThat(((Map<?, ?>) p).get("description")).isInstanceOf(String.class));
        }
        assertThat(tools().definition("edit_file").orElseThrow().inputSchema())
                .contains("\"required\":[\"path\",\"old_string\",\"new_string\"]");
    }

    @Test
    void descriptionsStateTheConfiguredLimits() {
        SandboxTools t = SandboxTools.builder(manager).spec(SPEC).outputLimit(5000).defaultTimeout(Duration.ofSeconds(7))
                .maxTimeout(Duration.ofSeconds(90)).readLimit(4096).build();
        assertThat(t.definition("run_command").orElseThrow().description())
                .contains("default 7, at most 90").contains("5,000 bytes per stream");
        assertThat(t.definition("read_file").orElseThrow().description()).contains("4,096 bytes");
    }

    @Test
    void aCommandAnswersWithExitCodeAndBothStreams() {
        answer("make", FakeDriver.result(2, "compiling\n", "error: missing ;\n"));
        String r = run(tools(), "c1", "make");
        assertThat(r).isEqualTo("Exit code: 2\n--- stdout ---\ncompiling\n--- stderr ---\nerror: missing ;\n");
        assertThat(run(tools(), "c1", "true")).isEqualTo("Exit code: 0\n(no output)\n");
        FakeExec exec = driver.execs().get(0);
        assertThat(exec.command()).containsExactly("/bin/sh", "-c", "make");
        assertThat(exec.sessionId()).isEqualTo("conv-c1");
        assertThat(exec.request().timeout()).isEqualTo(Duration.ofMinutes(2));
    }

    @Test
    void conversationsGetTheirOwnSessions() {
        SandboxTools t = tools();
        run(t, "alice", "true");
        run(t, "bob", "true");
        run(t, "a/b", "true");
        run(t, "alice", "true");
        assertThat(driver.execs()).extracting(FakeExec::sessionId)
                .containsExactly("conv-alice", "conv-bob", t.sessionId("a/b"), "conv-alice");
        assertThat(driver.createCount()).isEqualTo(3);
    }

    @Test
    void aTimeoutIsStatedPlainly() {
        answer("sleep 100", ExecResult.builder().exitCode(137)
                .stdoutBytes("started\n".getBytes(StandardCharsets.UTF_8)).stderrBytes(new byte[0])
                .stdoutTruncated(false).stderrTruncated(false).termination(ExecResult.Termination.TIMED_OUT)
                .duration(Duration.ofSeconds(5)).build());
        ToolResult r = tools().execute("c", "run_command", "{\"command\":\"sleep 100\",\"timeout_seconds\":5}");
        assertThat(r.error()).isFalse();
        assertThat(r.text()).startsWith("Timed out: the command was still running after 5 s and was killed.")
                .endsWith("--- stdout ---\nstarted\n");
        assertThat(driver.execs().get(0).request().timeout()).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void anOverlongTimeoutIsCappedAndTheModelIsTold() {
        answer("x", ExecResult.builder().exitCode(137).stdoutBytes(new byte[0]).stderrBytes(new byte[0])
                .stdoutTruncated(false).stderrTruncated(false).termination(ExecResult.Termination.TIMED_OUT)
                .duration(Duration.ZERO).build());
        ToolResult r = tools().execute("c", "run_command", Map.of("command", "x", "timeout_seconds", "100000"));
        assertThat(driver.execs().get(0).request().timeout()).isEqualTo(Duration.ofMinutes(10));
        assertThat(r.text()).contains("after 600 s").contains("(timeout_seconds is capped at 600.)");
    }

    @Test
    void aKilledOrExpiredSandboxIsExplained() {
        answer("k", ExecResult.builder().exitCode(137).stdoutBytes(new byte[0]).stderrBytes(new byte[0])
                .stdoutTruncated(false).stderrTruncated(false).termination(ExecResult.Termination.KILLED)
                .duration(Duration.ZERO).build());
        answer("l", ExecResult.builder().exitCode(-1).stdoutBytes(new byte[0]).stderrBytes(new byte[0])
                .stdoutTruncated(false).stderrTruncated(false)
                .termination(ExecResult.Termination.LIFETIME_EXCEEDED).duration(Duration.ZERO).build());
        assertThat(run(tools(), "c", "k")).startsWith("The sandbox was stopped while the command ran");
        assertThat(run(tools(), "c", "l")).startsWith("The sandbox reached its maximum lifetime");
    }

    @Test
    void longOutputIsCutHeadAndTailWithinTheConfiguredLimit() {
        StringBuilder big = new StringBuilder();
        for (int i = 0; i < 200_000; i++) {
            big.append("row ").append(i).append('\n');
        }
        answer("big", FakeDriver.result(0, big.toString(), ""));
        String r = run(SandboxTools.builder(manager).spec(SPEC).outputLimit(1000).build(), "c", "big");
        assertThat(r).startsWith("Exit code: 0\n--- stdout ---\nrow 0\nrow 1\n").endsWith("row 199999\n")
                .contains(" cut from the middle of 2.1 MB of output ...]");
        assertThat(r.length()).isLessThan(1200);
        assertThat(driver.execs().get(0).request().stdoutLimit()).as("nothing kept twice").isZero();
    }

    @Test
    void argumentMistakesAreResultsTheModelCanFix() {
        SandboxTools t = tools();
        assertThat(t.execute("c", "run_command", "{\"command\":")).satisfies(r -> {
            assertThat(r.error()).isTrue();
            assertThat(r.text()).startsWith("The arguments of run_command are not valid JSON");
        });
        assertThat(t.execute("c", "run_command", "[1]").text()).isEqualTo("The arguments of run_command must be a JSON object.");
        assertThat(t.execute("c", "run_command", "{}").text()).startsWith("run_command needs the argument \"command\"");
        assertThat(t.execute("c", "run_command", "{\"command\":\"ls\",\"cwd\":\"x\"}").text())
                .isEqualTo("run_command has no argument \"cwd\"; its arguments are: command, timeout_seconds, workdir.");
        assertThat(t.execute("c", "run_command", "{\"command\":\"ls\",\"timeout_seconds\":\"soon\"}").text())
                .isEqualTo("\"timeout_seconds\" of run_command must be a whole number.");
        assertThat(t.execute("c", "run_command", "{\"command\":\"ls\",\"timeout_seconds\":0}").text())
                .contains("at least 1");
        assertThat(t.execute("c", "run_command", "{\"command\":\"ls\",\"workdir\":\"../etc\"}").text())
                .startsWith("\"workdir\" must be a directory inside /workspace");
        assertThat(t.execute("c", "run_command", "{\"command\":\"ls\",\"workdir\":\"/etc\"}").error()).isTrue();
        assertThat(t.execute("c", "run_command", "{\"command\":\"a\\u0000b\"}").text()).contains("NUL");
        assertThat(t.execute("c", "read_file", "{\"path\":\"a\\u0000b\"}").text()).contains("NUL");
        assertThat(t.execute("c", "nope", "{}")).satisfies(r -> {
            assertThat(r.error()).isTrue();
            assertThat(r.text()).isEqualTo("There is no tool named \"nope\". Available tools: run_command, read_file, "
                    + "write_file, edit_file, list_files, search_files.");
        });
        // Harmless slips are forgiven: null for an optional argument, numbers and booleans as strings.
        ToolResult ok = t.execute("c", "run_command", "{\"command\":\"true\",\"timeout_seconds\":\"30\",\"workdir\":null}");
        assertThat(ok.error()).as(ok.text()).isFalse();
        Map<String, Object> parsed = new HashMap<>(); // as MCP hands them over: null = left out
        parsed.put("command", "true");
        parsed.put("workdir", null);
        assertThat(t.execute("c", "run_command", parsed).error()).isFalse();
        assertThat(driver.execs()).hasSize(2);
        assertThat(driver.execs().get(0).request().timeout()).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void anAllowListOffersOnlyItsTools() {
        SandboxTools t = SandboxTools.builder(manager).spec(SPEC).tools(SandboxTool.RUN_COMMAND, SandboxTool.READ_FILE).build();
        assertThat(t.definitions()).extracting(ToolDefinition::name).containsExactly("run_command", "read_file");
        assertThat(t.execute("c", "write_file", "{\"path\":\"a\",\"content\":\"x\"}").text())
                .isEqualTo("There is no tool named \"write_file\". Available tools: run_command, read_file.");
    }

    @Test
    void aReadOnlySetCannotChangeTheWorkspace() {
        SandboxTools t = SandboxTools.builder(manager).spec(SPEC).readOnly().build();
        assertThat(t.readOnly()).isTrue();
        assertThat(t.definitions()).extracting(ToolDefinition::name).containsExactly("read_file", "list_files", "search_files");
        for (String tool : new String[] {"run_command", "write_file", "edit_file"}) {
            ToolResult r = t.execute("c", tool, "{}");
            assertThat(r.error()).isTrue();
            assertThat(r.text()).startsWith("The workspace is read-only: " + tool + " is not available.");
        }
        assertThat(driver.execs()).isEmpty();
        assertThat(t.instructions()).contains("read-only").contains("Tools: read_file, list_files, search_files.");
        assertThatThrownBy(() -> SandboxTools.builder(manager).spec(SPEC).readOnly().tools(SandboxTool.EDIT_FILE).build())
                .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("cannot offer edit_file");
    }

    @Test
    void operatorFailuresAreThrownNotShownToTheModel() {
        SandboxTools t = tools();
        driver.setUnavailable(true);
        assertThatThrownBy(() -> t.execute("c", "run_command", "{\"command\":\"ls\"}"))
                .isInstanceOf(SandboxUnavailableException.class);
    }

    @Test
    void instructionsSayWhatPersistsAndWhichToolsExist() {
        String text = tools().instructions();
        assertThat(text).contains("Only files inside /workspace are kept")
                .contains("Tools: run_command, read_file, write_file, edit_file, list_files, search_files.");
    }

    @Test
    void builderOptionsAreSetOnceAndChecked() {
        SandboxTools.Builder b = SandboxTools.builder(manager).spec(SPEC);
        assertThatThrownBy(() -> b.spec(SPEC)).isInstanceOf(IllegalStateException.class).hasMessage("spec was already set");
        assertThatThrownBy(() -> SandboxTools.builder(manager).build()).isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("spec(...) is required");
        assertThatThrownBy(() -> b.outputLimit(10)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.defaultTimeout(Duration.ofMillis(1500))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SandboxTools.builder(manager).spec(SPEC).defaultTimeout(Duration.ofMinutes(20)).build())
                .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("exceeds maxTimeout");
        assertThatThrownBy(() -> b.tools()).isInstanceOf(IllegalArgumentException.class);
    }
}
