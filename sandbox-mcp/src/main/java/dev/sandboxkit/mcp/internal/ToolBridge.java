package dev.sandboxkit.mcp.internal;

import dev.sandboxkit.SandboxException;
import dev.sandboxkit.tools.SandboxTool;
import dev.sandboxkit.tools.SandboxTools;
import dev.sandboxkit.tools.ToolDefinition;
import dev.sandboxkit.tools.ToolResult;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@link SandboxTools} set as MCP tools. Each tool keeps its name, description and JSON schema (the SDK checks
 * every call's arguments against it before the handler runs), and gets a title and the hints of the MCP
 * specification's tool annotations. Results map as follows:
 *
 * <ul>
 *   <li>a {@link ToolResult} is a {@code CallToolResult} with one text item, {@code isError} as the result says
 *       (a non-zero exit code is not an error: the model reads it);</li>
 *   <li>a {@link SandboxException} (engine down, store failing, image missing, session held by another server) is
 *       an {@code isError} result that says the sandbox is unavailable and whether retrying may help, with
 *       {@code _meta} {@value #META_ERROR} (the exception's simple name) and {@value #META_RETRYABLE}: the model can
 *       tell its user, and the agent loop goes on. The failure is logged;</li>
 *   <li>anything else is a bug: a JSON-RPC internal error whose message says only that, the details go to the
 *       log.</li>
 * </ul>
 */
public final class ToolBridge {
    /** {@code _meta} key naming an operator failure's exception type. */
    public static final String META_ERROR = "dev.sandboxkit/error";
    /** {@code _meta} key saying whether an operator failure is worth retrying. */
    public static final String META_RETRYABLE = "dev.sandboxkit/retryable";

    private static final Logger log = LoggerFactory.getLogger(ToolBridge.class);
    private static final String CANCELLED = "The call was cancelled; what it ran in the sandbox was stopped.";

    private ToolBridge() {
    }

    /**
     * One MCP tool per tool of the set.
     *
     * @param tools    the tool set
     * @param sessions maps each call's MCP session to its conversation
     * @param calls    the requests in flight, which a cancellation reaches
     * @param mapper   the SDK's mapper, to hand it the schemas
     * @return the specifications, in the set's order
     */
    public static List<SyncToolSpecification> specifications(SandboxTools tools, Sessions sessions, Calls calls,
                                                             McpJsonMapper mapper) {
        List<SyncToolSpecification> specs = new ArrayList<>();
        // A sandbox without a network (or an egress allow-list) reaches nothing outside it: a closed world.
        boolean network = !"none".equals(tools.spec().network())
                || (tools.spec().egress() != null && !tools.spec().egress().rules().isEmpty());
        for (ToolDefinition d : tools.definitions()) {
            String title = title(d.tool());
            McpSchema.Tool tool = McpSchema.Tool.builder(d.name(), mapper, d.inputSchema())
                    .title(title)
                    .description(d.description())
                    .annotations(annotations(d.tool(), title, network))
                    .build();
            specs.add(SyncToolSpecification.builder()
                    .tool(tool)
                    .callHandler((exchange, request) -> call(tools, sessions, calls, exchange, request))
                    .build());
        }
        return specs;
    }

    static String title(SandboxTool tool) {
        return switch (tool) {
            case RUN_COMMAND -> "Run a shell command";
            case READ_FILE -> "Read a file";
            case WRITE_FILE -> "Write a file";
            case EDIT_FILE -> "Edit a file";
            case LIST_FILES -> "List files";
            case SEARCH_FILES -> "Search files";
        };
    }

    /**
     * The hints: only run_command may reach outside the sandbox (when it has a network); the file tools that
     * write overwrite what was there (destructive), and only write_file does the same when repeated (idempotent).
     * The last two are left out for tools that only read, as the specification says they mean nothing there.
     */
    static McpSchema.ToolAnnotations annotations(SandboxTool tool, String title, boolean network) {
        McpSchema.ToolAnnotations.Builder b = McpSchema.ToolAnnotations.builder().title(title)
                .readOnlyHint(!tool.changesWorkspace())
                .openWorldHint(tool == SandboxTool.RUN_COMMAND && network);
        if (tool.changesWorkspace()) {
            b.destructiveHint(true).idempotentHint(tool == SandboxTool.WRITE_FILE);
        }
        return b.build();
    }

    static McpSchema.CallToolResult call(SandboxTools tools, Sessions sessions, Calls calls,
                                         McpSyncServerExchange exchange, McpSchema.CallToolRequest request) {
        Sessions.Use use;
        try {
            use = sessions.enter(exchange.sessionId(), sessionKey(exchange));
        } catch (Sessions.KeyMismatchException e) {
            return result(e.getMessage(), true, null);
        }
        Object requestId = exchange.transportContext() == null ? null
                : exchange.transportContext().get(Calls.REQUEST_ID);
        Calls.Call call = calls.enter(exchange.sessionId(), requestId);
        try {
            if (call.cancelled()) {
                return result(CANCELLED, true, null); // dropped on its way out
            }
            Map<String, Object> args = request.arguments() == null ? Map.of() : request.arguments();
            ToolResult r = use.tools().execute(use.conversation(), request.name(), args);
            return result(r.text(), r.error(), null);
        } catch (SandboxException e) {
            if (call.cancelled()) {
                log.info("{} for conversation {} stopped: its request was cancelled or its session ended",
                        request.name(), use.conversation());
                return result(CANCELLED, true, null);
            }
            log.warn("{} failed for conversation {}: {}", request.name(), use.conversation(), e.toString());
            log.debug("{} failure", request.name(), e);
            Map<String, Object> meta = new LinkedHashMap<>();
            meta.put(META_ERROR, e.getClass().getSimpleName());
            meta.put(META_RETRYABLE, e.isRetryable());
            return result(unavailable(e), true, meta);
        } catch (RuntimeException e) {
            log.error("{} failed unexpectedly for conversation {}", request.name(), use.conversation(), e);
            throw McpError.builder(JsonRpc.INTERNAL_ERROR)
                    .message("Internal error in sandbox-mcp while running " + request.name()
                            + "; the server's log has the details")
                    .build();
        } finally {
            calls.exit(call);
            sessions.exit(use);
        }
    }

    /** The model's view of an operator failure: what happened and whether trying again may help. */
    static String unavailable(SandboxException e) {
        return "The sandbox is not available: " + JsonRpc.cut(e.getMessage()) + "\n"
                + (e.isRetryable()
                ? "This is a problem on the server's side, not with the call. Trying again in a little while may work."
                : "This is a problem on the server's side, not with the call. Its operator has to fix it; tell the user.");
    }

    /** The session key of the request, if its transport carries one (HTTP's {@value Sessions#SESSION_HEADER}). */
    static String sessionKey(McpSyncServerExchange exchange) {
        Object key = exchange.transportContext() == null ? null : exchange.transportContext().get(Sessions.KEY_CONTEXT);
        return key instanceof String s ? s : null;
    }

    private static McpSchema.CallToolResult result(String text, boolean error, Map<String, Object> meta) {
        return McpSchema.CallToolResult.builder()
                .addTextContent(text)
                .isError(error)
                .meta(meta)
                .build();
    }
}
