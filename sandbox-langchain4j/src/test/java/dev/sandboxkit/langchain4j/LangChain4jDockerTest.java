package dev.sandboxkit.langchain4j;

import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.service.AiServices;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.testkit.SandboxTest;
import dev.sandboxkit.tools.SandboxTools;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * LangChain4j's own AiServices, with a scripted chat model standing in for the LLM, driving real tool calls into
 * real sandboxes on the local Docker engine.
 */
@SandboxTest(driver = "docker")
class LangChain4jDockerTest {
    private SandboxTools tools;
    private SandboxToolProvider provider;
    private final ScriptedChatModel model = new ScriptedChatModel();

    @BeforeEach
    void setUp(SandboxManager manager, SandboxSpec spec) {
        tools = SandboxTools.builder(manager).spec(spec).build();
        provider = SandboxToolProvider.of(tools);
    }

    private Assistant assistant(SandboxToolProvider tools) {
        return AiServices.builder(Assistant.class)
                .chatModel(model)
                .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(50))
                .toolProvider(tools)
                .toolExecutionErrorHandler(tools.errorHandler())
                .build();
    }

    @Test
    void twoMemoryIdsGetTwoWorkspacesWhoseFilesDoNotMix() {
        Assistant assistant = assistant(provider);
        model.thenCall("write_file", "{\"path\":\"notes.txt\",\"content\":\"alice's plan\"}").thenAnswer("saved");
        assertThat(assistant.chat("alice", "remember my plan")).isEqualTo("saved");
        model.thenCall("read_file", "{\"path\":\"notes.txt\"}").thenAnswer("nothing there");
        assertThat(assistant.chat("bob", "what is in notes.txt?")).isEqualTo("nothing there");
        ToolExecutionResultMessage bobSaw = model.lastToolResult();
        assertThat(bobSaw.isError()).isTrue();
        assertThat(bobSaw.text()).isEqualTo("No such file or directory: /workspace/notes.txt. Use list_files to see what exists.");
        model.thenCall("read_file", "{\"path\":\"notes.txt\"}").thenAnswer("found it");
        assistant.chat("alice", "what is in notes.txt?");
        assertThat(model.lastToolResult().text()).isEqualTo("alice's plan");
        assertThat(model.lastToolResult().isError()).isFalse();
        assertThat(new String(tools.sandbox("alice").files().readBytes("notes.txt"), StandardCharsets.UTF_8))
                .isEqualTo("alice's plan");
        assertThat(tools.sessionId("alice")).isEqualTo("conv-alice");
    }

    @Test
    void aTimeoutAndAHugeOutputComeBackToTheModelAsResults() {
        Assistant assistant = assistant(provider);
        model.thenCall("run_command", "{\"command\":\"echo begun; sleep 60\",\"timeout_seconds\":1}")
                .thenCall("run_command", "{\"command\":\"seq 1 1500000\"}")
                .thenAnswer("both done");
        long t0 = System.nanoTime();
        assertThat(assistant.chat("c", "run the slow job, then count")).isEqualTo("both done");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(30));
        ToolExecutionResultMessage timeout = model.toolResults().get(0);
        assertThat(timeout.isError()).isFalse();
        assertThat(timeout.text()).startsWith("Timed out: the command was still running after 1 s and was killed.")
                .endsWith("--- stdout ---\nbegun\n");
        ToolExecutionResultMessage big = model.toolResults().get(1);
        assertThat(big.text()).startsWith("Exit code: 0\n--- stdout ---\n1\n2\n3\n")
                .contains(" cut from the middle of 10.9 MB of output ...]\n").endsWith("1499999\n1500000\n");
        assertThat(big.text().length()).isLessThan(SandboxTools.Builder.DEFAULT_OUTPUT_LIMIT + 300);
    }

    @Test
    void editFileWithANonUniqueMatchFailsClearly() {
        Assistant assistant = assistant(provider);
        model.thenCall("write_file", "{\"path\":\"app.cfg\",\"content\":\"debug=false\\nlevel=1\\ndebug=false\\n\"}")
                .thenCall("edit_file", "{\"path\":\"app.cfg\",\"old_string\":\"debug=false\",\"new_string\":\"debug=true\"}")
                .thenCall("edit_file", "{\"path\":\"app.cfg\",\"old_string\":\"debug=false\\nlevel=1\","
                        + "\"new_string\":\"debug=true\\nlevel=1\"}")
                .thenCall("run_command", "{\"command\":\"cat app.cfg\"}")
                .thenAnswer("edited");
        assistant.chat("c", "turn on debug");
        ToolExecutionResultMessage ambiguous = model.toolResults().get(1);
        assertThat(ambiguous.isError()).isTrue();
        assertThat(ambiguous.text()).isEqualTo("\"old_string\" occurs 2 times in /workspace/app.cfg (lines 1, 3); include "
                + "more surrounding lines to make it unique, or set replace_all to true to replace every occurrence.");
        assertThat(model.toolResults().get(2).text()).isEqualTo("Edited /workspace/app.cfg: replaced 1 occurrence (line 1).");
        assertThat(model.toolResults().get(3).text())
                .isEqualTo("Exit code: 0\n--- stdout ---\ndebug=true\nlevel=1\ndebug=false\n");
    }

    @Test
    void anIdleReapBetweenTwoTurnsIsInvisible(@TempDir Path root, SandboxSpec spec) throws Exception {
        try (SandboxManager m = SandboxManager.builder().driver("docker").workspaceRoot(root)
                .idleTimeout(Duration.ofSeconds(1)).reaperInterval(Duration.ofMillis(100)).build()) {
            SandboxToolProvider p = SandboxToolProvider.of(SandboxTools.builder(m).spec(spec).build());
            Assistant assistant = assistant(p);
            model.thenCall("run_command", "{\"command\":\"echo step one > progress.txt\"}").thenAnswer("started");
            assistant.chat("long-task", "start the task");
            String session = p.tools().sessionId("long-task");
            String first = m.session(session).orElseThrow().sandboxId();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (m.session(session).orElseThrow().state() != SessionState.SUSPENDED) {
                assertThat(System.nanoTime()).as("reaped within 30 s").isLessThan(deadline);
                Thread.sleep(100);
            }
            model.thenCall("run_command", "{\"command\":\"echo step two >> progress.txt && cat progress.txt\"}")
                    .thenAnswer("continued");
            assertThat(assistant.chat("long-task", "continue")).isEqualTo("continued");
            assertThat(model.lastToolResult().text()).isEqualTo("Exit code: 0\n--- stdout ---\nstep one\nstep two\n");
            assertThat(m.session(session).orElseThrow().sandboxId()).isNotEqualTo(first);
            m.destroy(session);
        }
    }

    @Test
    void toolObjectsWithToolMethodsRunInTheMemorysSandbox() {
        Assistant assistant = AiServices.builder(Assistant.class).chatModel(model)
                .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(50))
                .tools(new SandboxAgentTools(tools)).build();
        model.thenCall("write_file", "{\"path\":\"a/b.txt\",\"content\":\"via @Tool\"}")
                .thenCall("run_command", "{\"command\":\"cat a/b.txt\",\"timeout_seconds\":10}")
                .thenCall("list_files", "{\"recursive\":true}")
                .thenCall("read_file", "{\"path\":\"a/b.txt\",\"start_line\":1}")
                .thenCall("edit_file", "{\"path\":\"a/b.txt\",\"old_string\":\"via\",\"new_string\":\"through\"}")
                .thenCall("search_files", "{\"pattern\":\"through\",\"literal\":true}")
                .thenAnswer("done");
        assertThat(assistant.chat("obj-1", "go")).isEqualTo("done");
        assertThat(model.toolResults()).extracting(ToolExecutionResultMessage::text).containsExactly(
                "Wrote 9 bytes (1 line) to /workspace/a/b.txt (new file).",
                "Exit code: 0\n--- stdout ---\nvia @Tool\n",
                "/workspace:\na/\na/b.txt  (9 bytes)\n[1 directory, 1 file]",
                "via @Tool",
                "Edited /workspace/a/b.txt: replaced 1 occurrence (line 1).",
                "a/b.txt:1: through @Tool\n[1 match in /workspace, 1 file searched]");
        assertThat(new String(tools.sandbox("obj-1").files().readBytes("a/b.txt"), StandardCharsets.UTF_8))
                .isEqualTo("through @Tool");
    }

    @Test
    void theModelIsOfferedTheSetsToolsWithTheirSchemas() {
        SandboxToolProvider readOnly = SandboxToolProvider.of(SandboxTools.builder(tools.manager()).spec(tools.spec())
                .readOnly().build());
        model.thenCall("list_files", "{}").thenAnswer("looked");
        assertThat(assistant(readOnly).chat("ro", "what is there?")).isEqualTo("looked");
        assertThat(model.requests().get(0).toolSpecifications()).extracting(ToolSpecification::name)
                .containsExactly("read_file", "list_files", "search_files");
        ToolSpecification read = model.requests().get(0).toolSpecifications().get(0);
        JsonObjectSchema schema = read.parameters();
        assertThat(schema.properties().keySet()).containsExactly("path", "start_line", "end_line");
        assertThat(schema.required()).containsExactly("path");
        assertThat(read.description()).isEqualTo(tools.definition("read_file").orElseThrow().description());
        assertThat(model.lastToolResult().text()).isEqualTo("(/workspace is empty)");
    }
}
