package dev.sandboxkit.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.service.tool.ToolErrorHandlerResult;
import dev.langchain4j.service.tool.ToolExecutionErrorHandler;
import dev.langchain4j.service.tool.ToolExecutionResult;
import dev.langchain4j.service.tool.ToolExecutor;
import dev.langchain4j.service.tool.ToolProvider;
import dev.langchain4j.service.tool.ToolProviderRequest;
import dev.langchain4j.service.tool.ToolProviderResult;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.tools.SandboxTools;
import dev.sandboxkit.tools.ToolDefinition;
import dev.sandboxkit.tools.ToolParameter;
import dev.sandboxkit.tools.ToolResult;

import java.util.List;
import java.util.Objects;

/**
 * A LangChain4j {@link ToolProvider} that gives every chat memory its own sandbox: the memory id (the
 * {@code @MemoryId} argument of the AI service method, {@code "default"} without one) is the conversation, which
 * {@link SandboxTools} maps to a session whose workspace persists across calls and idle reaps.
 *
 * <pre>{@code
 * SandboxToolProvider tools = SandboxToolProvider.of(SandboxTools.builder(manager).spec(spec).build());
 * Assistant assistant = AiServices.builder(Assistant.class)
 *         .chatModel(model)
 *         .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(50))
 *         .toolProvider(tools)
 *         .toolExecutionErrorHandler(tools.errorHandler())   // engine failures reach the caller
 *         .build();
 * }</pre>
 *
 * <p>Results the model can act on (a missing file, a non-unique {@code edit_file} string) are returned as
 * error results ({@link ToolExecutionResult#isError()}), so LangChain4j hands them to the model without logging.
 * Failures only an operator can fix (the engine is down, the image is missing, the session store fails) are thrown
 * to LangChain4j as one clean line for the model, what failed and what the operator has to do, without a stack
 * trace: by default LangChain4j returns that line to the model as an error result and logs it once (the original
 * exception, with its trace, is logged at debug under {@code dev.sandboxkit.langchain4j}). With
 * {@link #errorHandler()}, the original {@link SandboxException} is rethrown to the caller of the AI service method
 * instead.
 *
 * <p>Immutable and thread-safe. Executors run on the thread LangChain4j calls them on (the caller's, or the
 * executor given to {@code executeToolsConcurrently}).
 */
public final class SandboxToolProvider implements ToolProvider {
    /** The conversation used when LangChain4j passes no memory id: the same one LangChain4j itself uses. */
    static final String DEFAULT_MEMORY_ID = "default";

    private final SandboxTools tools;
    private final ToolProviderResult result;

    private SandboxToolProvider(SandboxTools tools) {
        this.tools = tools;
        ToolProviderResult.Builder b = ToolProviderResult.builder();
        for (ToolDefinition d : tools.definitions()) {
            b.add(specification(d), new Executor(tools, d.name()));
        }
        this.result = b.build();
    }

    /**
     * A provider offering the tool set's tools (its allow-list and read-only mode apply).
     *
     * @param tools the tool set
     * @return the provider
     */
    public static SandboxToolProvider of(SandboxTools tools) {
        return new SandboxToolProvider(Objects.requireNonNull(tools, "tools"));
    }

    /**
     * The same tools for every request; the memory id reaches the executors with each call.
     *
     * @param request LangChain4j's request, called once per AI service invocation
     * @return the tools
     */
    @Override
    public ToolProviderResult provideTools(ToolProviderRequest request) {
        return result;
    }

    /**
     * The tool set behind this provider, for the system prompt ({@link SandboxTools#instructions()}) and for the
     * application's own access to a conversation's sandbox.
     *
     * @return the tool set
     */
    public SandboxTools tools() {
        return tools;
    }

    /**
     * An error handler for {@code AiServices.builder(..).toolExecutionErrorHandler(..)} that rethrows
     * {@link SandboxException}s (engine unreachable, store failing, image missing) to the caller of the AI
     * service method, from this provider's tools and from {@link SandboxAgentTools}, and passes every other failure
     * to the model as an error result, as LangChain4j does by default but without logging it. After a rethrow, the
     * chat memory ends with a tool call that has no result; evict or repair it before the next turn.
     *
     * @return the handler, called on the thread that ran the tool
     */
    public ToolExecutionErrorHandler errorHandler() {
        return (error, context) -> {
            // rawError is what the executor threw (a @Tool method's exception wrapped by LangChain4j); the first
            // argument is its cause when it has one.
            Throwable t = context.rawError();
            for (int depth = 0; t != null && depth < 10; t = t.getCause(), depth++) {
                if (t instanceof OperatorFailure f) {
                    throw f.original();
                }
                if (t instanceof SandboxException e) {
                    throw e;
                }
            }
            String message = error == null ? null : error.getMessage();
            return ToolErrorHandlerResult.text(message == null || message.isBlank()
                    ? (error == null ? "unknown error" : error.getClass().getName()) : message);
        };
    }

    /** The LangChain4j form of a tool definition: same name, description and argument schema. */
    static ToolSpecification specification(ToolDefinition d) {
        JsonObjectSchema.Builder schema = JsonObjectSchema.builder();
        for (ToolParameter p : d.parameters()) {
            switch (p.type()) {
                case STRING -> schema.addStringProperty(p.name(), p.description());
                case INTEGER -> schema.addIntegerProperty(p.name(), p.description());
                case BOOLEAN -> schema.addBooleanProperty(p.name(), p.description());
            }
        }
        List<String> required = d.parameters().stream().filter(ToolParameter::required).map(ToolParameter::name).toList();
        return ToolSpecification.builder().name(d.name()).description(d.description())
                .parameters(schema.required(required).additionalProperties(false).build()).build();
    }

    /** Runs one tool for the memory id of the call. */
    private static final class Executor implements ToolExecutor {
        private final SandboxTools tools;
        private final String name;

        Executor(SandboxTools tools, String name) {
            this.tools = tools;
            this.name = name;
        }

        @Override
        public ToolExecutionResult executeWithContext(ToolExecutionRequest request, InvocationContext context) {
            ToolResult r = run(request, context == null ? null : context.chatMemoryId());
            return ToolExecutionResult.builder().isError(r.error()).resultText(r.text()).build();
        }

        @Override
        public String execute(ToolExecutionRequest request, Object memoryId) {
            return run(request, memoryId).text();
        }

        private ToolResult run(ToolExecutionRequest request, Object memoryId) {
            try {
                return tools.execute(memoryId == null ? DEFAULT_MEMORY_ID : memoryId, name, request.arguments());
            } catch (SandboxException e) {
                throw OperatorFailure.of(name, e);
            }
        }
    }
}
