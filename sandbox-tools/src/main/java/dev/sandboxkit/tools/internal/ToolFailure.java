package dev.sandboxkit.tools.internal;

/** A call the model got wrong: its message is the tool's answer, and the model can act on it. */
final class ToolFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ToolFailure(String message) {
        super(message, null, false, false);
    }
}
