package dev.sandboxkit.langchain4j;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.agent.tool.ToolMemoryId;
import dev.langchain4j.agent.tool.ToolSpecifications;
import dev.langchain4j.service.tool.AiServiceTool;
import dev.langchain4j.service.tool.DefaultToolExecutor;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.tools.SandboxTool;
import dev.sandboxkit.tools.SandboxTools;
import dev.sandboxkit.tools.ToolDefinition;
import dev.sandboxkit.tools.ToolResult;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The sandbox tools as {@code @Tool} methods, for applications that register tool objects. Each method runs in the
 * sandbox of the chat memory that called it ({@link ToolMemoryId}; {@code "default"} without a {@code @MemoryId}).
 *
 * <pre>{@code
 * AiServices.builder(Assistant.class).tools(new SandboxAgentTools(tools))   // a set with all six tools
 * AiServices.builder(Assistant.class).tools(SandboxAgentTools.of(tools))    // any set: only its tools are declared
 * }</pre>
 *
 * <p>LangChain4j declares every {@code @Tool} method of an object to the model, so an object of this class always
 * offers all six tools: the constructor refuses a set that offers fewer (an allow-list, a read-only set), and
 * {@link #of(SandboxTools)} declares exactly the set's tools from these same methods. The descriptions are fixed
 * (annotation values must be constants), so they do not state the set's configured limits; {@link SandboxToolProvider}
 * does, and reports model-fixable failures without LangChain4j logging them: prefer it.
 *
 * <p><b>Failures.</b> LangChain4j marks a tool result as an error only when the method throws, so the methods throw
 * what the model can fix (a missing file, a bad argument) with the tool's answer as the message: the model gets it as
 * an error result. Failures only an operator can fix are thrown as one clean line for the model (what failed, what the
 * operator has to do), as with {@link SandboxToolProvider}. LangChain4j's default error handler logs each thrown
 * failure once, without a stack trace; {@link SandboxToolProvider#errorHandler()} passes the model's failures on
 * quietly and rethrows the operator's {@link SandboxException}s to the caller.
 *
 * <p>Thread-safe.
 */
public final class SandboxAgentTools {
    private final SandboxTools tools;

    /**
     * Tool methods on a tool set that offers all six tools.
     *
     * @param tools the tool set
     * @throws IllegalArgumentException if the set offers fewer tools (an allow-list, a read-only set): the model
     *                                  would be offered tools the set refuses; use {@link #of(SandboxTools)}
     */
    public SandboxAgentTools(SandboxTools tools) {
        this(tools, true);
    }

    private SandboxAgentTools(SandboxTools tools, boolean requireAllTools) {
        this.tools = Objects.requireNonNull(tools, "tools");
        Set<String> offered = offered(tools);
        if (requireAllTools && offered.size() < SandboxTool.values().length) {
            throw new IllegalArgumentException("This tool set offers only " + String.join(", ", offered) + ", but "
                    + "LangChain4j declares every @Tool method of a SandboxAgentTools object to the model. Register "
                    + "SandboxAgentTools.of(tools) instead (AiServices.builder(..).tools(SandboxAgentTools.of(tools))), "
                    + "which declares only the set's tools, or use SandboxToolProvider.");
        }
    }

    /**
     * The tools the set offers, made from this class's {@code @Tool} methods as LangChain4j makes them from a tool
     * object (same names, descriptions, arguments and memory id), but only those: for
     * {@code AiServices.builder(..).tools(SandboxAgentTools.of(tools))}. Register other tool objects with another
     * {@code tools(..)} call.
     *
     * @param tools the tool set
     * @return the set's tools, in {@link SandboxTool} order
     */
    public static List<AiServiceTool> of(SandboxTools tools) {
        SandboxAgentTools object = new SandboxAgentTools(tools, false);
        Set<String> offered = offered(tools);
        List<AiServiceTool> out = new ArrayList<>();
        for (Method m : SandboxAgentTools.class.getMethods()) {
            Tool tool = m.getAnnotation(Tool.class);
            if (tool != null && offered.contains(tool.name())) {
                // The executor LangChain4j itself builds for a tool object's method.
                out.add(AiServiceTool.builder()
                        .toolSpecification(ToolSpecifications.toolSpecificationFrom(m))
                        .toolExecutor(DefaultToolExecutor.builder().object(object).originalMethod(m).methodToInvoke(m)
                                .wrapToolArgumentsExceptions(true).propagateToolExecutionExceptions(true).build())
                        .returnBehavior(tool.returnBehavior())
                        .build());
            }
        }
        out.sort(Comparator.comparing(t -> SandboxTool.byName(t.name()).orElseThrow()));
        return List.copyOf(out);
    }

    private static Set<String> offered(SandboxTools tools) {
        return tools.definitions().stream().map(ToolDefinition::name)
                .collect(Collectors.toCollection(LinkedHashSet::new));
    }

    /**
     * {@code run_command}.
     *
     * @param command        the shell command
     * @param timeoutSeconds kill it after this many seconds, or {@code null} for the set's default
     * @param workdir        where to run it inside /workspace, or {@code null}
     * @param memoryId       the chat memory, injected by LangChain4j
     * @return the answer for the model
     */
    @Tool(name = "run_command", value = "Runs a shell command (/bin/sh -c) in your sandbox, a Linux container, and "
            + "returns its exit code, stdout and stderr. Commands run in /workspace unless `workdir` names another "
            + "directory inside it. Each call starts a fresh shell: `cd` and `export` do not carry over. Files in "
            + "/workspace persist between calls. Long output is cut in the middle; long commands are killed after "
            + "`timeout_seconds`.")
    public String runCommand(@P(name = "command", value = "The shell command to run.") String command,
                             @P(name = "timeout_seconds", value = "Kill the command after this many seconds.",
                                     required = false) Integer timeoutSeconds,
                             @P(name = "workdir", value = "Directory to run in, inside /workspace.", required = false)
                             String workdir,
                             @ToolMemoryId Object memoryId) {
        return call(memoryId, "run_command", "command", command, "timeout_seconds", timeoutSeconds, "workdir", workdir);
    }

    /**
     * {@code read_file}.
     *
     * @param path      the file, relative to /workspace
     * @param startLine first line, or {@code null}
     * @param endLine   last line, or {@code null}
     * @param memoryId  the chat memory, injected by LangChain4j
     * @return the file's text
     */
    @Tool(name = "read_file", value = "Reads a text file, or lines `start_line` to `end_line` (1-based, inclusive). "
            + "Paths are relative to /workspace (absolute paths must be inside it). Long files are returned in parts; "
            + "binary files are not shown; symbolic links are not followed.")
    public String readFile(@P(name = "path", value = "The file to read.") String path,
                           @P(name = "start_line", value = "First line to return (1-based).", required = false)
                           Integer startLine,
                           @P(name = "end_line", value = "Last line to return (inclusive).", required = false)
                           Integer endLine,
                           @ToolMemoryId Object memoryId) {
        return call(memoryId, "read_file", "path", path, "start_line", startLine, "end_line", endLine);
    }

    /**
     * {@code write_file}.
     *
     * @param path     the file, relative to /workspace
     * @param content  its complete new content
     * @param memoryId the chat memory, injected by LangChain4j
     * @return what was written
     */
    @Tool(name = "write_file", value = "Creates a file, or replaces a file's whole content; missing parent directories "
            + "are created. Paths are relative to /workspace. For a small change to an existing file, use edit_file.")
    public String writeFile(@P(name = "path", value = "The file to write.") String path,
                            @P(name = "content", value = "The complete new content of the file.") String content,
                            @ToolMemoryId Object memoryId) {
        return call(memoryId, "write_file", "path", path, "content", content);
    }

    /**
     * {@code edit_file}.
     *
     * @param path       the file, relative to /workspace
     * @param oldString  the exact text to replace
     * @param newString  its replacement
     * @param replaceAll replace every occurrence, or {@code null} for exactly one
     * @param memoryId   the chat memory, injected by LangChain4j
     * @return what was replaced
     */
    @Tool(name = "edit_file", value = "Edits a text file by replacing `old_string` with `new_string`. `old_string` must "
            + "match the file exactly, whitespace included, and occur exactly once unless `replace_all` is true. Read "
            + "the file first. Paths are relative to /workspace.")
    public String editFile(@P(name = "path", value = "The file to edit.") String path,
                           @P(name = "old_string", value = "The exact text to replace.") String oldString,
                           @P(name = "new_string", value = "The text to put in its place.") String newString,
                           @P(name = "replace_all", value = "Replace every occurrence.", required = false)
                           Boolean replaceAll,
                           @ToolMemoryId Object memoryId) {
        return call(memoryId, "edit_file", "path", path, "old_string", oldString, "new_string", newString,
                "replace_all", replaceAll);
    }

    /**
     * {@code list_files}.
     *
     * @param path      the directory, or {@code null} for /workspace
     * @param recursive list subdirectories too, or {@code null}
     * @param maxDepth  levels to descend, or {@code null}
     * @param memoryId  the chat memory, injected by LangChain4j
     * @return the listing
     */
    @Tool(name = "list_files", value = "Lists a directory (default /workspace). Directories end with '/', symbolic "
            + "links show their target, files their size. With `recursive`, subdirectories are listed too, up to "
            + "`max_depth` levels.")
    public String listFiles(@P(name = "path", value = "The directory to list.", required = false) String path,
                            @P(name = "recursive", value = "List subdirectories too.", required = false) Boolean recursive,
                            @P(name = "max_depth", value = "How many levels to descend.", required = false) Integer maxDepth,
                            @ToolMemoryId Object memoryId) {
        return call(memoryId, "list_files", "path", path, "recursive", recursive, "max_depth", maxDepth);
    }

    /**
     * {@code search_files}.
     *
     * @param pattern    a Java regular expression, or plain text with {@code literal}
     * @param path       the directory or file to search, or {@code null} for /workspace
     * @param glob       which files, or {@code null}
     * @param ignoreCase match case-insensitively, or {@code null}
     * @param literal    treat the pattern as plain text, or {@code null}
     * @param maxResults the most matches to return, or {@code null}
     * @param memoryId   the chat memory, injected by LangChain4j
     * @return the matching lines as {@code path:line: text}
     */
    @Tool(name = "search_files", value = "Searches the contents of text files under /workspace for a regular expression "
            + "(Java syntax) and returns matching lines as `path:line: text`. `glob` limits which files are searched, "
            + "for example `*.py`.")
    public String searchFiles(@P(name = "pattern", value = "The regular expression to find.") String pattern,
                              @P(name = "path", value = "The directory or file to search.", required = false) String path,
                              @P(name = "glob", value = "Only search files matching this glob.", required = false)
                              String glob,
                              @P(name = "ignore_case", value = "Match case-insensitively.", required = false)
                              Boolean ignoreCase,
                              @P(name = "literal", value = "Treat the pattern as plain text.", required = false)
                              Boolean literal,
                              @P(name = "max_results", value = "Stop after this many matching lines.", required = false)
                              Integer maxResults,
                              @ToolMemoryId Object memoryId) {
        return call(memoryId, "search_files", "pattern", pattern, "path", path, "glob", glob, "ignore_case", ignoreCase,
                "literal", literal, "max_results", maxResults);
    }

    private String call(Object memoryId, String tool, Object... keyValues) {
        Map<String, Object> args = new LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            if (keyValues[i + 1] != null) {
                args.put((String) keyValues[i], keyValues[i + 1]);
            }
        }
        ToolResult r;
        try {
            r = tools.execute(memoryId == null ? SandboxToolProvider.DEFAULT_MEMORY_ID : memoryId, tool, args);
        } catch (SandboxException e) {
            throw OperatorFailure.of(tool, e);
        }
        if (r.error()) {
            throw new ToolRefusal(r.text());
        }
        return r.text();
    }
}
