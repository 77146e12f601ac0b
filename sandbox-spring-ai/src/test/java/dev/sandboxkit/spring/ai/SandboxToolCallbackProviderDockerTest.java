package dev.sandboxkit.spring.ai;

import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.testkit.SandboxTest;
import dev.sandboxkit.tools.SandboxTool;
import dev.sandboxkit.tools.SandboxTools;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.MessageChatMemoryAdvisor;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.tool.ToolCallback;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;

import static dev.sandboxkit.spring.ai.ScriptedChatModel.reportLastToolResponse;
import static dev.sandboxkit.spring.ai.ScriptedChatModel.toolCall;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The callbacks in a ChatClient tool loop, on the real engine; a scripted model plans the calls. */
@SandboxTest(driver = "docker")
class SandboxToolCallbackProviderDockerTest {
    private SandboxManager manager;
    private SandboxSpec spec;
    private SandboxTools tools;
    private SandboxToolCallbackProvider provider;

    @BeforeEach
    void setUp(SandboxManager manager, SandboxSpec spec) {
        this.manager = manager;
        this.spec = spec;
        this.tools = SandboxTools.builder(manager).spec(spec).build();
        this.provider = SandboxToolCallbackProvider.of(tools);
    }

    @Test
    void callbacksCarryTheToolSetsNamesDescriptionsAndSchemas() {
        ToolCallback[] all = provider.getToolCallbacks();
        assertThat(Arrays.stream(all).map(c -> c.getToolDefinition().name()))
                .containsExactly("run_command", "read_file", "write_file", "edit_file", "list_files", "search_files");
        for (int i = 0; i < all.length; i++) {
            dev.sandboxkit.tools.ToolDefinition expected = tools.definitions().get(i);
            assertThat(all[i].getToolDefinition().description()).isEqualTo(expected.description());
            assertThat(all[i].getToolDefinition().inputSchema()).isEqualTo(expected.inputSchema());
            assertThat(all[i].getToolMetadata().returnDirect()).isFalse();
        }
        assertThat(provider.getToolCallbacks()).isNotSameAs(all); // callers cannot change the provider's array

        SandboxToolCallbackProvider readOnly = SandboxToolCallbackProvider.of(
                SandboxTools.builder(manager).spec(spec).readOnly().build());
        assertThat(Arrays.stream(readOnly.getToolCallbacks()).map(c -> c.getToolDefinition().name()))
                .containsExactly("read_file", "list_files", "search_files");
        SandboxToolCallbackProvider allowed = SandboxToolCallbackProvider.of(
                SandboxTools.builder(manager).spec(spec).tools(SandboxTool.RUN_COMMAND).build());
        assertThat(Arrays.stream(allowed.getToolCallbacks()).map(c -> c.getToolDefinition().name()))
                .containsExactly("run_command");
    }

    @Test
    void aConversationWritesAFileAndReadsItBackThroughTheToolLoop() {
        ScriptedChatModel model = new ScriptedChatModel(
                toolCall("write_file", "{\"path\":\"notes/todo.txt\",\"content\":\"buy milk\\n\"}"),
                toolCall("run_command", "{\"command\":\"wc -l < notes/todo.txt && cat notes/todo.txt\"}"),
                reportLastToolResponse());

        String answer = ChatClient.create(model).prompt().user("keep a todo list").tools(provider)
                .toolContext(SandboxToolContext.of("write-read")).call().content();

        assertThat(model.toolResponses()).containsExactly(
                "Wrote 9 bytes (1 line) to /workspace/notes/todo.txt (new file).",
                "Exit code: 0\n--- stdout ---\n1\nbuy milk\n");
        assertThat(answer).isEqualTo("final: Exit code: 0\n--- stdout ---\n1\nbuy milk\n");
        // The file is in the conversation's durable workdir, where the application can collect it.
        assertThat(new String(manager.files(tools.sessionId("write-read")).readBytes("notes/todo.txt"),
                StandardCharsets.UTF_8)).isEqualTo("buy milk\n");
    }

    @Test
    @SuppressWarnings("removal")
    void theDeprecatedToolCallbacksMethodWorksTheSame() {
        ScriptedChatModel model = new ScriptedChatModel(toolCall("run_command", "{\"command\":\"echo via callbacks\"}"),
                reportLastToolResponse());

        String answer = ChatClient.create(model).prompt().user("hi").toolCallbacks(provider)
                .toolContext(SandboxToolContext.of("deprecated-path")).call().content();

        assertThat(answer).isEqualTo("final: Exit code: 0\n--- stdout ---\nvia callbacks\n");
    }

