package dev.sandboxkit.spring.ai;

import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.model.ToolContext;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Where the sandbox tools find the conversation a tool call belongs to: an entry of Spring AI's
 * {@link ToolContext}. Each conversation id maps to its own sandbox session (see
 * {@link dev.sandboxkit.tools.SessionResolver}), so its files persist across turns and never mix with another
 * conversation's.
 *
 * <p>The tools look up, in this order:
 * <ol>
 *   <li>{@value #CONVERSATION_ID}: set it yourself with {@code .toolContext(SandboxToolContext.of(id))} when the
 *       sandbox should follow something other than the chat memory, for example one workspace per user across
 *       several chats;</li>
 *   <li>{@value ChatMemory#CONVERSATION_ID} ({@link ChatMemory#CONVERSATION_ID}): the chat memory's id. Spring AI
 *       does not copy the advisor parameter of that name into the tool context; {@link SandboxConversationAdvisor}
 *       does.</li>
 * </ol>
 * A call that finds neither fails (see {@link SandboxToolCallbackProvider.Builder#defaultConversation(String)}).
 */
public final class SandboxToolContext {
    /** The tool-context key that names the sandbox conversation explicitly: {@value}. */
    public static final String CONVERSATION_ID = "sandboxkit_conversation_id";

    private SandboxToolContext() {
    }

    /**
     * A tool context naming the conversation, for {@code ChatClient.prompt().toolContext(...)}.
     *
     * @param conversationId the conversation; its {@code toString()} must not be blank
     * @return {@code {sandboxkit_conversation_id=conversationId}}
     * @throws IllegalArgumentException if the id is blank
     */
    public static Map<String, Object> of(Object conversationId) {
        Objects.requireNonNull(conversationId, "conversationId");
        if (conversationId.toString().isBlank()) {
            throw new IllegalArgumentException("conversationId must not be blank");
        }
        return Map.of(CONVERSATION_ID, conversationId);
    }

    /**
     * The conversation a tool context names: {@value #CONVERSATION_ID}, else {@value ChatMemory#CONVERSATION_ID}.
     *
     * @param context the tool context, or {@code null}
     * @return the id as given (possibly blank), or empty if neither key is present
     */
    public static Optional<Object> conversationId(ToolContext context) {
        if (context == null) {
            return Optional.empty();
        }
        Map<String, Object> entries = context.getContext();
        Object explicit = entries.get(CONVERSATION_ID);
        return Optional.ofNullable(explicit != null ? explicit : entries.get(ChatMemory.CONVERSATION_ID));
    }
}
