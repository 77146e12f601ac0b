package dev.sandboxkit.mcp.internal;

import io.modelcontextprotocol.json.McpJsonMapper;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.WriteListener;
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
 * session refused for the session limit (noted in the {@link RequestScope} that {@link GateFilter} opened) becomes
 * a 503 with {@code Retry-After}. Success responses (JSON and event
 * streams) pass straight through; errors sent with {@code sendError} are rendered by {@link JsonErrorHandler},
 * except a 413, which is answered here and followed by a bounded drain of the refused body.
 */
final class ErrorBodyFilter implements Filter {
    /** How much of a refused body is read and dropped so that the client sees the 413 (see {@link #drain}). */
    private static final long DRAIN_BYTES = 256L << 20;
    private static final long DRAIN_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
    private final McpJsonMapper mapper;

    ErrorBodyFilter(McpJsonMapper mapper) {
        this.mapper = mapper;
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        HttpServletResponse res = (HttpServletResponse) response;
        Capturing wrapper = new Capturing(res);
        chain.doFilter(request, wrapper);
        String refusal = RequestScope.refusal();
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
        String message = wrapper.tooLarge ? org.eclipse.jetty.http.HttpStatus.getMessage(status) : "HTTP " + status;
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
        if (status == 413) {
            res.setHeader("Connection", "close");
        }
        HttpErrors.write(res, status, JsonRpc.error(mapper, null, code, message));
        if (status == 413) {
            drain(request, res);
        }
    }

    /**
     * Reads and drops what is left of a refused body, after the answer is on the wire. Closing with unread bytes
     * makes the kernel send a reset, which can destroy the 413 in the client's receive buffer before the client,
     * still writing, reads it (the JDK client then reports "header parser received no bytes"). Bounded in bytes
     * and time; past either, the connection closes as before.
     */
    private static void drain(ServletRequest request, HttpServletResponse res) {
        long deadline = System.nanoTime() + DRAIN_NANOS;
        long left = DRAIN_BYTES;
        byte[] sink = new byte[1 << 16];
        try {
            res.flushBuffer();
            var in = request.getInputStream();
            for (int n; left > 0 && System.nanoTime() < deadline && (n = in.read(sink)) >= 0; ) {
                left -= n;
            }
        } catch (IOException | RuntimeException gone) {
            // the client closed first: nothing left to protect
        }
    }

    /** Passes everything through, except a body written after an error status, which it keeps. */
    private static final class Capturing extends HttpServletResponseWrapper {
        int status = 200;
        boolean tooLarge;
        ByteArrayOutputStream captured;
        PrintWriter writer;

        Capturing(HttpServletResponse response) {
            super(response);
        }

        /** A 413 is answered here, not by the error page: the answer must be written before the body is drained. */
        @Override
        public void sendError(int sc) throws IOException {
            if (sc == 413) {
                status = sc;
                tooLarge = true;
            } else {
                super.sendError(sc);
            }
        }

        @Override
        public void sendError(int sc, String msg) throws IOException {
            if (sc == 413) {
                sendError(sc);
            } else {
                super.sendError(sc, msg);
            }
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
