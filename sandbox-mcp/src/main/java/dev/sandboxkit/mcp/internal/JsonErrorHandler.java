package dev.sandboxkit.mcp.internal;

import io.modelcontextprotocol.json.McpJsonMapper;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

import java.nio.ByteBuffer;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Jetty's error pages (an unknown path, a body over the size limit, {@code sendError} from the servlet) as
 * JSON-RPC error bodies: the status's reason, never a stack trace, a servlet name or
 * the server's version.
 */
final class JsonErrorHandler extends org.eclipse.jetty.ee11.servlet.ErrorHandler {
    private final McpJsonMapper mapper;

    JsonErrorHandler(McpJsonMapper mapper) {
        this.mapper = mapper;
        setShowStacks(false);
        setShowCauses(false);
        setShowMessageInTitle(false);
    }

    @Override
    protected boolean generateAcceptableResponse(Request request, Response response, Callback callback,
                                                 String contentType, List<Charset> charsets, int code, String message,
                                                 Throwable cause) {
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json;charset=utf-8");
        response.write(true, ByteBuffer.wrap(body(code, message)), callback);
        return true;
    }

    private byte[] body(int status, String message) {
        String reason = HttpStatus.getMessage(status);
        String text = message == null || message.isBlank() || message.startsWith("org.") || message.startsWith("java.")
                ? reason : message;
        return JsonRpc.error(mapper, null, HttpErrors.codeFor(status), text).getBytes(StandardCharsets.UTF_8);
    }
}
