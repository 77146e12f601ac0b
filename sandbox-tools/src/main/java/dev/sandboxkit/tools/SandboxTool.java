package dev.sandboxkit.tools;

import java.util.Optional;

/**
 * The tools a {@link SandboxTools} set can offer a model. Each has a fixed name, the one the model calls.
 */
public enum SandboxTool {
    /** Runs a shell command in the conversation's sandbox. */
    RUN_COMMAND("run_command", true),
    /** Reads a text file, or a range of its lines. */
    READ_FILE("read_file", false),
    /** Creates or replaces a file, creating parent directories. */
    WRITE_FILE("write_file", true),
    /** Replaces one exact, unique string in a file. */
    EDIT_FILE("edit_file", true),
    /** Lists a directory, optionally recursively. */
    LIST_FILES("list_files", false),
    /** Searches file contents for a regular expression. */
    SEARCH_FILES("search_files", false);

    private final String toolName;
    private final boolean changesWorkspace;

    SandboxTool(String toolName, boolean changesWorkspace) {
        this.toolName = toolName;
        this.changesWorkspace = changesWorkspace;
    }

    /**
     * The name the model calls, for example {@code run_command}.
     *
     * @return the tool's name
     */
    public String toolName() {
        return toolName;
    }

    /**
     * Whether the tool can change the workspace (or run arbitrary code, which can). Read-only tool sets
     * offer only the tools for which this is {@code false}.
     *
     * @return {@code true} for {@code run_command}, {@code write_file} and {@code edit_file}
     */
    public boolean changesWorkspace() {
        return changesWorkspace;
    }

    /**
     * Finds a tool by the name the model uses.
     *
     * @param toolName for example {@code read_file}
     * @return the tool, or empty if no tool has that name
     */
    public static Optional<SandboxTool> byName(String toolName) {
        for (SandboxTool t : values()) {
            if (t.toolName.equals(toolName)) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }
}
