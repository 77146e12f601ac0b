package dev.sandboxkit.spring.ai;

import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.MessageChatMemoryAdvisor;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static dev.sandboxkit.spring.ai.ScriptedChatModel.reportLastToolResponse;
import static dev.sandboxkit.spring.ai.ScriptedChatModel.toolCall;
import static org.assertj.core.api.Assertions.assertThat;

/** What the advisor puts in the tool context, seen by a tool in a real ChatClient loop (no sandbox needed). */
class SandboxConversationAdvisorTest {

    /** A tool that only records the context it was called with. */
    private static final class ContextProbe implements ToolCallback {
        final List<Map<String, Object>> seen = new CopyOnWriteArrayList<>();

        @Override
        public ToolDefinition getToolDefinition() {
            return ToolDefinition.builder().name("probe").description("records its context")
                    .inputSchema("{\"type\":\"object\",\"properties\":{}}").build();
        }

        @Override
        public String call(String toolInput) {
            return call(toolInput, null);
        }

        @Override
        public String call(String toolInput, ToolContext toolContext) {
            seen.add(toolContext == null ? Map.of() : Map.copyOf(toolContext.getContext()));
            return "ok";
        }
    }

    @Test
    void theChatMemoryConversationIdReachesTheToolsNextToTheMemoryAdvisor() {
        ContextProbe probe = new ContextProbe();
        ChatClient chat = ChatClient.builder(new ScriptedChatModel(toolCall("probe", "{}"), reportLastToolResponse(),
                        toolCall("probe", "{}"), reportLastToolResponse()))
                .defaultAdvisors(MessageChatMemoryAdvisor.builder(MessageWindowChatMemory.builder().build()).build(),
                        new SandboxConversationAdvisor())
                .defaultTools(probe).build();

        chat.prompt().user("one").advisors(a -> a.param(ChatMemory.CONVERSATION_ID, "chat-1")).call().content();
        chat.prompt().user("two").advisors(a -> a.param(ChatMemory.CONVERSATION_ID, "chat-2"))
                .toolContext(Map.of("tenant", "t1")).call().content();

        assertThat(probe.seen).containsExactly(Map.of(ChatMemory.CONVERSATION_ID, "chat-1"),
                Map.of(ChatMemory.CONVERSATION_ID, "chat-2", "tenant", "t1"));
        assertThat(SandboxToolContext.conversationId(new ToolContext(probe.seen.get(1)))).contains("chat-2");
    }

    @Test
    void anIdTheApplicationPutInTheToolContextIsKept() {
        ContextProbe probe = new ContextProbe();
        ChatClient chat = ChatClient.builder(new ScriptedChatModel(toolCall("probe", "{}"), reportLastToolResponse()))
                .defaultAdvisors(new SandboxConversationAdvisor()).defaultTools(probe).build();

        chat.prompt().user("one").advisors(a -> a.param(ChatMemory.CONVERSATION_ID, "from-param"))
                .toolContext(Map.of(ChatMemory.CONVERSATION_ID, "from-context")).call().content();

        assertThat(probe.seen).containsExactly(Map.of(ChatMemory.CONVERSATION_ID, "from-context"));
    }

    @Test
    void withoutTheParameterATheRequestsToolContextIsKeptOrMarked() {
        ContextProbe probe = new ContextProbe();
        ChatClient chat = ChatClient.builder(new ScriptedChatModel(toolCall("probe", "{}"), reportLastToolResponse(),
                        toolCall("probe", "{}"), reportLastToolResponse()))
                .defaultAdvisors(new SandboxConversationAdvisor()).defaultTools(probe).build();

        chat.prompt().user("one").call().content();
        chat.prompt().user("two").toolContext(SandboxToolContext.of("explicit")).call().content();

        // An empty context gets a mark: Spring AI calls @Tool methods that take a ToolContext only with a non-empty one.
        assertThat(probe.seen).containsExactly(Map.of(SandboxConversationAdvisor.ADVISED, true),
                Map.of(SandboxToolContext.CONVERSATION_ID, "explicit"));
    }

    @Test
    void itRunsBeforeTheToolCallingAdvisor() {
        assertThat(new SandboxConversationAdvisor().getOrder())
                .isLessThan(org.springframework.ai.chat.client.advisor.ToolCallingAdvisor.DEFAULT_ORDER);
        assertThat(new SandboxConversationAdvisor(42).getOrder()).isEqualTo(42);
    }

    @Test
    void theToolContextHelpers() {
        assertThat(SandboxToolContext.of(7)).isEqualTo(Map.of(SandboxToolContext.CONVERSATION_ID, 7));
        assertThat(SandboxToolContext.conversationId(null)).isEmpty();
        assertThat(SandboxToolContext.conversationId(new ToolContext(Map.of("x", "y")))).isEmpty();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> SandboxToolContext.of(" "))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