    @Test
    void twoConversationsGetTwoWorkspaces() {
        ChatClient chat = ChatClient.builder(new ScriptedChatModel(
                        toolCall("write_file", "{\"path\":\"secret.txt\",\"content\":\"alice's\"}"), reportLastToolResponse(),
                        toolCall("read_file", "{\"path\":\"secret.txt\"}"), reportLastToolResponse(),
                        toolCall("run_command", "{\"command\":\"ls -A; echo bob > mine.txt\"}"), reportLastToolResponse(),
                        toolCall("read_file", "{\"path\":\"secret.txt\"}"), reportLastToolResponse()))
                .defaultTools(provider).defaultAdvisors(new SandboxConversationAdvisor()).build();

        String aliceWrites = turn(chat, "alice");
        String bobReads = turn(chat, "bob");
        String bobLists = turn(chat, "bob");
        String aliceReads = turn(chat, "alice");

        assertThat(aliceWrites).isEqualTo("final: Wrote 7 bytes (1 line) to /workspace/secret.txt (new file).");
        assertThat(bobReads).isEqualTo("final: No such file or directory: /workspace/secret.txt. Use list_files to see "
                + "what exists.");
        assertThat(bobLists).isEqualTo("final: Exit code: 0\n(no output)\n");
        assertThat(aliceReads).isEqualTo("final: alice's");
        assertThat(tools.sessionId("alice")).isNotEqualTo(tools.sessionId("bob"));
        assertThat(manager.files(tools.sessionId("alice")).list(".")).extracting(f -> f.path()).containsExactly("secret.txt");
        assertThat(manager.files(tools.sessionId("bob")).list(".")).extracting(f -> f.path()).containsExactly("mine.txt");
    }

    private static String turn(ChatClient chat, String conversation) {
        return chat.prompt().user("next").advisors(a -> a.param(ChatMemory.CONVERSATION_ID, conversation))
                .call().content();
    }

    @Test
    void mistakesTheModelCanFixAreAnsweredAndTheLoopGoesOn() {
        ScriptedChatModel model = new ScriptedChatModel(
                toolCall("read_file", "{\"path\":\"missing.txt\"}"),
                toolCall("edit_file", "{\"path\":\"../etc/passwd\",\"old_string\":\"a\",\"new_string\":\"b\"}"),
                toolCall("run_command", "{\"command\":\"exit 3\"}"),
                toolCall("read_file", "{not json"),
                reportLastToolResponse());

        String answer = ChatClient.create(model).prompt().user("try things").tools(provider)
                .toolContext(SandboxToolContext.of("mistakes")).call().content();

        assertThat(model.prompts).hasSize(5);
        assertThat(model.toolResponses().get(0)).isEqualTo("No such file or directory: /workspace/missing.txt. "
                + "Use list_files to see what exists.");
        assertThat(model.toolResponses().get(1)).endsWith(": not a path inside /workspace. Use a path relative to "
                + "/workspace, or an absolute path under /workspace, without '..' components.");
        assertThat(model.toolResponses().get(2)).isEqualTo("Exit code: 3\n(no output)\n");
        assertThat(model.toolResponses().get(3)).startsWith("The arguments of read_file are not valid JSON");
        assertThat(answer).startsWith("final: The arguments of read_file are not valid JSON");
    }

    @Test
    void operatorFailuresReachTheCallerAndTheModelIsNotAskedAgain() {
        SandboxSpec missingImage = spec.toBuilder().image("sandboxkit-no-such-image:never").pullPolicy(PullPolicy.NEVER)
                .build();
        SandboxToolCallbackProvider broken = SandboxToolCallbackProvider.of(
                SandboxTools.builder(manager).spec(missingImage).build());
        ScriptedChatModel model = new ScriptedChatModel(toolCall("run_command", "{\"command\":\"echo hi\"}"),
                reportLastToolResponse());

        assertThatThrownBy(() -> ChatClient.create(model).prompt().user("go").tools(broken)
                .toolContext(SandboxToolContext.of("no-image")).call().content())
                .isInstanceOf(SandboxAcquireException.class)
                .hasMessageContaining("sandboxkit-no-such-image:never");
        assertThat(model.prompts).hasSize(1);
    }

