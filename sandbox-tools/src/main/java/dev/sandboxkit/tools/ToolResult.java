package dev.sandboxkit.tools;

import java.util.Objects;

/**
 * What a tool call answers the model: text written for the model to read.
 *
 * <p>{@code error} marks a call the model should correct or retry differently: a bad path, a missing file, an
 * {@code edit_file} string that is not unique, invalid arguments. A command that exits non-zero or times out
 * is not an error: that is an ordinary result the model reads. Failures an operator must fix (the engine is
 * down, the store fails) are never results: {@link SandboxTools#execute} throws them as the library's typed
 * exceptions.
 *
 * @param text  the answer, never {@code null}
 * @param error whether the call failed in a way the model can act on
 */
public record ToolResult(String text, boolean error) {

    /** Validates. */
    public ToolResult {
        Objects.requireNonNull(text, "text");
    }

    /**
     * A successful result.
     *
     * @param text the answer
     * @return the result
     */
    public static ToolResult ok(String text) {
        return new ToolResult(text, false);
    }

    /**
     * A failed call, explained for the model.
     *
     * @param text what went wrong and what to do instead
     * @return the result
     */
    public static ToolResult error(String text) {
        return new ToolResult(text, true);
    }
}
