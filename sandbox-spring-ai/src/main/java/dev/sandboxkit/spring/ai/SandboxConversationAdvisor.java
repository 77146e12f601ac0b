package dev.sandboxkit.spring.ai;

import org.springframework.ai.chat.client.ChatClientRequest;
import org.springframework.ai.chat.client.ChatClientResponse;
import org.springframework.ai.chat.client.advisor.ToolCallingAdvisor;
import org.springframework.ai.chat.client.advisor.api.AdvisorChain;
import org.springframework.ai.chat.client.advisor.api.BaseAdvisor;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;

import java.util.Map;

/**
 * Hands the chat memory's conversation id to the tools. Spring AI keeps the advisor parameter
 * {@link ChatMemory#CONVERSATION_ID} for the memory advisors and does not put it in the
 * {@link org.springframework.ai.chat.model.ToolContext}; this advisor copies it there, under the same key,
 * so that one {@code .advisors(a -> a.param(ChatMemory.CONVERSATION_ID, id))} selects both the chat memory
 * and the sandbox. An entry the application put in the tool context itself is never replaced.
 *
 * <pre>{@code
 * ChatClient chat = ChatClient.builder(model)
 *         .defaultAdvisors(MessageChatMemoryAdvisor.builder(memory).build(), new SandboxConversationAdvisor())
 *         .defaultTools(sandboxTools)
 *         .build();
 * }</pre>
 *
 * <p>It also keeps the tool context from being empty: Spring AI refuses to call a {@code @Tool} method that takes a
 * {@link org.springframework.ai.chat.model.ToolContext} when the context is empty, so {@link SandboxToolMethods}
 * could not apply a {@linkplain SandboxToolCallbackProvider.Builder#defaultConversation(String) default
 * conversation}, nor say that a conversation id is missing. A request with neither the parameter nor a tool context
 * gets the entry {@code sandboxkit_advised=true}.
 *
 * <p>It must run before the tool-calling advisor: the default order is {@value #DEFAULT_ORDER}, 50 before
 * {@link ToolCallingAdvisor#DEFAULT_ORDER}. Requests with a tool context and without the parameter, or whose model
 * options cannot carry tools, pass unchanged. Stateless and thread-safe.
 */
public final class SandboxConversationAdvisor implements BaseAdvisor {
    /** The default order: just before Spring AI's tool-calling advisor. */
    public static final int DEFAULT_ORDER = ToolCallingAdvisor.DEFAULT_ORDER - 50;

    /** The entry that keeps an otherwise empty tool context from being empty. */
    static final String ADVISED = "sandboxkit_advised";

    private final int order;

    /** An advisor at {@link #DEFAULT_ORDER}. */
    public SandboxConversationAdvisor() {
        this(DEFAULT_ORDER);
    }

    /**
     * An advisor at another order, for a chain whose tool-calling advisor was moved
     * ({@code spring.ai.chat.client.tool-calling.advisor-order}).
     *
     * @param order lower than the tool-calling advisor's
     */
    public SandboxConversationAdvisor(int order) {
        this.order = order;
    }

    /**
     * Copies the conversation id parameter into the request's tool context, unless the context has one; without
     * the parameter, marks an empty tool context (see the class description).
     *
     * @param request the request
     * @param chain   the chain
     * @return the request, with the id (or the mark) in its tool context
     */
    @Override
    public ChatClientRequest before(ChatClientRequest request, AdvisorChain chain) {
        Object id = request.context().get(ChatMemory.CONVERSATION_ID);
        Prompt prompt = request.prompt();
        if (!(prompt.getOptions() instanceof ToolCallingChatOptions options)) {
            return request;
        }
        Map<String, Object> context = options.getToolContext();
        boolean empty = context == null || context.isEmpty();
        ChatOptions advised;
        if (id != null && (empty || !context.containsKey(ChatMemory.CONVERSATION_ID))) {
            advised = options.mutate().toolContext(ChatMemory.CONVERSATION_ID, id).build();
        } else if (empty) {
            advised = options.mutate().toolContext(ADVISED, Boolean.TRUE).build();
        } else {
            return request;
        }
        return request.mutate().prompt(prompt.mutate().chatOptions(advised).build()).build();
    }

    /**
     * Returns the response unchanged.
     *
     * @param response the response
     * @param chain    the chain
     * @return the response
     */
    @Override
    public ChatClientResponse after(ChatClientResponse response, AdvisorChain chain) {
        return response;
    }

    /**
     * The advisor's place in the chain.
     *
     * @return the order given at construction
     */
    @Override
    public int getOrder() {
        return order;
    }
}
