package dev.sandboxkit.spring.boot.internal;

import dev.sandboxkit.spring.ai.SandboxToolExceptionProcessor;
import org.springframework.ai.tool.execution.ToolExecutionExceptionProcessor;
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * Wraps every {@link ToolExecutionExceptionProcessor} bean (Spring AI's, or the application's) in a
 * {@link SandboxToolExceptionProcessor}, so that sandboxkit's operator failures thrown by {@code @Tool} methods
 * reach the caller; everything else is still decided by the wrapped processor.
 */
public final class ExceptionProcessorDecorator implements BeanPostProcessor {

    /** Created by the auto-configuration. */
    public ExceptionProcessorDecorator() {
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof ToolExecutionExceptionProcessor processor && !(bean instanceof SandboxToolExceptionProcessor)) {
            return new SandboxToolExceptionProcessor(processor);
        }
        return bean;
    }
}
