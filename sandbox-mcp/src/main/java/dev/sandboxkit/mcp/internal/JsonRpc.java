package dev.sandboxkit.mcp.internal;

import io.modelcontextprotocol.json.McpJsonMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** JSON-RPC 2.0 error codes and error responses that the server writes itself, outside the SDK. */
public final class JsonRpc {
    /** The message is not JSON. */
    public static final int PARSE_ERROR = -32700;
    /** The JSON is not a valid request (or is too large). */
    public static final int INVALID_REQUEST = -32600;
    /** No such method. */
    public static final int METHOD_NOT_FOUND = -32601;
    /** The parameters are wrong (an unknown tool, a bad resource URI). */
    public static final int INVALID_PARAMS = -32602;
    /** The server failed. */
    public static final int INTERNAL_ERROR = -32603;
    /** Implementation-defined server error: the server refuses the request (limit reached, unauthorized). */
    public static final int SERVER_ERROR = -32000;

    /** Longest message text copied into an error response. */
    private static final int MAX_MESSAGE = 500;

    private JsonRpc() {
    }

    /**
     * A JSON-RPC error response as one line of JSON.
     *
     * @param mapper  the SDK's mapper
     * @param id      the request's id (a string or a number), or {@code null} when unknown
     * @param code    the error code
     * @param message the message, cut to a few hundred characters
     * @return the JSON text, without a line end
     */
    public static String error(McpJsonMapper mapper, Object id, int code, String message) {
        return write(mapper, errorBody(id, code, message));
    }

    /**
     * A JSON-RPC error response, as a map (the SDK's own type cannot carry the {@code null} id of a message whose
     * id is unknown).
     *
     * @param id      the request's id (a string or a number), or {@code null} when unknown
     * @param code    the error code
     * @param message the message, cut to a few hundred characters
     * @return the response
     */
    public static Map<String, Object> errorBody(Object id, int code, String message) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", code);
        error.put("message", cut(message));
        Map<String, Object> response = new LinkedHashMap<>();
        response.put("jsonrpc", "2.0");
        response.put("id", id instanceof String || id instanceof Number ? id : null);
        response.put("error", error);
        return response;
    }

    /**
     * A JSON-RPC response as one line of JSON.
     *
     * @param mapper   the SDK's mapper
     * @param response the response: the SDK's type or a map
     * @return the JSON text, without a line end
     */
    public static String write(McpJsonMapper mapper, Object response) {
        try {
            return mapper.writeValueAsString(response);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write a JSON-RPC response", e);
        }
    }

    /**
     * The answer to a message the SDK cannot read: not JSON at all (a parse error), or JSON that is not one
     * JSON-RPC message (an invalid request, with the message's id when it has one).
     *
     * @param mapper the SDK's mapper
     * @param text   the message
     * @return the error response
     */
    public static Map<String, Object> unreadable(McpJsonMapper mapper, String text) {
        Object parsed;
        try {
            parsed = mapper.readValue(text, Object.class);
        } catch (IOException | RuntimeException notJson) {
            return errorBody(null, PARSE_ERROR, "Parse error: the message is not valid JSON");
        }
        if (parsed instanceof Map<?, ?> map) {
            return errorBody(map.get("id"), INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 request, "
                    + "notification or response (it needs \"method\", or \"result\" or \"error\")");
        }
        return errorBody(null, INVALID_REQUEST, parsed instanceof List
                ? "Invalid Request: batches are not supported; send one message at a time"
                : "Invalid Request: a message must be a JSON object");
    }

    static String cut(String message) {
        String m = message == null || message.isBlank() ? "Error" : message;
        return m.length() <= MAX_MESSAGE ? m : m.substring(0, MAX_MESSAGE) + "...";
    }
}
