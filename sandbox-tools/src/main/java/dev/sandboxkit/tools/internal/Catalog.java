package dev.sandboxkit.tools.internal;

import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.tools.SandboxTool;
import dev.sandboxkit.tools.ToolDefinition;
import dev.sandboxkit.tools.ToolParameter;
import dev.sandboxkit.tools.ToolParameter.Type;

import java.util.List;

/** The tools' descriptions and arguments, written for a model. Limits are stated as the set was configured. */
public final class Catalog {
    static final int MAX_LIST_DEPTH = 10;
    static final int DEFAULT_LIST_DEPTH = 3;
    static final int DEFAULT_SEARCH_RESULTS = 100;
    private static final String WS = SandboxSpec.WORKSPACE;
    private static final String PATH_RULE = "Paths are relative to " + WS + " (absolute paths must be inside it).";

    private Catalog() {
    }

    /**
     * The definition of one tool under the given settings.
     *
     * @param tool     the tool
     * @param settings the set's settings
     * @return its definition
     */
    public static ToolDefinition definition(SandboxTool tool, ToolSettings settings) {
        return switch (tool) {
            case RUN_COMMAND -> new ToolDefinition(tool,
                    "Runs a shell command (/bin/sh -c) in your sandbox, a Linux container, and returns its exit code, "
                            + "stdout and stderr. Commands run in " + WS + " unless `workdir` names another directory "
                            + "inside it. Each call starts a fresh shell: `cd` and `export` do not carry over, so chain "
                            + "commands with `&&`. Files in " + WS + " persist between calls; everything else may be "
                            + "reset. A command is killed after `timeout_seconds` (default "
                            + settings.defaultTimeout().toSeconds() + ", at most " + settings.maxTimeout().toSeconds()
                            + "); redirect the output of long jobs to a file. Output over "
                            + Text.count(settings.outputLimit()) + " bytes per stream is cut in the middle.",
                    List.of(new ToolParameter("command", Type.STRING, "The shell command to run.", true),
                            new ToolParameter("timeout_seconds", Type.INTEGER, "Kill the command after this many seconds "
                                    + "(default " + settings.defaultTimeout().toSeconds() + ", at most "
                                    + settings.maxTimeout().toSeconds() + ").", false),
                            new ToolParameter("workdir", Type.STRING, "Directory to run in, inside " + WS
                                    + " (relative to it or absolute). Default: " + WS + ".", false)));
            case READ_FILE -> new ToolDefinition(tool,
                    "Reads a text file. " + PATH_RULE + " Returns the whole file, or lines `start_line` to "
                            + "`end_line` (1-based, inclusive). One call returns at most " + Text.size(settings.readLimit())
                            + ": read longer files in ranges. Binary files are not shown. Symbolic links are not followed.",
                    List.of(path("The file to read.", true),
                            new ToolParameter("start_line", Type.INTEGER, "First line to return (1-based). Default: 1.", false),
                            new ToolParameter("end_line", Type.INTEGER, "Last line to return (inclusive). Default: the end "
                                    + "of the file.", false)));
            case WRITE_FILE -> new ToolDefinition(tool,
                    "Creates a file, or replaces a file's whole content, with `content`; missing parent directories "
                            + "are created. " + PATH_RULE + " For a small change to an existing file, use edit_file. "
                            + "At most " + Text.size(settings.writeLimit()) + " per call.",
                    List.of(path("The file to write.", true),
                            new ToolParameter("content", Type.STRING, "The complete new content of the file.", true)));
            case EDIT_FILE -> new ToolDefinition(tool,
                    "Edits a text file by replacing `old_string` with `new_string`. `old_string` must match the file "
                            + "exactly, whitespace and indentation included, and occur exactly once unless `replace_all` "
                            + "is true: include enough surrounding lines to make it unique. Read the file first. "
                            + PATH_RULE,
                    List.of(path("The file to edit.", true),
                            new ToolParameter("old_string", Type.STRING, "The exact text to replace.", true),
                            new ToolParameter("new_string", Type.STRING, "The text to put in its place.", true),
                            new ToolParameter("replace_all", Type.BOOLEAN, "Replace every occurrence instead of "
                                    + "requiring exactly one. Default: false.", false)));
            case LIST_FILES -> new ToolDefinition(tool,
                    "Lists a directory. " + PATH_RULE + " Directories end with '/', symbolic links show their target, "
                            + "files their size. With `recursive`, subdirectories are listed too, up to `max_depth` "
                            + "levels (default " + DEFAULT_LIST_DEPTH + ", at most " + MAX_LIST_DEPTH + "); .git and "
                            + "node_modules are not expanded. At most " + Text.count(settings.listLimit()) + " entries.",
                    List.of(path("The directory to list. Default: " + WS + ".", false),
                            new ToolParameter("recursive", Type.BOOLEAN, "List subdirectories too. Default: false.", false),
                            new ToolParameter("max_depth", Type.INTEGER, "How many levels to descend when recursive "
                                    + "(default " + DEFAULT_LIST_DEPTH + ", at most " + MAX_LIST_DEPTH + ").", false)));
            case SEARCH_FILES -> new ToolDefinition(tool,
                    "Searches the contents of text files for a regular expression (Java syntax) and returns the matching "
                            + "lines as `path:line: text`. " + PATH_RULE + " `glob` limits which files are searched, for "
                            + "example `*.py` or `src/**/*.java`. Binary files, files over " + Text.size(FileTools.SEARCH_FILE_LIMIT)
                            + ", .git and node_modules are skipped. Returns at most `max_results` matches (default "
                            + DEFAULT_SEARCH_RESULTS + ", at most " + settings.searchLimit() + ").",
                    List.of(new ToolParameter("pattern", Type.STRING, "The regular expression to find (or plain text, "
                                    + "with `literal`).", true),
                            path("The directory (or file) to search. Default: " + WS + ".", false),
                            new ToolParameter("glob", Type.STRING, "Only search files whose path relative to the searched "
                                    + "directory matches this glob, for example `*.md` or `src/**/*.ts`.", false),
                            new ToolParameter("ignore_case", Type.BOOLEAN, "Match case-insensitively. Default: false.", false),
                            new ToolParameter("literal", Type.BOOLEAN, "Treat `pattern` as plain text, not a regular "
                                    + "expression. Default: false.", false),
                            new ToolParameter("max_results", Type.INTEGER, "Stop after this many matching lines (default "
                                    + DEFAULT_SEARCH_RESULTS + ").", false)));
        };
    }

    private static ToolParameter path(String what, boolean required) {
        return new ToolParameter("path", Type.STRING, what + " Relative to " + WS + ", or absolute inside it.", required);
    }
}
