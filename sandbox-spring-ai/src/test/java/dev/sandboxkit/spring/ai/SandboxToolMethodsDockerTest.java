package dev.sandboxkit.spring.ai;

import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.testkit.SandboxTest;
import dev.sandboxkit.tools.SandboxTools;
import dev.sandboxkit.tools.ToolParameter;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.ToolCallingAdvisor;
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.model.tool.ToolCallingManager;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.execution.DefaultToolExecutionExceptionProcessor;
import org.springframework.ai.tool.execution.ToolExecutionException;
import org.springframework.ai.tool.method.MethodToolCallbackProvider;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import static dev.sandboxkit.spring.ai.ScriptedChatModel.reportLastToolResponse;
import static dev.sandboxkit.spring.ai.ScriptedChatModel.toolCall;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The {@code @Tool} methods through Spring AI's own method callbacks, on the real engine. */
@SandboxTest(driver = "docker")
class SandboxToolMethodsDockerTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private SandboxManager manager;
    private SandboxSpec spec;
    private SandboxTools tools;
    private SandboxToolMethods methods;

    @BeforeEach
    void setUp(SandboxManager manager, SandboxSpec spec) {
        this.manager = manager;
        this.spec = spec;
        this.tools = SandboxTools.builder(manager).spec(spec).build();
        this.methods = new SandboxToolMethods(tools);
    }

    @Test
    void theMethodsOfferTheToolSetsToolsWithTheSameArguments() {
        Map<String, ToolCallback> byName = Arrays.stream(MethodToolCallbackProvider.builder().toolObjects(methods).build()
                .getToolCallbacks()).collect(Collectors.toMap(c -> c.getToolDefinition().name(), Function.identity()));

        assertThat(byName.keySet()).containsExactlyInAnyOrderElementsOf(
                tools.definitions().stream().map(dev.sandboxkit.tools.ToolDefinition::name).toList());
        for (dev.sandboxkit.tools.ToolDefinition expected : tools.definitions()) {
            JsonNode schema = JSON.readTree(byName.get(expected.name()).getToolDefinition().inputSchema());
            List<String> properties = new ArrayList<>(schema.get("properties").propertyNames());
            List<String> required = new ArrayList<>();
            schema.get("required").forEach(n -> required.add(n.asString()));

            assertThat(properties).as(expected.name())
                    .containsExactlyInAnyOrderElementsOf(expected.parameters().stream().map(ToolParameter::name).toList());
            assertThat(required).as(expected.name()).containsExactlyInAnyOrderElementsOf(expected.parameters().stream()
                    .filter(ToolParameter::required).map(ToolParameter::name).toList());
            for (ToolParameter p : expected.parameters()) {
                assertThat(schema.get("properties").get(p.name()).get("type").asString()).as(expected.name() + "." + p.name())
                        .isEqualTo(p.type().jsonName());
            }
            assertThat(byName.get(expected.name()).getToolDefinition().description()).isNotBlank();
        }
    }

    @Test
    void aConversationUsesTheMethodsAndReadsPlainText() {
        ScriptedChatModel model = new ScriptedChatModel(
                toolCall("write_file", "{\"path\":\"app.sh\",\"content\":\"echo one\\necho two\\n\"}"),
                toolCall("edit_file", "{\"path\":\"app.sh\",\"old_string\":\"two\",\"new_string\":\"2\",\"replace_all\":true}"),
                toolCall("run_command", "{\"command\":\"sh app.sh\",\"timeout_seconds\":20}"),
                toolCall("read_file", "{\"path\":\"app.sh\",\"start_line\":2}"),
                toolCall("search_files", "{\"pattern\":\"ONE\",\"ignore_case\":true}"),
                toolCall("list_files", "{\"recursive\":true}"),
                reportLastToolResponse());

        ChatClient.create(model).prompt().user("script it").tools(methods).toolContext(SandboxToolContext.of("methods"))
                .call().content();

        assertThat(model.toolResponses()).containsExactly(
                "Wrote 18 bytes (2 lines) to /workspace/app.sh (new file).",
                "Edited /workspace/app.sh: replaced 1 occurrence (line 2).",
                "Exit code: 0\n--- stdout ---\none\n2\n", // plain text, not a JSON string with \n escapes
                "echo 2\n[/workspace/app.sh: lines 2-2 of 2, end of file]",
                "app.sh:1: echo one\n[1 match in /workspace, 1 file searched]", // ignore_case reached the tool
                "/workspace:\napp.sh  (16 bytes)\n[0 directories, 1 file]");
    }

    @Test
    void withoutTheProcessorSpringAiShowsOperatorFailuresToTheModel() {
        ScriptedChatModel model = new ScriptedChatModel(toolCall("run_command", "{\"command\":\"echo hi\"}"),
                reportLastToolResponse());

        String answer = ChatClient.create(model).prompt().user("go").tools(new SandboxToolMethods(brokenTools()))
                .toolContext(SandboxToolContext.of("no-image-default")).call().content();

        // Why SandboxToolExceptionProcessor exists: the model got an engine-side failure it cannot fix.
        assertThat(answer).startsWith("final: ").contains("sandboxkit-no-such-image:never");
    }

    @Test
    void theProcessorLetsOperatorFailuresReachTheCaller() {
        ScriptedChatModel model = new ScriptedChatModel(toolCall("run_command", "{\"command\":\"echo hi\"}"),
                reportLastToolResponse());
        ToolCallingManager toolCalling = ToolCallingManager.builder()
                .toolExecutionExceptionProcessor(new SandboxToolExceptionProcessor()).build();
        ChatClient chat = ChatClient.builder(model)
                .defaultAdvisors(ToolCallingAdvisor.builder().toolCallingManager(toolCalling).build()).build();

        assertThatThrownBy(() -> chat.prompt().user("go").tools(new SandboxToolMethods(brokenTools()))
                .toolContext(SandboxToolContext.of("no-image")).call().content())
                .isInstanceOf(SandboxAcquireException.class).hasMessageContaining("sandboxkit-no-such-image:never");
        assertThat(model.prompts).hasSize(1);

        // A missing conversation id is the application's to fix as well.
        ScriptedChatModel second = new ScriptedChatModel(toolCall("list_files", "{}"), reportLastToolResponse());
        ChatClient chat2 = ChatClient.builder(second)
                .defaultAdvisors(ToolCallingAdvisor.builder().toolCallingManager(toolCalling).build()).build();
        assertThatThrownBy(() -> chat2.prompt().user("go").tools(methods).toolContext(Map.of("tenant", "t1"))
                .call().content())
                .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("without a conversation");
    }

    @Test
    void theProcessorHandsEverythingElseToItsDelegate() {
        SandboxToolExceptionProcessor processor = new SandboxToolExceptionProcessor(
                DefaultToolExecutionExceptionProcessor.builder().build());
        ToolCallback any = MethodToolCallbackProvider.builder().toolObjects(methods).build().getToolCallbacks()[0];

        assertThat(processor.process(new ToolExecutionException(any.getToolDefinition(),
                new IllegalArgumentException("bad input")))).isEqualTo("bad input");
        assertThat(processor.delegate()).isInstanceOf(DefaultToolExecutionExceptionProcessor.class);
    }

    @Test
    void theModelsMistakesAreAnswered() {
        ScriptedChatModel model = new ScriptedChatModel(
                toolCall("read_file", "{\"path\":\"nope.txt\"}"),
                toolCall("edit_file", "{\"path\":\"nope.txt\",\"old_string\":\"a\",\"new_string\":\"b\"}"),
                reportLastToolResponse());

        ChatClient.create(model).prompt().user("go").tools(methods).toolContext(SandboxToolContext.of("methods-mistakes"))
                .call().content();

        assertThat(model.toolResponses()).containsExactly(
                "No such file or directory: /workspace/nope.txt. Use list_files to see what exists.",
                "No such file or directory: /workspace/nope.txt. Use list_files to see what exists.");
    }

    @Test
    void aProvidersDefaultConversationAppliesToTheMethods() {
        SandboxToolMethods single = new SandboxToolMethods(
                SandboxToolCallbackProvider.builder(tools).defaultConversation("methods-cli").build());

        single.writeFile("x.txt", "x", new ToolContext(Map.of("tenant", "t1")));

        assertThat(manager.files(tools.sessionId("methods-cli")).exists("x.txt")).isTrue();
        assertThat(single.tools()).isSameAs(tools);
    }

    @Test
    void aDefaultConversationAppliesToTheMethodsThroughTheChatClientWithoutAnyId() {
        SandboxToolMethods single = new SandboxToolMethods(
                SandboxToolCallbackProvider.builder(tools).defaultConversation("methods-chat-default").build());
        ScriptedChatModel model = new ScriptedChatModel(toolCall("write_file", "{\"path\":\"d.txt\",\"content\":\"dd\"}"),
                reportLastToolResponse());
        ChatClient chat = ChatClient.builder(model).defaultAdvisors(new SandboxConversationAdvisor()).build();

        String answer = chat.prompt().user("go").tools(single).call().content(); // no id, no tool context

        assertThat(answer).isEqualTo("final: Wrote 2 bytes (1 line) to /workspace/d.txt (new file).");
        assertThat(manager.files(tools.sessionId("methods-chat-default")).exists("d.txt")).isTrue();

        // Without a default, the application hears what is missing (not Spring AI's "ToolContext is required").
        ScriptedChatModel second = new ScriptedChatModel(toolCall("list_files", "{}"), reportLastToolResponse());
        ChatClient chat2 = ChatClient.builder(second).defaultAdvisors(new SandboxConversationAdvisor(),
                ToolCallingAdvisor.builder().toolCallingManager(ToolCallingManager.builder()
                        .toolExecutionExceptionProcessor(new SandboxToolExceptionProcessor()).build()).build()).build();
        assertThatThrownBy(() -> chat2.prompt().user("go").tools(methods).call().content())
                .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("without a conversation");
    }

    private SandboxTools brokenTools() {
        return SandboxTools.builder(manager).spec(spec.toBuilder().image("sandboxkit-no-such-image:never")
                .pullPolicy(PullPolicy.NEVER).build()).build();
    }
}
