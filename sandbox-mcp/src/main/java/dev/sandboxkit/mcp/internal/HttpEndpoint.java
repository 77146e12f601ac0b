package dev.sandboxkit.mcp.internal;

import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;

import java.io.IOException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The embedded Jetty (Servlet 6.1) that serves the SDK's Streamable HTTP servlet at one path, behind
 * {@link AccessFilter}, {@link GateFilter} and {@link ErrorBodyFilter}, with {@link JsonErrorHandler} for every error page. Its threads
 * are daemons named {@code sandbox-mcp-http-*}, stopped by {@link #close()}.
 */
public final class HttpEndpoint implements AutoCloseable {
    private final Server server;
    private final ServerConnector connector;
    private final String path;

    private HttpEndpoint(Server server, ServerConnector connector, String path) {
        this.server = server;
        this.connector = connector;
        this.path = path;
    }

    /**
     * Starts serving.
     *
     * @param servlet     the SDK's transport servlet
     * @param path        where, for example {@code /mcp}
     * @param host        the address to bind
     * @param port        the port, {@code 0} for any free one
     * @param access      who may connect
     * @param idleTimeout how long a connection may stay silent
     * @param mapper      the SDK's JSON mapper, for error bodies
     * @param gate        what every message meets before the SDK
     * @param maxBytes    the largest message accepted
     * @return the running endpoint
     * @throws Exception if Jetty cannot start (the port is taken, the address is not local)
     */
    public static HttpEndpoint start(HttpServlet servlet, String path, String host, int port, HttpAccess access,
                                     Duration idleTimeout, McpJsonMapper mapper, Gate gate, int maxBytes)
            throws Exception {
        Objects.requireNonNull(servlet, "servlet");
        QueuedThreadPool threads = new QueuedThreadPool(200, 4);
        threads.setName("sandbox-mcp-http");
        threads.setDaemon(true);
        Server server = new Server(threads, new ScheduledExecutorScheduler("sandbox-mcp-http-scheduler", true), null);
        HttpConfiguration config = new HttpConfiguration();
        config.setSendServerVersion(false);
        config.setSendXPoweredBy(false);
        ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(config));
        connector.setHost(host);
        connector.setPort(port);
        connector.setIdleTimeout(idleTimeout.toMillis());
        server.addConnector(connector);

        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        context.addFilter(new FilterHolder(new AccessFilter(access, mapper)), "/*", EnumSet.of(DispatcherType.REQUEST));
        context.addFilter(new FilterHolder(new GateFilter(mapper, gate, path, maxBytes)), "/*",
                EnumSet.of(DispatcherType.REQUEST));
        context.addFilter(new FilterHolder(new ErrorBodyFilter(mapper)), "/*", EnumSet.of(DispatcherType.REQUEST));
        ServletHolder holder = new ServletHolder(servlet);
        holder.setAsyncSupported(true);
        context.addServlet(holder, path);
        context.addServlet(new ServletHolder(new NotFound()), "/"); // every other path, every method: 404
        context.setErrorHandler(new JsonErrorHandler(mapper));
        server.setErrorHandler(new JsonErrorHandler(mapper));
        server.setHandler(context);
        server.setStopAtShutdown(false); // the application stops it, in order, from its own shutdown
        try {
            server.start();
        } catch (Exception e) {
            server.stop();
            throw e;
        }
        return new HttpEndpoint(server, connector, path);
    }

    /**
     * The transport context of a request, for the SDK's context extractor: its session key (the
     * {@value Sessions#SESSION_HEADER} header) and its JSON-RPC id, which {@link GateFilter} read from its body.
     *
     * @param request the HTTP request
     * @return the context
     */
    public static McpTransportContext transportContext(HttpServletRequest request) {
        Map<String, Object> values = new HashMap<>();
        String key = request.getHeader(Sessions.SESSION_HEADER);
        if (key != null) {
            values.put(Sessions.KEY_CONTEXT, key);
        }
        Object id = RequestScope.requestId();
        if (id != null) {
            values.put(Calls.REQUEST_ID, id);
        }
        return values.isEmpty() ? McpTransportContext.EMPTY : McpTransportContext.create(values);
    }

    /** Answers 404 to everything but the MCP endpoint (Jetty's default answers 405 to a POST). */
    private static final class NotFound extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse res) throws IOException {
            res.sendError(404);
        }
    }

    /**
     * The port bound.
     *
     * @return the local port
     */
    public int port() {
        return connector.getLocalPort();
    }

    /**
     * The URL of the MCP endpoint.
     *
     * @return for example {@code http://127.0.0.1:8765/mcp}
     */
    public String url() {
        String host = connector.getHost();
        String shown = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
        return "http://" + shown + ":" + port() + path;
    }

    /** Stops Jetty: open connections are closed, its threads end. */
    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            throw new IllegalStateException("stopping the HTTP server failed: " + e, e);
        }
    }
}
