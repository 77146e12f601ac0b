package dev.sandboxkit.spring.ai;

import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spring.ai.internal.TextResultConverter;
import dev.sandboxkit.tools.SandboxTools;
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.tool.annotation.Tool;
import org.springframework.ai.tool.annotation.ToolParam;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The sandbox tools as {@code @Tool} methods, for applications that register tool objects:
 * {@code ChatClient.prompt().tools(new SandboxToolMethods(tools))} or
 * {@code MethodToolCallbackProvider.builder().toolObjects(...)}. Every method delegates to the same
 * {@link SandboxTools} set as {@link SandboxToolCallbackProvider}, with the same tool and argument names, and
 * finds its conversation the same way (see {@link SandboxToolContext}).
 *
 * <p>Prefer {@link SandboxToolCallbackProvider} where you can. Annotations are fixed at compile time, so this
 * class always declares all six tools, with descriptions that cannot state the set's configured limits; a tool
 * the set does not offer (read-only sets, allow-lists) answers the model that it is not available. Spring AI
 * refuses to call a method that takes a {@link ToolContext} when the context is empty: register a
 * {@link SandboxConversationAdvisor} (the Spring Boot starter does), which keeps it from being empty, so that a
 * call without a conversation id gets the default conversation, or, without one, says what is missing.
 *
 * <p><b>Failures.</b> The model's mistakes come back as the tool's answer, as with the provider. Spring AI wraps
 * whatever a {@code @Tool} method throws and, by default, shows its message to the model: register a
 * {@link SandboxToolExceptionProcessor} (the Spring Boot starter does) so that operator failures reach the caller.
 *
 * <p>Arguments are named as the model sees them ({@code old_string}, not {@code oldString}): the tools' answers
 * refer to them by those names. Thread-safe.
 */
public final class SandboxToolMethods {
    private static final String WS = SandboxSpec.WORKSPACE;
    private static final String PATH_RULE = "Paths are relative to " + WS + " (absolute paths must be inside it).";
    private static final String PATH_ARG = " Relative to " + WS + ", or absolute inside it.";

    static final String RUN_COMMAND = "Runs a shell command (/bin/sh -c) in your sandbox, a Linux container, and "
            + "returns its exit code, stdout and stderr. Commands run in " + WS + " unless `workdir` names another "
            + "directory inside it. Each call starts a fresh shell: `cd` and `export` do not carry over, so chain "
            + "commands with `&&`. Files in " + WS + " persist between calls; everything else may be reset. A command "
            + "is killed after `timeout_seconds` (the application sets the default and the maximum); redirect the "
            + "output of long jobs to a file. Long output is cut in the middle.";
    static final String READ_FILE = "Reads a text file. " + PATH_RULE + " Returns the whole file, or lines "
            + "`start_line` to `end_line` (1-based, inclusive). A call returns a limited amount: read long files in "
            + "ranges. Binary files are not shown. Symbolic links are not followed.";
    static final String WRITE_FILE = "Creates a file, or replaces a file's whole content, with `content`; missing "
            + "parent directories are created. " + PATH_RULE + " For a small change to an existing file, use edit_file.";
    static final String EDIT_FILE = "Edits a text file by replacing `old_string` with `new_string`. `old_string` must "
            + "match the file exactly, whitespace and indentation included, and occur exactly once unless "
            + "`replace_all` is true: include enough surrounding lines to make it unique. Read the file first. "
            + PATH_RULE;
    static final String LIST_FILES = "Lists a directory. " + PATH_RULE + " Directories end with '/', symbolic links "
            + "show their target, files their size. With `recursive`, subdirectories are listed too, up to "
            + "`max_depth` levels; .git and node_modules are not expanded.";
    static final String SEARCH_FILES = "Searches the contents of text files for a regular expression (Java syntax) and "
            + "returns the matching lines as `path:line: text`. " + PATH_RULE + " `glob` limits which files are "
            + "searched, for example `*.py` or `src/**/*.java`. Binary files, very large files, .git and node_modules "
            + "are skipped. Returns at most `max_results` matches.";

    private final SandboxTools tools;
    private final Conversations conversations;

    /**
     * Tool methods on a tool set; every call must name its conversation.
     *
     * @param tools the tool set; not closed by this object
     */
    public SandboxToolMethods(SandboxTools tools) {
        this.tools = Objects.requireNonNull(tools, "tools");
        this.conversations = new Conversations(null);
    }

    /**
     * Tool methods on a tool set, with the conversations of a provider (its default conversation, if any).
     *
     * @param provider the provider whose tool set and default conversation to use
     */
    public SandboxToolMethods(SandboxToolCallbackProvider provider) {
        this.tools = provider.tools();
        this.conversations = new Conversations(provider.defaultConversation());
    }

    /**
     * {@code run_command}.
     *
     * @param command         the shell command
     * @param timeout_seconds optional timeout
     * @param workdir         optional working directory
     * @param toolContext     names the conversation
     * @return the tool's answer
     */
    @Tool(name = "run_command", description = RUN_COMMAND, resultConverter = TextResultConverter.class)
    public String runCommand(
            @ToolParam(description = "The shell command to run.") String command,
            @ToolParam(required = false, description = "Kill the command after this many seconds.") Integer timeout_seconds,
            @ToolParam(required = false, description = "Directory to run in, inside " + WS
                    + " (relative to it or absolute). Default: " + WS + ".") String workdir,
            ToolContext toolContext) {
        return call("run_command", toolContext, "command", command, "timeout_seconds", timeout_seconds,
                "workdir", workdir);
    }

