package dev.sandboxkit.readme;

import dev.sandboxkit.spring.ai.SandboxToolCallbackProvider;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.MessageChatMemoryAdvisor;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;
import org.springframework.stereotype.Service;

// The README's Spring Boot example, character for character (ReadmeBootAppTest compares them).
@Service
class Assistant {
    private final ChatClient chat;

    Assistant(ChatClient.Builder builder, SandboxToolCallbackProvider sandbox) {
        this.chat = builder
                .defaultSystem(sandbox.tools().instructions())           // what persists, idle restarts, limits
                .defaultAdvisors(MessageChatMemoryAdvisor.builder(MessageWindowChatMemory.builder().build()).build())
                .defaultTools(sandbox)                                    // or per request: .tools(sandbox)
                .build();
    }

    String ask(String conversationId, String message) {
        return chat.prompt().user(message)
                .advisors(a -> a.param(ChatMemory.CONVERSATION_ID, conversationId))  // selects memory AND sandbox
                .call().content();
    }
}
