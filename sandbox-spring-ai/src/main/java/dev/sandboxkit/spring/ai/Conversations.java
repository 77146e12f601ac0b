package dev.sandboxkit.spring.ai;

import dev.sandboxkit.SandboxConfigurationException;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.model.ToolContext;

import java.util.Optional;

/**
 * Finds the conversation of a tool call. A missing id is the application's mistake, never the model's: it is
 * thrown, not answered, and never silently replaced by a shared id unless the application configured one.
 */
final class Conversations {
    private final String defaultConversation;

    Conversations(String defaultConversation) {
        this.defaultConversation = defaultConversation;
    }

    Object of(ToolContext context, String toolName) {
        Optional<Object> id = SandboxToolContext.conversationId(context);
        if (id.isPresent()) {
            // A blank id was meant to be set and was not: falling back to a default would share a workspace.
            if (id.get().toString().isBlank()) {
                throw new SandboxConfigurationException("The sandbox tool " + toolName + " got a blank conversation id "
                        + "in its ToolContext (" + SandboxToolContext.CONVERSATION_ID + " or "
                        + ChatMemory.CONVERSATION_ID + "); pass the conversation's real id.");
            }
            return id.get();
        }
        if (defaultConversation != null) {
            return defaultConversation;
        }
        throw new SandboxConfigurationException("The sandbox tool " + toolName + " was called without a conversation: "
                + "its ToolContext has neither " + SandboxToolContext.CONVERSATION_ID + " nor "
                + ChatMemory.CONVERSATION_ID + ". Register a SandboxConversationAdvisor and pass "
                + ".advisors(a -> a.param(ChatMemory.CONVERSATION_ID, id)), or pass "
                + ".toolContext(SandboxToolContext.of(id)); a single-user application may configure a default "
                + "conversation instead.");
    }

    String defaultConversation() {
        return defaultConversation;
    }
}