    @Test
    void afterAnOperatorFailureTheChatMemoryHoldsTheUnansweredQuestionAndNoToolCall() {
        SandboxToolCallbackProvider broken = SandboxToolCallbackProvider.of(SandboxTools.builder(manager)
                .spec(spec.toBuilder().image("sandboxkit-no-such-image:never").pullPolicy(PullPolicy.NEVER).build()).build());
        ChatMemory memory = MessageWindowChatMemory.builder().build();
        ScriptedChatModel model = new ScriptedChatModel(toolCall("run_command", "{\"command\":\"echo 1\"}"),
                toolCall("run_command", "{\"command\":\"echo 2\"}"), reportLastToolResponse());
        ChatClient.Builder chat = ChatClient.builder(model).defaultAdvisors(
                MessageChatMemoryAdvisor.builder(memory).build(), new SandboxConversationAdvisor());

        assertThatThrownBy(() -> chat.build().prompt().user("first").tools(broken)
                .advisors(a -> a.param(ChatMemory.CONVERSATION_ID, "memory")).call().content())
                .isInstanceOf(SandboxAcquireException.class);
        // The memory advisor sits outside the tool loop: nothing half-done to repair before the next turn.
        assertThat(memory.get("memory")).extracting(m -> m.getMessageType().name()).containsExactly("USER");

        String answer = chat.build().prompt().user("second").tools(provider)
                .advisors(a -> a.param(ChatMemory.CONVERSATION_ID, "memory")).call().content();
        assertThat(answer).isEqualTo("final: Exit code: 0\n--- stdout ---\n2\n");
        assertThat(memory.get("memory")).extracting(m -> m.getMessageType().name()).containsExactly("USER", "USER", "ASSISTANT");
    }

    @Test
    void aCallThatNamesNoConversationFailsForTheCallerNeverSharingAWorkspace() {
        ScriptedChatModel model = new ScriptedChatModel(toolCall("list_files", "{}"), reportLastToolResponse());

        assertThatThrownBy(() -> ChatClient.create(model).prompt().user("go").tools(provider).call().content())
                .isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("list_files was called without a conversation")
                .hasMessageContaining(SandboxToolContext.CONVERSATION_ID)
                .hasMessageContaining(ChatMemory.CONVERSATION_ID);
        assertThat(model.prompts).hasSize(1);

        // A context that has entries, but not the conversation, is refused the same way.
        ToolCallback list = provider.getToolCallbacks()[4];
        assertThatThrownBy(() -> list.call("{}", new ToolContext(Map.of("tenant", "t1"))))
                .isInstanceOf(SandboxConfigurationException.class);
        assertThatThrownBy(() -> list.call("{}"))
                .isInstanceOf(SandboxConfigurationException.class);
        assertThatThrownBy(() -> list.call("{}", new ToolContext(Map.of(ChatMemory.CONVERSATION_ID, "  "))))
                .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("blank conversation id");
    }

    @Test
    void aDefaultConversationServesCallsThatNameNoneButNeverOverridesOne() {
        SandboxToolCallbackProvider single = SandboxToolCallbackProvider.builder(tools).defaultConversation("cli").build();
        ToolCallback write = single.getToolCallbacks()[2];

        write.call("{\"path\":\"a.txt\",\"content\":\"from the default\"}");
        write.call("{\"path\":\"b.txt\",\"content\":\"named\"}", new ToolContext(SandboxToolContext.of("named")));

        assertThat(manager.files(tools.sessionId("cli")).list(".")).extracting(f -> f.path()).containsExactly("a.txt");
        assertThat(manager.files(tools.sessionId("named")).list(".")).extracting(f -> f.path()).containsExactly("b.txt");
        assertThat(single.defaultConversation()).isEqualTo("cli");
        assertThat(provider.defaultConversation()).isNull();
        assertThatThrownBy(() -> SandboxToolCallbackProvider.builder(tools).defaultConversation(" "))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SandboxToolCallbackProvider.builder(tools).defaultConversation("a").defaultConversation("b"))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void theSandboxkitKeyWinsOverTheChatMemoryKey() {
        ToolCallback write = provider.getToolCallbacks()[2];

        write.call("{\"path\":\"where.txt\",\"content\":\"x\"}", new ToolContext(Map.of(
                ChatMemory.CONVERSATION_ID, "chat-7", SandboxToolContext.CONVERSATION_ID, "user-7")));

        assertThat(manager.files(tools.sessionId("user-7")).list(".")).extracting(f -> f.path()).containsExactly("where.txt");
        assertThat(manager.session(tools.sessionId("chat-7"))).isEmpty();
    }
}
