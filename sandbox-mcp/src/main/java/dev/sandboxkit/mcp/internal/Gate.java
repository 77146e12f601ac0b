package dev.sandboxkit.mcp.internal;

import dev.sandboxkit.tools.SandboxTools;
import dev.sandboxkit.tools.ToolDefinition;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What every readable message meets before the SDK, on both transports (the stdio guard and the HTTP filter ask
 * it): the checks the SDK does not make, and the few methods this server answers itself.
 *
 * <ul>
 *   <li>{@code "jsonrpc"} must be {@code "2.0"} and a request's id a string or a number: else {@code -32600};</li>
 *   <li>{@code params}, and the members the server's methods read ({@code arguments}, {@code uri},
 *       {@code cursor}...), must have their JSON type: else {@code -32602} saying which, where the SDK answered
 *       {@code -32603} with a Java exception's text;</li>
 *   <li>a {@code tools/call} of a tool the server does not offer: {@code -32602} naming it and the tools there
 *       are (the SDK's says {@code invalid_tool_name});</li>
 *   <li>{@code resources/list}: the session's workspace files ({@link WorkspaceResources#list}); the SDK only
 *       knows resources fixed at start;</li>
 *   <li>{@code notifications/cancelled}: stops the request ({@link Calls#cancel}); the SDK ignores it.</li>
 * </ul>
 *
 * <p>Thread-safe.
 */
public final class Gate {
    private static final Logger log = LoggerFactory.getLogger(Gate.class);

    /** The members each method reads and their JSON type; {@code *} marks a required one. */
    private static final Map<String, Map<String, Kind>> PARAMS = Map.of(
            "tools/call", Map.of("*name", Kind.STRING, "arguments", Kind.OBJECT),
            "resources/read", Map.of("*uri", Kind.STRING),
            "initialize", Map.of("*protocolVersion", Kind.STRING, "capabilities", Kind.OBJECT,
                    "*clientInfo", Kind.OBJECT),
            "tools/list", Map.of("cursor", Kind.STRING),
            "resources/list", Map.of("cursor", Kind.STRING),
            "resources/templates/list", Map.of("cursor", Kind.STRING),
            "logging/setLevel", Map.of("*level", Kind.STRING));

    private enum Kind {
        STRING("a string"), OBJECT("a JSON object");

        final String words;

        Kind(String words) {
            this.words = words;
        }

        boolean matches(Object value) {
            return this == STRING ? value instanceof String : value instanceof Map;
        }
    }

    private final SandboxTools tools;
    private final Sessions sessions;
    private final Calls calls;
    private final boolean resources;
    private final List<String> toolNames;

    /**
     * A gate for one server.
     *
     * @param tools     the offered tools
     * @param sessions  the open MCP sessions
     * @param calls     the requests in flight
     * @param resources whether the workspace files are offered as resources
     */
    public Gate(SandboxTools tools, Sessions sessions, Calls calls, boolean resources) {
        this.tools = Objects.requireNonNull(tools, "tools");
        this.sessions = Objects.requireNonNull(sessions, "sessions");
        this.calls = Objects.requireNonNull(calls, "calls");
        this.resources = resources;
        this.toolNames = tools.definitions().stream().map(ToolDefinition::name).toList();
    }

    /** What becomes of one message. */
    public static final class Verdict {
        /** The SDK gets it. */
        public static final Verdict PASS = new Verdict(null, 0);
        /** Handled here; nothing is answered (a notification). */
        public static final Verdict CONSUMED = new Verdict(null, 0);

        private final Object answer;
        private final int code;

        private Verdict(Object answer, int code) {
            this.answer = answer;
            this.code = code;
        }

        static Verdict result(McpSchema.JSONRPCResponse response) {
            return new Verdict(Objects.requireNonNull(response, "response"), 0);
        }

        static Verdict error(Object id, int code, String message) {
            return new Verdict(JsonRpc.errorBody(id, code, message), code);
        }

        /**
         * The answer to send instead of passing the message on.
         *
         * @return the JSON-RPC response (the SDK's type or a map), or {@code null} for {@link #PASS} and
         *         {@link #CONSUMED}
         */
        public Object answer() {
            return answer;
        }

        /**
         * The error code of the answer.
         *
         * @return the JSON-RPC error code, or {@code 0} for a result
         */
        public int code() {
            return code;
        }
    }

    /**
     * Looks at one message.
     *
     * @param mcpSessionId the MCP session it belongs to, or {@code null} (HTTP {@code initialize}, or an unknown
     *                     session: the SDK then answers as it does)
     * @param sessionKey   the session key the message carries (HTTP header), or {@code null}
     * @param message      the message
     * @return pass it on, consumed, or the answer
     */
    public Verdict inspect(String mcpSessionId, String sessionKey, McpSchema.JSONRPCMessage message) {
        if (!"2.0".equals(message.jsonrpc())) {
            Object id = message instanceof McpSchema.JSONRPCRequest r ? r.id() : null;
            return Verdict.error(id, JsonRpc.INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\", got "
                    + (message.jsonrpc() == null ? "nothing" : "\"" + message.jsonrpc() + "\""));
        }
        boolean open = mcpSessionId != null && sessions.isOpen(mcpSessionId);
        if (message instanceof McpSchema.JSONRPCNotification n) {
            if (open && "notifications/cancelled".equals(n.method()) && n.params() instanceof Map<?, ?> p) {
                boolean found = calls.cancel(mcpSessionId, p.get("requestId"));
                log.debug("Request {} of session {} cancelled by the client ({}in flight)", p.get("requestId"),
                        mcpSessionId, found ? "" : "not ");
                return Verdict.CONSUMED;
            }
            return Verdict.PASS;
        }
        if (!(message instanceof McpSchema.JSONRPCRequest request)) {
            return Verdict.PASS;
        }
        Object id = request.id(); // a string or an integer: the SDK's type checks that
        String invalid = invalidParams(request);
        if (invalid != null) {
            return Verdict.error(id, JsonRpc.INVALID_PARAMS, "Invalid params: " + invalid);
        }
        Map<?, ?> params = request.params() instanceof Map<?, ?> m ? m : Map.of();
        if ("tools/call".equals(request.method()) && !toolNames.contains((String) params.get("name"))) {
            return Verdict.error(id, JsonRpc.INVALID_PARAMS, "Unknown tool: " + params.get("name")
                    + ". This server offers " + String.join(", ", toolNames) + ".");
        }
        if ("resources/list".equals(request.method()) && resources && open) {
            try {
                return Verdict.result(McpSchema.JSONRPCResponse.result(id, WorkspaceResources.list(tools, sessions,
                        mcpSessionId, sessionKey, (String) params.get("cursor"))));
            } catch (McpError e) {
                return new Verdict(McpSchema.JSONRPCResponse.error(id, e.getJsonRpcError()),
                        e.getJsonRpcError().code());
            }
        }
        return Verdict.PASS;
    }

    /** What is wrong with a request's params, or {@code null}. */
    private static String invalidParams(McpSchema.JSONRPCRequest request) {
        Object params = request.params();
        if (params != null && !(params instanceof Map)) {
            return "\"params\" of " + request.method() + " must be a JSON object, got " + describe(params);
        }
        Map<?, ?> p = params == null ? Map.of() : (Map<?, ?>) params;
        if (p.get("_meta") != null && !(p.get("_meta") instanceof Map)) {
            return "\"_meta\" must be a JSON object, got " + describe(p.get("_meta"));
        }
        Map<String, Kind> members = PARAMS.getOrDefault(request.method(), Map.of());
        for (Map.Entry<String, Kind> m : members.entrySet()) {
            boolean required = m.getKey().startsWith("*");
            String name = required ? m.getKey().substring(1) : m.getKey();
            Object value = p.get(name);
            if (value == null ? required : !m.getValue().matches(value)) {
                return "\"" + name + "\" of " + request.method() + " must be " + m.getValue().words + ", got "
                        + describe(value);
            }
        }
        return null;
    }

    /** A JSON value's type, in words. */
    static String describe(Object value) {
        if (value == null) {
            return "nothing";
        }
        if (value instanceof String) {
            return "a string";
        }
        if (value instanceof Number) {
            return "a number";
        }
        if (value instanceof Boolean) {
            return "a boolean";
        }
        if (value instanceof List) {
            return "an array";
        }
        return value instanceof Map ? "an object" : "a " + value.getClass().getSimpleName();
    }
}
