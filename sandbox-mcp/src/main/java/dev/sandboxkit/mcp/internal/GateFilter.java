package dev.sandboxkit.mcp.internal;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.SequenceInputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * The HTTP side of the {@link Gate}: reads a POSTed message (at most the size limit; a larger body goes on to the
 * SDK, which answers 413), answers what is not JSON with {@code -32700} and what is not one JSON-RPC message with
 * {@code -32600} (HTTP 400, as stdio does; the SDK answered both {@code -32600}), then lets the gate decide. The
 * gate's answers go out as JSON (HTTP 400 for an invalid request, else 200), a consumed notification as 202; the
 * rest reaches the SDK's servlet with the body as read. It also opens the request's {@link RequestScope} (its
 * session key and JSON-RPC id) for the filters and SDK code that run after it on this thread.
 */
final class GateFilter implements Filter {
    private static final Logger log = LoggerFactory.getLogger(GateFilter.class);

    private final McpJsonMapper mapper;
    private final Gate gate;
    private final String path;
    private final int maxBytes;

    GateFilter(McpJsonMapper mapper, Gate gate, String path, int maxBytes) {
        this.mapper = mapper;
        this.gate = gate;
        this.path = path;
        this.maxBytes = maxBytes;
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest req = (HttpServletRequest) request;
        HttpServletResponse res = (HttpServletResponse) response;
        String key = req.getHeader(Sessions.SESSION_HEADER);
        RequestScope.begin(key);
        try {
            if (!"POST".equals(req.getMethod()) || !path.equals(req.getRequestURI()) || !json(req.getContentType())
                    || req.getContentLengthLong() > maxBytes) {
                chain.doFilter(request, response); // not a message, or the SDK's to refuse (415, 413)
                return;
            }
            InputStream in = req.getInputStream();
            byte[] body = in.readNBytes(maxBytes + 1);
            if (body.length > maxBytes) {
                chain.doFilter(new Body(req, new SequenceInputStream(new ByteArrayInputStream(body), in)), response);
                return;
            }
            String text = new String(body, charset(req.getCharacterEncoding()));
            McpSchema.JSONRPCMessage message;
            try {
                message = McpSchema.deserializeJsonRpcMessage(mapper, text);
            } catch (IOException | RuntimeException e) {
                log.info("Refused a message the SDK cannot read ({} bytes): {}", body.length, e.toString());
                HttpErrors.write(res, 400, JsonRpc.write(mapper, JsonRpc.unreadable(mapper, text)));
                return;
            }
            if (message instanceof McpSchema.JSONRPCRequest r) {
                RequestScope.requestId(r.id());
            }
            Gate.Verdict verdict = gate.inspect(req.getHeader("Mcp-Session-Id"), key, message);
            if (verdict == Gate.Verdict.CONSUMED) {
                res.setStatus(202);
                return;
            }
            if (verdict.answer() != null) {
                int status = verdict.code() == JsonRpc.INVALID_REQUEST || verdict.code() == JsonRpc.PARSE_ERROR ? 400 : 200;
                HttpErrors.write(res, status, JsonRpc.write(mapper, verdict.answer()));
                return;
            }
            chain.doFilter(new Body(req, new ByteArrayInputStream(body)), response);
        } finally {
            RequestScope.end();
        }
    }

    /** The body's charset: the declared one, UTF-8 when none is declared or it is unknown. */
    private static Charset charset(String name) {
        try {
            return name == null ? StandardCharsets.UTF_8 : Charset.forName(name);
        } catch (RuntimeException unknown) {
            return StandardCharsets.UTF_8;
        }
    }

    private static boolean json(String contentType) {
        return contentType != null && contentType.toLowerCase(Locale.ROOT).startsWith("application/json");
    }

    /** The request with its body read again from what this filter took. */
    private static final class Body extends HttpServletRequestWrapper {
        private final InputStream body;

        Body(HttpServletRequest request, InputStream body) {
            super(request);
            this.body = body;
        }

        @Override
        public ServletInputStream getInputStream() {
            return new ServletInputStream() {
                private boolean finished;

                @Override
                public int read() throws IOException {
                    int b = body.read();
                    finished = b < 0;
                    return b;
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    int n = body.read(b, off, len);
                    finished = n < 0;
                    return n;
                }

                @Override
                public boolean isFinished() {
                    return finished;
                }

                @Override
                public boolean isReady() {
                    return true;
                }

                @Override
                public void setReadListener(ReadListener listener) {
                    throw new UnsupportedOperationException("the body is read blocking");
                }
            };
        }

        @Override
        public BufferedReader getReader() {
            return new BufferedReader(new InputStreamReader(body, charset(getCharacterEncoding())));
        }
    }
}