    /**
     * {@code read_file}.
     *
     * @param path        the file
     * @param start_line  optional first line
     * @param end_line    optional last line
     * @param toolContext names the conversation
     * @return the tool's answer
     */
    @Tool(name = "read_file", description = READ_FILE, resultConverter = TextResultConverter.class)
    public String readFile(
            @ToolParam(description = "The file to read." + PATH_ARG) String path,
            @ToolParam(required = false, description = "First line to return (1-based). Default: 1.") Integer start_line,
            @ToolParam(required = false, description = "Last line to return (inclusive). Default: the end of the file.")
            Integer end_line,
            ToolContext toolContext) {
        return call("read_file", toolContext, "path", path, "start_line", start_line, "end_line", end_line);
    }

    /**
     * {@code write_file}.
     *
     * @param path        the file
     * @param content     its new content
     * @param toolContext names the conversation
     * @return the tool's answer
     */
    @Tool(name = "write_file", description = WRITE_FILE, resultConverter = TextResultConverter.class)
    public String writeFile(
            @ToolParam(description = "The file to write." + PATH_ARG) String path,
            @ToolParam(description = "The complete new content of the file.") String content,
            ToolContext toolContext) {
        return call("write_file", toolContext, "path", path, "content", content);
    }

    /**
     * {@code edit_file}.
     *
     * @param path        the file
     * @param old_string  the exact text to replace
     * @param new_string  its replacement
     * @param replace_all optional: replace every occurrence
     * @param toolContext names the conversation
     * @return the tool's answer
     */
    @Tool(name = "edit_file", description = EDIT_FILE, resultConverter = TextResultConverter.class)
    public String editFile(
            @ToolParam(description = "The file to edit." + PATH_ARG) String path,
            @ToolParam(description = "The exact text to replace.") String old_string,
            @ToolParam(description = "The text to put in its place.") String new_string,
            @ToolParam(required = false, description = "Replace every occurrence instead of requiring exactly one. "
                    + "Default: false.") Boolean replace_all,
            ToolContext toolContext) {
        return call("edit_file", toolContext, "path", path, "old_string", old_string, "new_string", new_string,
                "replace_all", replace_all);
    }

    /**
     * {@code list_files}.
     *
     * @param path        optional directory
     * @param recursive   optional: list subdirectories too
     * @param max_depth   optional depth
     * @param toolContext names the conversation
     * @return the tool's answer
     */
    @Tool(name = "list_files", description = LIST_FILES, resultConverter = TextResultConverter.class)
    public String listFiles(
            @ToolParam(required = false, description = "The directory to list. Default: " + WS + "." + PATH_ARG)
            String path,
            @ToolParam(required = false, description = "List subdirectories too. Default: false.") Boolean recursive,
            @ToolParam(required = false, description = "How many levels to descend when recursive.") Integer max_depth,
            ToolContext toolContext) {
        return call("list_files", toolContext, "path", path, "recursive", recursive, "max_depth", max_depth);
    }

    /**
     * {@code search_files}.
     *
     * @param pattern     the regular expression (or text)
     * @param path        optional directory or file
     * @param glob        optional file filter
     * @param ignore_case optional: case-insensitive
     * @param literal     optional: plain text, not a regular expression
     * @param max_results optional limit
     * @param toolContext names the conversation
     * @return the tool's answer
     */
    @Tool(name = "search_files", description = SEARCH_FILES, resultConverter = TextResultConverter.class)
    public String searchFiles(
            @ToolParam(description = "The regular expression to find (or plain text, with `literal`).") String pattern,
            @ToolParam(required = false, description = "The directory (or file) to search. Default: " + WS + "."
                    + PATH_ARG) String path,
            @ToolParam(required = false, description = "Only search files whose path relative to the searched "
                    + "directory matches this glob, for example `*.md` or `src/**/*.ts`.") String glob,
            @ToolParam(required = false, description = "Match case-insensitively. Default: false.") Boolean ignore_case,
            @ToolParam(required = false, description = "Treat `pattern` as plain text, not a regular expression. "
                    + "Default: false.") Boolean literal,
            @ToolParam(required = false, description = "Stop after this many matching lines.") Integer max_results,
            ToolContext toolContext) {
        return call("search_files", toolContext, "pattern", pattern, "path", path, "glob", glob,
                "ignore_case", ignore_case, "literal", literal, "max_results", max_results);
    }

    /**
     * The tool set the methods run.
     *
     * @return the tool set
     */
    public SandboxTools tools() {
        return tools;
    }

    private String call(String toolName, ToolContext toolContext, Object... namesAndValues) {
        Object conversation = conversations.of(toolContext, toolName);
        Map<String, Object> args = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            if (namesAndValues[i + 1] != null) { // absent and null are the same to the tools
                args.put((String) namesAndValues[i], namesAndValues[i + 1]);
            }
        }
        return tools.execute(conversation, toolName, args).text();
    }
}
