package dev.sandboxkit.spring.ai;

import dev.sandboxkit.tools.SandboxTools;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.ToolCallbackProvider;

import java.util.List;
import java.util.Objects;

/**
 * The sandbox tools ({@code run_command}, {@code read_file}, {@code write_file}, {@code edit_file},
 * {@code list_files}, {@code search_files}, or the subset the {@link SandboxTools} set offers) as Spring AI
 * tool callbacks, with the descriptions and JSON schemas of {@code sandbox-tools}.
 *
 * <pre>{@code
 * SandboxToolCallbackProvider sandbox = SandboxToolCallbackProvider.of(SandboxTools.builder(manager).spec(spec).build());
 * ChatClient chat = ChatClient.builder(model).defaultAdvisors(new SandboxConversationAdvisor()).build();
 * chat.prompt().user("Count the lines of notes.txt").tools(sandbox)
 *         .advisors(a -> a.param(ChatMemory.CONVERSATION_ID, "chat-42"))
 *         .call().content();
 * }</pre>
 *
 * <p><b>Conversations.</b> Each call's conversation comes from its {@link org.springframework.ai.chat.model.ToolContext}
 * (see {@link SandboxToolContext}) and is mapped to its own sandbox session. A call whose context names no
 * conversation throws a {@link dev.sandboxkit.SandboxConfigurationException} to the caller, unless the provider
 * was built with a {@linkplain Builder#defaultConversation(String) default conversation}.
 *
 * <p><b>Failures.</b> What the model can fix (a missing file, a bad path, invalid arguments, a command that
 * exits non-zero) is returned as the tool's answer, so the model reads it and can try again, whatever the
 * application's {@code ToolExecutionExceptionProcessor} does. What only an operator can fix (the engine is
 * down, the image is missing, the session store fails, no conversation id) is thrown as the library's
 * {@link dev.sandboxkit.SandboxException}s: Spring AI's tool loop does not catch them, so they end the
 * {@code call()} and reach the caller, and the model is not asked again.
 *
 * <p>Immutable and thread-safe.
 */
public final class SandboxToolCallbackProvider implements ToolCallbackProvider {
    private final SandboxTools tools;
    private final String defaultConversation;
    private final List<ToolCallback> callbacks;

    private SandboxToolCallbackProvider(SandboxTools tools, String defaultConversation) {
        this.tools = tools;
        this.defaultConversation = defaultConversation;
        Conversations conversations = new Conversations(defaultConversation);
        this.callbacks = tools.definitions().stream()
                .<ToolCallback>map(d -> new SandboxToolCallback(tools, conversations, d)).toList();
    }

    /**
     * A provider for a tool set, with no default conversation: every call must name its conversation.
     *
     * @param tools the tool set; not closed by the provider
     * @return the provider
     */
    public static SandboxToolCallbackProvider of(SandboxTools tools) {
        return builder(tools).build();
    }

    /**
     * Starts configuring a provider for a tool set.
     *
     * @param tools the tool set; not closed by the provider
     * @return a builder
     */
    public static Builder builder(SandboxTools tools) {
        return new Builder(tools);
    }

    /**
     * One callback per tool the set offers, in the set's order.
     *
     * @return a new array of the callbacks
     */
    @Override
    public ToolCallback[] getToolCallbacks() {
        return callbacks.toArray(new ToolCallback[0]);
    }

    /**
     * The tool set the callbacks run, for the application: {@link SandboxTools#instructions()} for the system
     * prompt, {@link SandboxTools#sandbox(Object)} to put input files in and take results out.
     *
     * @return the tool set
     */
    public SandboxTools tools() {
        return tools;
    }

    /**
     * The conversation used when a call's tool context names none.
     *
     * @return the default conversation, or {@code null} if such calls fail
     */
    public String defaultConversation() {
        return defaultConversation;
    }

    /** Builds a {@link SandboxToolCallbackProvider}. Each option may be set once. Not thread-safe. */
    public static final class Builder {
        private final SandboxTools tools;
        private String defaultConversation;

        private Builder(SandboxTools tools) {
            this.tools = Objects.requireNonNull(tools, "tools");
        }

        /**
         * The conversation for calls whose tool context names none. Only for applications with a single user
         * (a command-line agent, a batch job): every such call, from any user, shares this conversation's
         * workspace. Default: none, such calls throw a {@link dev.sandboxkit.SandboxConfigurationException}.
         *
         * @param conversationId the conversation, not blank
         * @return this builder
         */
        public Builder defaultConversation(String conversationId) {
            if (defaultConversation != null) {
                throw new IllegalStateException("defaultConversation was already set");
            }
            Objects.requireNonNull(conversationId, "conversationId");
            if (conversationId.isBlank()) {
                throw new IllegalArgumentException("defaultConversation must not be blank");
            }
            this.defaultConversation = conversationId;
            return this;
        }

        /**
         * Builds the provider.
         *
         * @return the immutable provider
         */
        public SandboxToolCallbackProvider build() {
            return new SandboxToolCallbackProvider(tools, defaultConversation);
        }
    }
}
