package dev.sandboxkit.mcp.internal;

import io.modelcontextprotocol.json.McpJsonMapper;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Rewrites the error bodies the SDK's servlet writes itself: they are a Jackson dump of its exception, stack
 * trace included, and not JSON-RPC. Any body written after an error status is held back and replaced by
 * {@code {"jsonrpc":"2.0","id":null,"error":{"code":..,"message":..}}} with the SDK's code and message. A new
 * session refused for the session limit becomes a 503 with {@code Retry-After}. It also hands the request's
 * session key to the SDK's session factory ({@link RequestScope}). Success responses (JSON and event
 * streams) pass straight through; errors sent with {@code sendError} are rendered by {@link JsonErrorHandler}.
 */
final class ErrorBodyFilter implements Filter {
    private final McpJsonMapper mapper;

    ErrorBodyFilter(McpJsonMapper mapper) {
        this.mapper = mapper;
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        HttpServletResponse res = (HttpServletResponse) response;
        Capturing wrapper = new Capturing(res);
        String refusal;
        RequestScope.begin(((HttpServletRequest) request).getHeader(Sessions.SESSION_HEADER));
        try {
            chain.doFilter(request, wrapper);
        } finally {
            refusal = RequestScope.end();
        }
        if (wrapper.status < 400 || request.isAsyncStarted()) {
            return; // a success, or an event stream that other threads still write
        }
        if (wrapper.writer != null) {
            wrapper.writer.flush();
        }
        if (refusal != null) {
            res.setHeader("Retry-After", "10");
            HttpErrors.write(res, 503, JsonRpc.error(mapper, null, JsonRpc.SERVER_ERROR, refusal));
            return;
        }
        int status = wrapper.status;
        int code = HttpErrors.codeFor(status);
        String message = "HTTP " + status;
        try {
            Object dump = wrapper.captured == null ? null : mapper.readValue(wrapper.captured.toByteArray(), Object.class);
            if (dump instanceof Map<?, ?> m && m.get("jsonRpcError") instanceof Map<?, ?> e) {
                if (e.get("code") instanceof Number n) {
                    code = n.intValue();
                }
                if (e.get("message") instanceof String s) {
                    message = s;
                }
            }
        } catch (IOException | RuntimeException notTheSdksDump) {
            // keep the generic message: whatever it was, it is not passed on
        }
        HttpErrors.write(res, status, JsonRpc.error(mapper, null, code, message));
    }

    /** Passes everything through, except a body written after an error status, which it keeps. */
    private static final class Capturing extends HttpServletResponseWrapper {
        int status = 200;
        ByteArrayOutputStream captured;
        PrintWriter writer;

        Capturing(HttpServletResponse response) {
            super(response);
        }

        @Override
        public void setStatus(int sc) {
            status = sc;
            if (sc < 400) {
                super.setStatus(sc); // an error status is set when the rewritten body is written
            }
        }

        @Override
        public PrintWriter getWriter() throws IOException {
            if (status < 400) {
                return super.getWriter();
            }
            if (writer == null) {
                writer = new PrintWriter(new OutputStreamWriter(buffer(), StandardCharsets.UTF_8));
            }
            return writer;
        }

        @Override
        public ServletOutputStream getOutputStream() throws IOException {
            if (status < 400) {
                return super.getOutputStream();
            }
            ByteArrayOutputStream target = buffer();
            return new ServletOutputStream() {
                @Override
                public void write(int b) {
                    target.write(b);
                }

                @Override
                public void write(byte[] b, int off, int len) {
                    target.write(b, off, len);
                }

                @Override
                public boolean isReady() {
                    return true;
                }

                @Override
                public void setWriteListener(WriteListener listener) {
                    throw new UnsupportedOperationException("error bodies are written blocking");
                }
            };
        }

        @Override
        public void flushBuffer() throws IOException {
            if (status < 400) {
                super.flushBuffer();
            }
        }

        private ByteArrayOutputStream buffer() {
            if (captured == null) {
                captured = new ByteArrayOutputStream();
            }
            return captured;
        }
    }
}
