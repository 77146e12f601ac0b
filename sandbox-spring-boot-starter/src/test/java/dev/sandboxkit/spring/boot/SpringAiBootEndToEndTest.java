package dev.sandboxkit.spring.boot;

import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spring.ai.SandboxToolCallbackProvider;
import dev.sandboxkit.spring.ai.SandboxToolExceptionProcessor;
import dev.sandboxkit.spring.ai.SandboxToolMethods;
import dev.sandboxkit.tools.SandboxTools;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.MessageChatMemoryAdvisor;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.model.chat.client.autoconfigure.ChatClientAutoConfiguration;
import org.springframework.ai.model.tool.autoconfigure.ToolCallingAutoConfiguration;
import org.springframework.ai.tool.execution.DefaultToolExecutionExceptionProcessor;
import org.springframework.ai.tool.execution.ToolExecutionExceptionProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static dev.sandboxkit.spring.boot.ScriptedChatModel.reportLastToolResponse;
import static dev.sandboxkit.spring.boot.ScriptedChatModel.toolCall;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A Spring Boot application as a user writes it: the starter, Spring AI's own auto-configuration, a ChatModel bean
 * (scripted: it stands in for the LLM and plans the tool calls) and the auto-configured {@code ChatClient.Builder}.
 * Everything else is real, containers included.
 */
class SpringAiBootEndToEndTest {
    @TempDir
    Path root;

    private final String fleet = Engine.newFleet();

