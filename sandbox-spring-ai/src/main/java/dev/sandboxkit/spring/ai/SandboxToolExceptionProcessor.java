package dev.sandboxkit.spring.ai;

import dev.sandboxkit.SandboxException;
import org.springframework.ai.tool.execution.DefaultToolExecutionExceptionProcessor;
import org.springframework.ai.tool.execution.ToolExecutionException;
import org.springframework.ai.tool.execution.ToolExecutionExceptionProcessor;

import java.util.Objects;

/**
 * Lets sandboxkit's operator failures reach the caller when tools are {@code @Tool} methods. Spring AI wraps
 * whatever a {@code @Tool} method throws in a {@link ToolExecutionException}, and its default processor turns
 * that into text for the model; for a {@link SandboxException} (engine down, image missing, store failing, no
 * conversation id) the model can do nothing, and the caller would never learn of it. This processor rethrows
 * such a cause, unwrapped, and hands every other failure to the processor it decorates.
 *
 * <p>Not needed for {@link SandboxToolCallbackProvider}'s callbacks, whose exceptions Spring AI never catches.
 * With Spring Boot, the starter decorates the application's processor bean. Without it:
 *
 * <pre>{@code
 * ToolCallingManager manager = ToolCallingManager.builder()
 *         .toolExecutionExceptionProcessor(new SandboxToolExceptionProcessor())
 *         .build();
 * ChatClient chat = ChatClient.builder(model)
 *         .defaultAdvisors(ToolCallingAdvisor.builder().toolCallingManager(manager).build())
 *         .build();
 * }</pre>
 *
 * <p>Thread-safe if the decorated processor is.
 */
public final class SandboxToolExceptionProcessor implements ToolExecutionExceptionProcessor {
    private final ToolExecutionExceptionProcessor delegate;

    /** Decorates Spring AI's default processor (failures other than sandboxkit's go to the model). */
    public SandboxToolExceptionProcessor() {
        this(DefaultToolExecutionExceptionProcessor.builder().build());
    }

    /**
     * Decorates a processor.
     *
     * @param delegate what handles failures other than sandboxkit's
     */
    public SandboxToolExceptionProcessor(ToolExecutionExceptionProcessor delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /**
     * Rethrows a {@link SandboxException} cause; otherwise asks the decorated processor.
     *
     * @param exception what the tool threw, wrapped by Spring AI
     * @return the decorated processor's answer for the model
     * @throws SandboxException the cause, if it is one
     */
    @Override
    public String process(ToolExecutionException exception) {
        if (exception.getCause() instanceof SandboxException operatorFailure) {
            throw operatorFailure;
        }
        return delegate.process(exception);
    }

    /**
     * The decorated processor.
     *
     * @return the processor failures other than sandboxkit's go to
     */
    public ToolExecutionExceptionProcessor delegate() {
        return delegate;
    }
}
