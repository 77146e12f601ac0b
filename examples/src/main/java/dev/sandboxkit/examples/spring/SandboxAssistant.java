package dev.sandboxkit.examples.spring;

import dev.sandboxkit.spring.ai.SandboxToolCallbackProvider;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.MessageChatMemoryAdvisor;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;
import org.springframework.stereotype.Service;

/**
 * An assistant with a sandbox per conversation: Spring AI's auto-configured {@code ChatClient.Builder} (to which
 * the starter added the advisor that hands the conversation id to the tools), a chat memory, the sandbox tools,
 * and the sandbox's instructions in the system prompt.
 */
@Service
public class SandboxAssistant {
    private final ChatClient chat;

    /**
     * Builds the chat client.
     *
     * @param builder Spring AI's auto-configured builder
     * @param tools   the starter's sandbox tools
     */
    public SandboxAssistant(ChatClient.Builder builder, SandboxToolCallbackProvider tools) {
        this.chat = builder
                .defaultSystem(tools.tools().instructions())
                .defaultAdvisors(MessageChatMemoryAdvisor.builder(MessageWindowChatMemory.builder().build()).build())
                .defaultTools(tools)
                .build();
    }

    /**
     * One turn of a conversation. Each conversation id has its own chat memory and its own sandbox workspace.
     *
     * @param conversationId the conversation, for example a chat id
     * @param message        what the user says
     * @return the assistant's answer
     */
    public String ask(String conversationId, String message) {
        return chat.prompt().user(message)
                .advisors(a -> a.param(ChatMemory.CONVERSATION_ID, conversationId))
                .call().content();
    }
}
