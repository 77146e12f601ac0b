package dev.sandboxkit.tools.internal;

import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.tools.SandboxTool;
import dev.sandboxkit.tools.ToolDefinition;
import dev.sandboxkit.tools.ToolResult;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Runs tool calls: parses and checks arguments, finds the conversation's sandbox, calls the tool, and sorts
 * failures into answers for the model and exceptions for the operator.
 */
public final class Toolbox {
    /** Tool-call arguments larger than this are refused before parsing (a 100 MiB write is one). */
    private static final int MAX_ARGUMENT_CHARS = 64_000_000;

    private final ToolSettings settings;
    private final Map<SandboxTool, ToolDefinition> definitions = new EnumMap<>(SandboxTool.class);
    private final CommandTool command;
    private final FileTools fileTools;
    private final SearchTool search;

    /**
     * A toolbox for a tool set.
     *
     * @param settings the set's settings
     */
    public Toolbox(ToolSettings settings) {
        this.settings = settings;
        for (SandboxTool t : SandboxTool.values()) {
            if (settings.tools().contains(t)) {
                definitions.put(t, Catalog.definition(t, settings));
            }
        }
        this.command = new CommandTool(settings);
        this.fileTools = new FileTools(settings);
        this.search = new SearchTool(settings);
    }

    /**
     * The offered tools' definitions, in {@link SandboxTool} order.
     *
     * @return the definitions
     */
    public List<ToolDefinition> definitions() {
        return List.copyOf(definitions.values());
    }

    /**
     * One call with arguments as JSON text.
     *
     * @param sessionId the conversation's session
     * @param toolName  the tool the model called
     * @param json      its arguments object; blank means no arguments
     * @return the answer
     */
    public ToolResult call(String sessionId, String toolName, String json) {
        Map<String, ?> args;
        if (json == null || json.isBlank()) {
            args = Map.of();
        } else if (json.length() > MAX_ARGUMENT_CHARS) {
            return ToolResult.error("The arguments of " + toolName + " are " + Text.size(json.length())
                    + " long, over the " + Text.size(MAX_ARGUMENT_CHARS) + " the tools accept. Send less per call.");
        } else {
            Object parsed;
            try {
                parsed = Json.parse(json);
            } catch (IllegalArgumentException e) {
                return ToolResult.error("The arguments of " + toolName + " are not valid JSON (" + e.getMessage()
                        + "). Send one JSON object.");
            }
            if (!(parsed instanceof Map<?, ?> map)) {
                return ToolResult.error("The arguments of " + toolName + " must be a JSON object.");
            }
            @SuppressWarnings("unchecked")
            Map<String, ?> object = (Map<String, ?>) map;
            args = object;
        }
        return call(sessionId, toolName, args);
    }

    /**
     * One call with parsed arguments.
     *
     * @param sessionId the conversation's session
     * @param toolName  the tool the model called
     * @param arguments its arguments
     * @return the answer
     */
    public ToolResult call(String sessionId, String toolName, Map<String, ?> arguments) {
        Optional<SandboxTool> tool = SandboxTool.byName(toolName);
        ToolDefinition def = tool.map(definitions::get).orElse(null);
        if (def == null) {
            String offered = definitions.values().stream().map(ToolDefinition::name).collect(Collectors.joining(", "));
            boolean readOnlyRefusal = tool.isPresent() && settings.readOnly() && tool.get().changesWorkspace();
            return ToolResult.error((readOnlyRefusal ? "The workspace is read-only: " + toolName + " is not available."
                    : "There is no tool named \"" + toolName + "\".") + " Available tools: " + offered + ".");
        }
        Object path = arguments.get("path");
        try {
            Args args = Args.of(def, arguments);
            return switch (def.tool()) {
                case RUN_COMMAND -> command.run(sandbox(sessionId), args);
                case READ_FILE -> fileTools.read(files(sessionId), args);
                case WRITE_FILE -> fileTools.write(files(sessionId), args);
                case EDIT_FILE -> fileTools.edit(files(sessionId), args);
                case LIST_FILES -> fileTools.list(files(sessionId), args);
                case SEARCH_FILES -> search.run(files(sessionId), args);
            };
        } catch (ToolFailure f) {
            return ToolResult.error(f.getMessage());
        } catch (SandboxNotFoundException e) {
            if (def.tool() == SandboxTool.RUN_COMMAND) {
                return ToolResult.error("The sandbox was removed just as the command was starting; run it again.");
            }
            return ToolResult.error("No such file or directory: " + FileTools.display(path instanceof String s ? s : "")
                    + ". Use list_files to see what exists.");
        } catch (SandboxFileException e) {
            String why = explain(e.reason());
            if (why == null) {
                throw e; // unsupported, or an I/O failure on the host: the operator's to fix
            }
            return ToolResult.error(FileTools.display(path instanceof String s ? s : "") + ": " + why);
        }
    }

    /** The model-facing reason for a refusal, or {@code null} for failures that are not the model's to fix. */
    private static String explain(SandboxFileException.Reason reason) {
        return switch (reason) {
            case INVALID_PATH -> "not a path inside /workspace. Use a path relative to /workspace, or an absolute path "
                    + "under /workspace, without '..' components.";
            case NOT_A_DIRECTORY -> "a component of the path is not a directory.";
            case IS_A_DIRECTORY -> "it is a directory; give a file path.";
            case NOT_A_REGULAR_FILE -> "it is a FIFO, socket or device, not a regular file; file tools never open those.";
            case SYMLINK -> "the path goes through a symbolic link, which file tools never follow. Use the real path, "
                    + "or run_command.";
            case NOT_EMPTY -> "the directory is not empty.";
            case TOO_LARGE -> "the file is larger than the files API allows; work with it through run_command.";
            case TOO_MANY_ENTRIES -> "the directory has too many entries to list; use run_command (ls | head).";
            case TOO_DEEP -> "the directory tree is nested too deeply to walk.";
            case PERMISSION_DENIED -> "permission denied (its mode was changed inside the sandbox; fix it with chmod "
                    + "through run_command).";
            case INVALID_ARCHIVE, UNSUPPORTED, IO_ERROR -> null;
        };
    }

    /** The conversation's sandbox: created on first use, resumed after a reap. */
    public Sandbox sandbox(String sessionId) {
        try {
            return settings.manager().acquire(sessionId, settings.spec());
        } catch (SandboxAcquireException e) {
            if (settings.spec().ephemeral() && !e.isRetryable()) {
                Optional<SessionInfo> s = settings.manager().session(sessionId);
                if (s.isPresent() && s.get().state() == SessionState.DESTROYED) {
                    throw new ToolFailure("This conversation's sandbox was single-use and has been released; its "
                            + "files are gone. Start a new conversation to get a new sandbox.");
                }
            }
            throw e;
        }
    }

    private SandboxFiles files(String sessionId) {
        return sandbox(sessionId).files();
    }
}
