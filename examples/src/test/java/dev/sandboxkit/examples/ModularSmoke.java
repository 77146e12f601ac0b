package dev.sandboxkit.examples;

import dev.sandboxkit.ExecResult;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.mcp.SandboxMcpServer;
import dev.sandboxkit.micrometer.SandboxMetrics;
import dev.sandboxkit.store.jdbc.JdbcSessionStore;
import dev.sandboxkit.tools.SandboxTools;
import dev.sandboxkit.tools.ToolResult;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Run by {@link ModulePathExamplesTest} in a child JVM whose module path holds every published sandboxkit module
 * (this class stays on the class path, as a non-modular application would): it touches each one through its
 * exported API only, so a missing {@code requires}, {@code exports}, {@code opens} or {@code provides} fails here.
 * The JDBC store reads its migration scripts through its {@code opens}; the Docker driver comes in through service
 * binding; the MCP server speaks JSON-RPC over piped stdio.
 */
public final class ModularSmoke {
    private ModularSmoke() {
    }

    /**
     * Runs the smoke test and prints one line per module; exits non-zero on the first failure.
     *
     * @param args unused
     * @throws Exception on any failure
     */
    public static void main(String[] args) throws Exception {
        String image = System.getProperty("image", "sandboxkit-test:latest");
        Path dir = Files.createTempDirectory("modular-smoke");
        SandboxMetrics metrics = new SandboxMetrics();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        metrics.bindTo(registry);
        try (JdbcSessionStore store = JdbcSessionStore.h2(dir.resolve("sessions"));
             SandboxManager manager = SandboxManager.builder().driver("docker").store(store)
                     .workspaceRoot(dir.resolve("workspaces")).listener(metrics).build()) {
            metrics.monitor(manager);
            SandboxSpec spec = SandboxSpec.builder().image(image).pullPolicy(PullPolicy.IF_MISSING).build();
            ExecResult direct = manager.acquire("modular-1", spec).exec("echo", "api");
            check(direct.exitCode() == 0 && direct.stdout().equals("api\n"), "exec through the API: " + direct);
            System.out.println("module dev.sandboxkit.store.jdbc: schema v" + JdbcSessionStore.SCHEMA_VERSION
                    + ", session stored: " + store.find("modular-1").isPresent());

            SandboxTools tools = SandboxTools.builder(manager).spec(spec).build();
            ToolResult tool = tools.execute("modular-2", "run_command", "{\"command\":\"echo tools\"}");
            check(!tool.error() && tool.text().contains("tools"), "run_command tool: " + tool);
            System.out.println("module dev.sandboxkit.tools: run_command -> " + tool.text().strip().replace('\n', ' '));

            double execs = registry.find("sandboxkit.exec").timers().stream().mapToLong(t -> t.count()).sum();
            check(execs >= 2, "metrics counted " + execs + " execs");
            System.out.println("module dev.sandboxkit.micrometer: execs timed " + (long) execs);

            PipedOutputStream toServer = new PipedOutputStream();
            PipedInputStream serverIn = new PipedInputStream(toServer, 1 << 16);
            PipedInputStream fromServer = new PipedInputStream(1 << 16);
            PipedOutputStream serverOut = new PipedOutputStream(fromServer);
            try (SandboxMcpServer server = SandboxMcpServer.builder(tools).stdio(serverIn, serverOut).start()) {
                BufferedReader replies = new BufferedReader(new InputStreamReader(fromServer, StandardCharsets.UTF_8));
                send(toServer, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                        + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"smoke\",\"version\":\"1\"}}}");
                String init = replies.readLine();
                check(init != null && init.contains("\"serverInfo\""), "MCP initialize reply: " + init);
                send(toServer, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
                send(toServer, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
                        + "\"run_command\",\"arguments\":{\"command\":\"echo mcp\"},\"_meta\":{}}}");
                String call = replies.readLine();
                check(call != null && call.contains("mcp") && call.contains("\"id\":2"), "MCP tools/call reply: " + call);
                System.out.println("module dev.sandboxkit.mcp: tools/call answered");
                toServer.close();
            }
            manager.destroy("modular-1");
            tools.release("modular-2");
        }
        System.out.println("modular smoke ok");
    }

    private static void send(OutputStream out, String line) throws java.io.IOException {
        out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("failed: " + what);
        }
    }
}
