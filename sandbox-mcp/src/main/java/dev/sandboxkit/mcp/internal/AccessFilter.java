package dev.sandboxkit.mcp.internal;

import io.modelcontextprotocol.json.McpJsonMapper;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;

/**
 * Refuses requests before they reach the MCP servlet: a {@code Host} that is not loopback when bound to loopback
 * (421), an {@code Origin} that is not allowed (403; the SDK checks none by default), a missing or wrong bearer
 * token (401 with {@code WWW-Authenticate}), a session key that is not one (400). Each refusal is a JSON-RPC error body, as everything this server says.
 */
final class AccessFilter implements Filter {
    private static final Logger log = LoggerFactory.getLogger(AccessFilter.class);

    private final HttpAccess access;
    private final McpJsonMapper mapper;

    AccessFilter(HttpAccess access, McpJsonMapper mapper) {
        this.access = access;
        this.mapper = mapper;
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest req = (HttpServletRequest) request;
        HttpServletResponse res = (HttpServletResponse) response;
        if (access.loopbackHosts() && !HttpAccess.loopbackHost(req.getHeader("Host"))) {
            refuse(req, res, 421, "Invalid Host header: this server answers only requests addressed to its loopback "
                    + "address");
            return;
        }
        String origin = req.getHeader("Origin");
        if (origin != null && !access.originAllowed(origin)) {
            refuse(req, res, 403, "Origin not allowed: " + origin + " (see --allowed-origin)");
            return;
        }
        if (!access.authorized(req.getHeader("Authorization"))) {
            res.setHeader("WWW-Authenticate", "Bearer realm=\"sandbox-mcp\"");
            refuse(req, res, 401, "Unauthorized: this server needs the header Authorization: Bearer <token>");
            return;
        }
        String key = req.getHeader(Sessions.SESSION_HEADER);
        if (key != null) {
            try {
                Sessions.checkKey(key);
            } catch (IllegalArgumentException e) {
                refuse(req, res, 400, "Invalid " + Sessions.SESSION_HEADER + " header: " + e.getMessage());
                return;
            }
        }
        chain.doFilter(request, response);
    }

    private void refuse(HttpServletRequest req, HttpServletResponse res, int status, String message)
            throws IOException {
        log.info("Refused {} {} from {}: {}", req.getMethod(), req.getRequestURI(), req.getRemoteAddr(), status);
        HttpErrors.write(res, status, JsonRpc.error(mapper, null, JsonRpc.SERVER_ERROR, message));
    }
}
