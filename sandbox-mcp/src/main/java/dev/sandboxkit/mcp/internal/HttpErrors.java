package dev.sandboxkit.mcp.internal;

import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

/** Writing an error body, and the JSON-RPC error code that stands for an HTTP status. */
final class HttpErrors {
    private HttpErrors() {
    }

    static void write(HttpServletResponse res, int status, String json) throws IOException {
        res.setStatus(status);
        res.setContentType("application/json");
        res.setCharacterEncoding(StandardCharsets.UTF_8.name());
        res.setHeader("Cache-Control", "no-store");
        PrintWriter w = res.getWriter();
        w.write(json);
        w.flush();
    }

    static int codeFor(int status) {
        if (status == 401 || status == 403 || status == 421 || status == 503) {
            return JsonRpc.SERVER_ERROR;
        }
        return status >= 500 ? JsonRpc.INTERNAL_ERROR : JsonRpc.INVALID_REQUEST;
    }
}
