package dev.sandboxkit.langchain4j;

/**
 * A tool's answer to a call the model can fix (a missing file, a bad argument), thrown by the {@code @Tool}
 * methods: LangChain4j marks a result as an error only when the method throws. No stack trace: it is an answer, not
 * a fault.
 */
final class ToolRefusal extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ToolRefusal(String answer) {
        super(answer, null, false, false);
    }
}
