package dev.sandboxkit.spring.ai.internal;

import org.springframework.ai.tool.execution.ToolCallResultConverter;

import java.lang.reflect.Type;

/**
 * Passes a {@code @Tool} method's text through as it is. Spring AI's default converter writes a String as a JSON
 * string, so the model would read {@code "exit code: 0\nhello\n"} with escaped newlines instead of the output.
 * Public only because Spring AI instantiates it by reflection.
 */
public final class TextResultConverter implements ToolCallResultConverter {

    /** Called by Spring AI. */
    public TextResultConverter() {
    }

    /**
     * Returns the text unchanged.
     *
     * @param result     the method's String result
     * @param returnType {@code String}
     * @return the text; empty for {@code null}
     */
    @Override
    public String convert(Object result, Type returnType) {
        return result == null ? "" : result.toString();
    }
}