    private ApplicationContextRunner app(ScriptedChatModel model, String... properties) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ToolCallingAutoConfiguration.class, ChatClientAutoConfiguration.class))
                .withConfiguration(SandboxAutoConfigurationTest.ALL)
                .withBean(ChatModel.class, () -> model)
                .withPropertyValues(Engine.base(fleet, root, properties));
    }

    /** What a user writes: the auto-configured builder, a chat memory, the sandbox tools. */
    private static ChatClient chat(ApplicationContext context) {
        return context.getBean(ChatClient.Builder.class)
                .defaultAdvisors(MessageChatMemoryAdvisor.builder(MessageWindowChatMemory.builder().build()).build())
                .defaultTools(context.getBean(SandboxToolCallbackProvider.class))
                .build();
    }

    private static String turn(ChatClient chat, String conversation, String user) {
        return chat.prompt().user(user).advisors(a -> a.param(ChatMemory.CONVERSATION_ID, conversation)).call().content();
    }

    @Test
    void twoConversationsGetTwoWorkspacesThroughBootsChatClient() {
        ScriptedChatModel model = new ScriptedChatModel(
                toolCall("write_file", "{\"path\":\"plan.md\",\"content\":\"alice's plan\\n\"}"), reportLastToolResponse(),
                toolCall("run_command", "{\"command\":\"cat plan.md 2>&1; echo bob > bob.txt\"}"), reportLastToolResponse(),
                toolCall("list_files", "{}"), reportLastToolResponse());
        app(model).run(context -> {
            ChatClient chat = chat(context);

            assertThat(turn(chat, "alice", "make a plan"))
                    .isEqualTo("final: Wrote 13 bytes (1 line) to /workspace/plan.md (new file).");
            assertThat(turn(chat, "bob", "show me the plan"))
                    .isEqualTo("final: Exit code: 0\n--- stdout ---\ncat: can't open 'plan.md': No such file or directory\n");
            assertThat(turn(chat, "alice", "what do I have")).isEqualTo("final: /workspace:\nplan.md  (13 bytes)\n"
                    + "[0 directories, 1 file]");

            SandboxTools tools = context.getBean(SandboxTools.class);
            SandboxManager manager = context.getBean(SandboxManager.class);
            assertThat(manager.files(tools.sessionId("alice")).list(".")).extracting(f -> f.path()).containsExactly("plan.md");
            assertThat(manager.files(tools.sessionId("bob")).list(".")).extracting(f -> f.path()).containsExactly("bob.txt");
        });
        assertThat(Engine.containers(fleet)).isEmpty();
    }

    @Test
    void filesPersistAcrossAnIdleReapBetweenTwoTurns() {
        ScriptedChatModel model = new ScriptedChatModel(
                toolCall("write_file", "{\"path\":\"notes/state.txt\",\"content\":\"step 1 done\\n\"}"), reportLastToolResponse(),
                toolCall("read_file", "{\"path\":\"notes/state.txt\"}"), reportLastToolResponse());
        app(model, "sandboxkit.idle-timeout=1s", "sandboxkit.reaper-interval=100ms").run(context -> {
            ChatClient chat = chat(context);
            SandboxManager manager = context.getBean(SandboxManager.class);
            String session = context.getBean(SandboxTools.class).sessionId("long-task");

            turn(chat, "long-task", "start");
            String first = manager.session(session).map(SessionInfo::sandboxId).orElseThrow();
            Engine.awaitState(manager, session, SessionState.SUSPENDED);
            assertThat(Engine.containers(fleet)).isEmpty(); // reaped: no container while idle

            assertThat(turn(chat, "long-task", "continue")).isEqualTo("final: step 1 done\n");
            SessionInfo resumed = manager.session(session).orElseThrow();
            assertThat(resumed.state()).isEqualTo(SessionState.ACTIVE);
            assertThat(resumed.sandboxId()).isNotEqualTo(first);
            assertThat(manager.stats().idleReaped()).isEqualTo(1);
            assertThat(manager.stats().resumed()).isEqualTo(1);
        });
    }

    @Test
    void defaultToolsOffersTheToolsToEveryChatClientOfTheBuilder() {
        ScriptedChatModel model = new ScriptedChatModel(toolCall("run_command", "{\"command\":\"echo from default tools\"}"),
                reportLastToolResponse());
        app(model, "sandboxkit.chat-client.default-tools=true").run(context -> {
            ChatClient chat = context.getBean(ChatClient.Builder.class).build(); // no .tools(...), no advisor
            assertThat(turn(chat, "defaults", "go")).isEqualTo("final: Exit code: 0\n--- stdout ---\nfrom default tools\n");
        });
        // Off by default: a ChatClient that was not given the tools cannot call them.
        ScriptedChatModel other = new ScriptedChatModel(toolCall("run_command", "{\"command\":\"echo no\"}"),
                reportLastToolResponse());
        app(other).run(context -> assertThatThrownBy(() -> turn(context.getBean(ChatClient.Builder.class).build(), "x", "go"))
                .hasMessageContaining("No ToolCallback found for tool name: run_command"));
    }

    @Test
    void theToolMethodsWorkWithBootsChatClientToo() {
        ScriptedChatModel model = new ScriptedChatModel(
                toolCall("write_file", "{\"path\":\"m.txt\",\"content\":\"via @Tool\"}"),
                toolCall("read_file", "{\"path\":\"m.txt\"}"), reportLastToolResponse());
        app(model).run(context -> {
            ChatClient chat = context.getBean(ChatClient.Builder.class).build();
            String answer = chat.prompt().user("go").tools(context.getBean(SandboxToolMethods.class))
                    .advisors(a -> a.param(ChatMemory.CONVERSATION_ID, "methods")).call().content();
            assertThat(answer).isEqualTo("final: via @Tool");
        });
    }

    @Test
    void operatorFailuresReachTheCallerFromCallbacksAndFromToolMethods() {
        String[] noImage = {"sandboxkit.spec.image=sandboxkit-no-such-image:never"};
        ScriptedChatModel model = new ScriptedChatModel(toolCall("run_command", "{\"command\":\"echo hi\"}"),
                toolCall("run_command", "{\"command\":\"echo hi\"}"));
        app(model, noImage).run(context -> {
            assertThat(context.getBean(ToolExecutionExceptionProcessor.class)).isInstanceOf(SandboxToolExceptionProcessor.class);
            assertThat(((SandboxToolExceptionProcessor) context.getBean(ToolExecutionExceptionProcessor.class)).delegate())
                    .isInstanceOf(DefaultToolExecutionExceptionProcessor.class);

            assertThatThrownBy(() -> turn(chat(context), "broken", "go"))
                    .isInstanceOf(SandboxAcquireException.class).hasMessageContaining("sandboxkit-no-such-image:never");
            ChatClient plain = context.getBean(ChatClient.Builder.class).build();
            assertThatThrownBy(() -> plain.prompt().user("go").tools(context.getBean(SandboxToolMethods.class))
                    .advisors(a -> a.param(ChatMemory.CONVERSATION_ID, "broken")).call().content())
                    .isInstanceOf(SandboxAcquireException.class).hasMessageContaining("sandboxkit-no-such-image:never");
            assertThat(model.prompts).hasSize(2); // the model was never asked to deal with either
        });

        // Switched off, Spring AI's processor decides alone, and by default it shows the failure to the model.
        ScriptedChatModel shown = new ScriptedChatModel(toolCall("run_command", "{\"command\":\"echo hi\"}"),
                reportLastToolResponse());
        app(shown, "sandboxkit.spec.image=sandboxkit-no-such-image:never", "sandboxkit.tools.rethrow-sandbox-exceptions=false")
                .run(context -> {
                    assertThat(context.getBean(ToolExecutionExceptionProcessor.class))
                            .isInstanceOf(DefaultToolExecutionExceptionProcessor.class);
                    String answer = context.getBean(ChatClient.Builder.class).build().prompt().user("go")
                            .tools(context.getBean(SandboxToolMethods.class))
                            .advisors(a -> a.param(ChatMemory.CONVERSATION_ID, "shown")).call().content();
                    assertThat(answer).startsWith("final: ").contains("sandboxkit-no-such-image:never");
                });
    }

    @Test
    void aCallWithoutAConversationFailsUnlessADefaultIsConfigured() {
        ScriptedChatModel model = new ScriptedChatModel(toolCall("list_files", "{}"), reportLastToolResponse());
        app(model).run(context -> {
            ChatClient chat = context.getBean(ChatClient.Builder.class)
                    .defaultTools(context.getBean(SandboxToolCallbackProvider.class)).build();
            assertThatThrownBy(() -> chat.prompt().user("go").call().content())
                    .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("without a conversation");
        });

        ScriptedChatModel single = new ScriptedChatModel(toolCall("write_file", "{\"path\":\"cli.txt\",\"content\":\"one user\"}"),
                reportLastToolResponse());
        app(single, "sandboxkit.tools.default-conversation=cli").run(context -> {
            ChatClient chat = context.getBean(ChatClient.Builder.class)
                    .defaultTools(context.getBean(SandboxToolCallbackProvider.class)).build();
            chat.prompt().user("go").call().content();
            SandboxTools tools = context.getBean(SandboxTools.class);
            assertThat(new String(context.getBean(SandboxManager.class).files(tools.sessionId("cli")).readBytes("cli.txt"),
                    StandardCharsets.UTF_8)).isEqualTo("one user");
        });
    }

    @Test
    void theDefaultConversationAppliesToTheToolMethodsToo() {
        ScriptedChatModel single = new ScriptedChatModel(toolCall("write_file", "{\"path\":\"m.txt\",\"content\":\"@Tool\"}"),
                reportLastToolResponse());
        app(single, "sandboxkit.tools.default-conversation=cli-methods").run(context -> {
            ChatClient chat = context.getBean(ChatClient.Builder.class).build();
            String answer = chat.prompt().user("go").tools(context.getBean(SandboxToolMethods.class)).call().content();

            assertThat(answer).isEqualTo("final: Wrote 5 bytes (1 line) to /workspace/m.txt (new file).");
            SandboxTools tools = context.getBean(SandboxTools.class);
            assertThat(tools.sessionId("cli-methods")).isEqualTo("conv-cli-methods");
            assertThat(new String(context.getBean(SandboxManager.class).files(tools.sessionId("cli-methods"))
                    .readBytes("m.txt"), StandardCharsets.UTF_8)).isEqualTo("@Tool");
        });
    }
}
