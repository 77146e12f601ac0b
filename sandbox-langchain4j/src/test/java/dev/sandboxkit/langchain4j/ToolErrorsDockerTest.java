package dev.sandboxkit.langchain4j;

import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.service.AiServices;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.testkit.SandboxTest;
import dev.sandboxkit.tools.SandboxTool;
import dev.sandboxkit.tools.SandboxTools;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the model is offered and what it and the log see when a call is refused or the operator's setup fails, in
 * both styles, through LangChain4j's own AiServices on the real engine.
 */
@SandboxTest(driver = "docker")
class ToolErrorsDockerTest {
    private static final String NO_IMAGE = "sandboxkit-no-such-image:never";

    private SandboxManager manager;
    private SandboxSpec spec;
    private final ScriptedChatModel model = new ScriptedChatModel();

    @BeforeEach
    void setUp(SandboxManager manager, SandboxSpec spec) {
        this.manager = manager;
        this.spec = spec;
    }

    private SandboxTools tools(SandboxSpec s, SandboxTool... allowed) {
        SandboxTools.Builder b = SandboxTools.builder(manager).spec(s);
        if (allowed.length > 0) {
            b.tools(allowed);
        }
        return b.build();
    }

    private SandboxTools brokenTools() {
        return tools(spec.toBuilder().image(NO_IMAGE).pullPolicy(PullPolicy.NEVER).build());
    }

    private Assistant withToolObject(Object toolObject) {
        return AiServices.builder(Assistant.class).chatModel(model)
                .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(50))
                .tools(toolObject).build();
    }

    @Test
    void toolMethodsDeclareOnlyTheAllowedTools() {
        SandboxTools limited = tools(spec, SandboxTool.READ_FILE, SandboxTool.LIST_FILES);
        Assistant assistant = AiServices.builder(Assistant.class).chatModel(model)
                .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(50))
                .tools(SandboxAgentTools.of(limited)).build();
        model.thenCall("list_files", "{}").thenCall("read_file", "{\"path\":\"nope.txt\"}").thenAnswer("looked");

        assertThat(assistant.chat("allow", "look")).isEqualTo("looked");

        assertThat(model.requests().get(0).toolSpecifications()).extracting(ToolSpecification::name)
                .containsExactly("read_file", "list_files");
        assertThat(model.requests().get(0).toolSpecifications().get(0).description())
                .startsWith("Reads a text file"); // the @Tool method's own description
        assertThat(model.toolResults()).extracting(ToolExecutionResultMessage::isError).containsExactly(false, true);
        assertThat(model.lastToolResult().text()).startsWith("No such file or directory: /workspace/nope.txt.");

        // A tool object declares every @Tool method: refused for a set that offers fewer.
        assertThatThrownBy(() -> new SandboxAgentTools(limited)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("offers only read_file, list_files").hasMessageContaining("SandboxAgentTools.of(tools)");
        assertThat(SandboxAgentTools.of(tools(spec))).hasSize(6);
    }

    @Test
    void refusalsOfToolMethodsAreErrorResults() {
        model.thenCall("read_file", "{\"path\":\"nope.txt\"}").thenAnswer("noted");

        withToolObject(new SandboxAgentTools(tools(spec))).chat("refusal", "read it");

        ToolExecutionResultMessage seen = model.lastToolResult();
        assertThat(seen.text()).isEqualTo("No such file or directory: /workspace/nope.txt. Use list_files to see what exists.");
        assertThat(seen.isError()).isTrue();
    }

    @Test
    void operatorFailuresReachTheModelAsOneCleanLineAndTheLogOnceWithoutAStackTrace() {
        SandboxToolProvider provider = SandboxToolProvider.of(brokenTools());
        Assistant assistant = AiServices.builder(Assistant.class).chatModel(model)
                .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(50))
                .toolProvider(provider).build(); // no errorHandler(): the default
        model.thenCall("run_command", "{\"command\":\"echo hi\"}").thenAnswer("told");

        String log = StandardErr.capture(() -> assertThat(assistant.chat("broken", "go")).isEqualTo("told"));

        ToolExecutionResultMessage seen = model.lastToolResult();
        assertThat(seen.isError()).isTrue();
        assertCleanLine(seen.text());
        assertLoggedOnceWithoutStackTrace(log);
    }

    @Test
    void operatorFailuresOfToolMethodsAreTheSameCleanLine() {
        model.thenCall("run_command", "{\"command\":\"echo hi\"}").thenAnswer("told");

        String log = StandardErr.capture(() -> assertThat(withToolObject(new SandboxAgentTools(brokenTools()))
                .chat("broken-methods", "go")).isEqualTo("told"));

        ToolExecutionResultMessage seen = model.lastToolResult();
        assertThat(seen.isError()).isTrue();
        assertCleanLine(seen.text());
        assertLoggedOnceWithoutStackTrace(log);
    }

    @Test
    void withTheErrorHandlerOperatorFailuresOfToolMethodsReachTheCaller() {
        SandboxToolProvider provider = SandboxToolProvider.of(brokenTools());
        Assistant assistant = AiServices.builder(Assistant.class).chatModel(model)
                .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(50))
                .tools(new SandboxAgentTools(provider.tools()))
                .toolExecutionErrorHandler(provider.errorHandler()).build();
        model.thenCall("run_command", "{\"command\":\"echo hi\"}").thenAnswer("never reached");

        assertThatThrownBy(() -> assistant.chat("rethrown", "go")).isInstanceOf(SandboxAcquireException.class)
                .hasMessageContaining(NO_IMAGE);
        assertThat(model.toolResults()).as("the model was not told").isEmpty();
    }

    /** One line for the model: what failed and what the operator must do, not the engine's raw answer. */
    private static void assertCleanLine(String text) {
        assertThat(text).startsWith("run_command failed: the sandbox could not be started")
                .contains(NO_IMAGE).contains("operator")
                .doesNotContain("\n").doesNotContain("Status ").doesNotContain("{").doesNotContain("Exception");
    }

    private static void assertLoggedOnceWithoutStackTrace(String log) {
        assertThat(log.lines().filter(l -> l.contains("WARN")).toList()).as(log).hasSize(1);
        assertThat(log).as("no stack trace").doesNotContain("\tat ").doesNotContain("Caused by");
    }
}
