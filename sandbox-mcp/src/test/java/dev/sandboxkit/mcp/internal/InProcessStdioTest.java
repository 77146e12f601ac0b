package dev.sandboxkit.mcp.internal;

import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.mcp.SandboxMcpServer;
import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.tools.SandboxTools;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link SandboxMcpServer} on stdio in-process, over pipes, with a fake driver: how failures of the sandbox backend
 * reach the client, and that the server ends when its input does.
 */
class InProcessStdioTest {
    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();

    private final FakeDriver driver = new FakeDriver();
    private SandboxManager manager;
    private SandboxMcpServer server;
    private PipedOutputStream toServer;
    private BufferedReader fromServer;

    @TempDir
    Path root;

    private void start() throws IOException {
        manager = SandboxManager.builder().driver(driver).workspaceRoot(root).build();
        SandboxTools tools = SandboxTools.builder(manager).spec(SandboxSpec.builder().image("fake:1").build()).build();
        PipedInputStream serverIn = new PipedInputStream(1 << 16);
        toServer = new PipedOutputStream(serverIn);
        PipedInputStream clientIn = new PipedInputStream(1 << 16);
        PipedOutputStream serverOut = new PipedOutputStream(clientIn);
        fromServer = new BufferedReader(new InputStreamReader(clientIn, StandardCharsets.UTF_8));
        server = SandboxMcpServer.builder(tools).stdio(serverIn, serverOut).sessionKey("in-process").start();
        send(Map.of("jsonrpc", "2.0", "id", 1, "method", "initialize", "params", Map.of("protocolVersion",
                "2025-06-18", "capabilities", Map.of(), "clientInfo", Map.of("name", "t", "version", "1"))));
        assertThat(read()).containsKey("result");
        send(Map.of("jsonrpc", "2.0", "method", "notifications/initialized"));
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
        if (manager != null) {
            manager.close();
        }
    }

    private void send(Map<String, Object> message) throws IOException {
        toServer.write((JSON.writeValueAsString(message) + "\n").getBytes(StandardCharsets.UTF_8));
        toServer.flush();
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> read() throws IOException {
        return JSON.readValue(fromServer.readLine(), Map.class);
    }

    @Test
    void anUnreachableEngineIsAToolErrorThatSaysSoAndIsRetryable() throws IOException {
        start();
        driver.setUnavailable(true);
        send(Map.of("jsonrpc", "2.0", "id", 2, "method", "tools/call",
                "params", Map.of("name", "run_command", "arguments", Map.of("command", "ls"))));
        Map<String, Object> r = read();
        assertThat(r).containsEntry("id", 2).containsKey("result");
        @SuppressWarnings("unchecked")
        Map<String, Object> result = (Map<String, Object>) r.get("result");
        assertThat(result).containsEntry("isError", true);
        assertThat(result.get("content").toString()).contains("The sandbox is not available")
                .contains("Trying again in a little while may work");
        assertThat(result.get("_meta")).isEqualTo(Map.of(ToolBridge.META_ERROR, "SandboxUnavailableException",
                ToolBridge.META_RETRYABLE, true));

        driver.setUnavailable(false);
        send(Map.of("jsonrpc", "2.0", "id", 3, "method", "tools/call",
                "params", Map.of("name", "run_command", "arguments", Map.of("command", "ls"))));
        assertThat(read().toString()).contains("Exit code: 0");
    }

    @Test
    void theServerClosesWhenItsInputEnds() throws Exception {
        start();
        assertThat(server.openSessions()).isEqualTo(1);
        toServer.close();
        assertThat(server.awaitClosed(Duration.ofSeconds(10))).isTrue();
        assertThat(server.openSessions()).isZero();
    }
}
