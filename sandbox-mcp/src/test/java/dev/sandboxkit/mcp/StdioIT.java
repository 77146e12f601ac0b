package dev.sandboxkit.mcp;

import dev.sandboxkit.mcp.Servers.Installation;
import dev.sandboxkit.testkit.SandboxTest;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static dev.sandboxkit.mcp.Servers.awaitExit;
import static dev.sandboxkit.mcp.Servers.awaitNoContainers;
import static dev.sandboxkit.mcp.Servers.call;
import static dev.sandboxkit.mcp.Servers.containers;
import static dev.sandboxkit.mcp.Servers.run;
import static dev.sandboxkit.mcp.Servers.serverProcess;
import static dev.sandboxkit.mcp.Servers.stdioClient;
import static dev.sandboxkit.mcp.Servers.text;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The packaged jar on stdio, started by the SDK's own {@code McpClient} as a child process, on the real engine.
 * {@code @SandboxTest} makes a missing engine fail these tests (never skip them) on CI.
 */
@SandboxTest(driver = "docker")
class StdioIT {
    private static final List<String> TOOLS = List.of("run_command", "read_file", "write_file", "edit_file",
            "list_files", "search_files");
    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();
    private static final List<Installation> USED = new CopyOnWriteArrayList<>();

    @TempDir
    static Path base;

    @BeforeAll
    static void imageExists() {
        Servers.requireImage();
    }

    @AfterAll
    static void nothingLeaks() {
        Servers.killLeftovers();
        for (Installation i : USED) {
            Servers.assertNoContainersLeft(i.fleet());
        }
    }

    private static Installation installation(String name) {
        Installation i = Installation.create(base, name);
        USED.add(i);
        return i;
    }

    @Test
    void twoClientsGetTwoWorkspacesAndAnIdleReapIsInvisible() {
        Installation inst = installation("stdio-two");
        CompletableFuture<McpSyncClient> keyedStart = CompletableFuture.supplyAsync(() -> stdioClient(
                inst.command("alpha", "--session-key", "alpha", "--idle-ttl", "2s"), "stdio-alpha"));
        CompletableFuture<McpSyncClient> unkeyedStart = CompletableFuture.supplyAsync(() -> stdioClient(
                inst.command("unkeyed", "--idle-ttl", "2s"), "stdio-unkeyed"));
        McpSyncClient alpha = keyedStart.join();
        McpSyncClient unkeyed = unkeyedStart.join();
        try {
            List<McpSchema.Tool> tools = alpha.listTools().tools();
            assertThat(tools).extracting(McpSchema.Tool::name).containsExactlyElementsOf(TOOLS);
            assertThat(tools.get(0).inputSchema().toString()).contains("command");
            // Titles for people, hints for clients: run_command changes things and cannot be repeated safely, the
            // sandbox has no network (closed world); read_file only reads; write_file may be repeated.
            assertThat(tools).allSatisfy(t -> assertThat(t.title()).as(t.name()).isNotBlank());
            McpSchema.ToolAnnotations runHints = tools.get(0).annotations();
            assertThat(runHints.readOnlyHint()).isFalse();
            assertThat(runHints.destructiveHint()).isTrue();
            assertThat(runHints.idempotentHint()).isFalse();
            assertThat(runHints.openWorldHint()).isFalse();
            assertThat(tools.get(1).annotations().readOnlyHint()).isTrue();
            assertThat(tools.get(2).annotations().idempotentHint()).isTrue();
            assertThat(alpha.getServerInstructions()).contains("/workspace");

            assertThat(run(alpha, "echo written-by-alpha > note.txt")).contains("Exit code: 0");
            assertThat(run(alpha, "cat note.txt")).contains("Exit code: 0").contains("written-by-alpha");
            assertThat(text(call(alpha, "read_file", Map.of("path", "note.txt")))).contains("written-by-alpha");
            McpSchema.ReadResourceResult resource = alpha.readResource(
                    new McpSchema.ReadResourceRequest("sandbox://workspace/note.txt", null));
            assertThat(((McpSchema.TextResourceContents) resource.contents().get(0)).text())
                    .isEqualTo("written-by-alpha\n");
            // resources/list names the session's files (docs/mcp.md promises them as resources).
            assertThat(run(alpha, "mkdir -p sub && printf 'x' > sub/deep.txt")).contains("Exit code: 0");
            assertThat(alpha.listResources().resources()).extracting(McpSchema.Resource::uri)
                    .containsExactly("sandbox://workspace/note.txt", "sandbox://workspace/sub/deep.txt");

            // The other client's workspace is its own: no note.txt there, and its files do not show up in alpha's.
            assertThat(run(unkeyed, "cat note.txt")).contains("Exit code: 1");
            assertThat(run(unkeyed, "echo mine > mine.txt && ls")).contains("mine.txt");
            assertThat(run(alpha, "ls")).contains("note.txt").doesNotContain("mine.txt");
            assertThat(inst.workdirs()).hasSize(2).contains("mcp-k.alpha");

            // Idle for the 2 s TTL: the container is reaped, the files stay, and the next call resumes transparently.
            awaitNoContainers(inst.fleet(), "mcp-k.alpha", Duration.ofSeconds(30));
            assertThat(run(alpha, "cat note.txt")).contains("Exit code: 0").contains("written-by-alpha");
            assertThat(containers(inst.fleet(), "mcp-k.alpha")).hasSize(1);

            // The unkeyed client goes away: nobody can reattach to its workspace, so it is destroyed with its files.
            ProcessHandle unkeyedServer = serverProcess("unkeyed");
            unkeyed.closeGracefully();
            awaitExit(unkeyedServer, Duration.ofSeconds(30));
            assertThat(inst.workdirs()).containsExactly("mcp-k.alpha");

            ProcessHandle alphaServer = serverProcess("alpha");
            alpha.closeGracefully();
            awaitExit(alphaServer, Duration.ofSeconds(30));
            assertThat(containers(inst.fleet(), null)).isEmpty();
            assertThat(inst.workdirs()).containsExactly("mcp-k.alpha"); // kept for the next reattach
        } finally {
            alpha.close();
            unkeyed.close();
        }
    }

    /**
     * Issue 33's "done when": an MCP agent on a network-none sandbox fetches from the host its operator allowed
     * (--egress), and only from it; the model is told which. The upstream is an HTTP server on 127.0.0.1, named by a
     * CIDR rule, so the server's own DNS is never asked.
     */
    @Test
    @Tag("slow")
    void anAgentReachesTheAllowedHostOnlyThroughTheEgressProxy() throws IOException {
        java.net.ServerSocket upstream = new java.net.ServerSocket(0, 10, java.net.InetAddress.getLoopbackAddress());
        Thread answering = new Thread(() -> {
            while (!upstream.isClosed()) {
                try (java.net.Socket s = upstream.accept()) {
                    BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(),
                            StandardCharsets.ISO_8859_1));
                    for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
                        // the request head: any request gets the package
                    }
                    s.getOutputStream().write(("HTTP/1.1 200 OK\r\nContent-Length: 14\r\nConnection: close\r\n\r\n"
                            + "package-bytes\n").getBytes(StandardCharsets.US_ASCII));
                } catch (IOException e) {
                    // closed at the end of the test, or a client that went away
                }
            }
        }, "egress-upstream");
        answering.setDaemon(true);
        answering.start();
        int port = upstream.getLocalPort();
        Installation inst = installation("stdio-egress");
        McpSyncClient agent = stdioClient(inst.command("egress", "--egress", "127.0.0.1/32:" + port), "stdio-egress");
        try {
            assertThat(agent.getServerInstructions()).contains("127.0.0.1/32:" + port);
            assertThat(run(agent, "wget -q -O - http://127.0.0.1:" + port + "/pkg")).contains("package-bytes");
            McpSchema.CallToolResult other = call(agent, "run_command",
                    Map.of("command", "wget -q -O - http://127.0.0.2:" + port + "/pkg"));
            assertThat(text(other)).contains("403").doesNotContain("package-bytes");
            assertThat(run(agent, "nslookup example.com || echo no-dns")).contains("no-dns");
        } finally {
            agent.closeGracefully();
            upstream.close();
        }
        awaitNoContainers(inst.fleet(), null, Duration.ofSeconds(60));
    }

    @Test
    @Tag("slow") // the default tier keeps the first test: the adapter end to end on the real engine
    void killedAndStartedAgainWithTheSameKeyTheServerResumesTheWorkspace() {
        Installation inst = installation("stdio-restart");
        String[] opts = {"--session-key", "gamma", "--lease", "2s"};
        McpSyncClient first = stdioClient(inst.command("restart-1", opts), "stdio-restart-1");
        List<String> crashed;
        try {
            assertThat(run(first, "echo before-the-crash > state.txt")).contains("Exit code: 0");
            crashed = containers(inst.fleet(), "mcp-k.gamma");
            assertThat(crashed).hasSize(1);
            ProcessHandle server = serverProcess("restart-1");
            server.destroyForcibly(); // kill -9: no shutdown at all, the container is left running
            awaitExit(server, Duration.ofSeconds(20));
        } finally {
            first.close();
        }
        assertThat(containers(inst.fleet(), "mcp-k.gamma")).as("the crashed server's container").isEqualTo(crashed);

        McpSyncClient second = stdioClient(inst.command("restart-2", opts), "stdio-restart-2");
        try {
            // The crashed server's hold lapses after its 2 s lease; until then a call says so, retryable.
            String out = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
            while (out == null) {
                McpSchema.CallToolResult r = call(second, "run_command", Map.of("command", "cat state.txt"));
                if (!Boolean.TRUE.equals(r.isError())) {
                    out = text(r);
                } else {
                    assertThat(r.meta()).as(text(r)).containsEntry("dev.sandboxkit/retryable", true);
                    assertThat(System.nanoTime()).as("takeover after the lease: " + text(r)).isLessThan(deadline);
                    Servers.sleep(500);
                }
            }
            assertThat(out).contains("Exit code: 0").contains("before-the-crash");
            assertThat(containers(inst.fleet(), "mcp-k.gamma")).as("taken over: the old container removed")
                    .hasSize(1).doesNotContainAnyElementsOf(crashed);
            ProcessHandle server = serverProcess("restart-2");
            second.closeGracefully(); // stdin closed, then SIGTERM: an orderly shutdown
            awaitExit(server, Duration.ofSeconds(30));
        } finally {
            second.close();
        }
        // The orderly shutdown removed its container and kept the files (HttpIT restarts after an orderly shutdown).
        assertThat(containers(inst.fleet(), null)).isEmpty();
        assertThat(inst.workdirs()).containsExactly("mcp-k.gamma");
    }

    @Test
    @Tag("slow") // the default tier keeps the first test: the adapter end to end on the real engine
    void killedWithoutAKeyTheNextServerOnTheStoreRemovesItsWorkspaceToo() {
        // Issue 29 D5: an unkeyed workspace nobody can name again must not outlive a server killed with -9.
        Installation inst = installation("stdio-unkeyed-kill");
        String[] opts = {"--lease", "2s", "--orphan-grace", "2s"};
        McpSyncClient first = stdioClient(inst.command("unkeyed-1", opts), "stdio-unkeyed-1");
        List<String> orphaned;
        try {
            assertThat(run(first, "echo lost > state.txt")).contains("Exit code: 0");
            orphaned = inst.workdirs();
            assertThat(orphaned).hasSize(1).allMatch(w -> w.startsWith("mcp-s."));
            ProcessHandle server = serverProcess("unkeyed-1");
            server.destroyForcibly(); // kill -9: no shutdown, the container is left running
            awaitExit(server, Duration.ofSeconds(20));
        } finally {
            first.close();
        }
        assertThat(inst.workdirs()).as("the killed server's workdir, still there").isEqualTo(orphaned);

        McpSyncClient second = stdioClient(inst.command("unkeyed-2", opts), "stdio-unkeyed-2");
        try {
            assertThat(run(second, "echo mine > state.txt")).contains("Exit code: 0");
            // Its sweep runs at start and every 2 s (the grace); the dead server's lease lapses after 2 s.
            Servers.await(Duration.ofSeconds(60), () -> !inst.workdirs().containsAll(orphaned),
                    () -> "the killed server's workdir is still there: " + inst.workdirs());
            assertThat(inst.workdirs()).as("only the second server's own").hasSize(1).doesNotContainAnyElementsOf(orphaned);
            assertThat(containers(inst.fleet(), orphaned.get(0))).as("nor its container").isEmpty();
            ProcessHandle server = serverProcess("unkeyed-2");
            second.closeGracefully();
            awaitExit(server, Duration.ofSeconds(30));
        } finally {
            second.close();
        }
        assertThat(inst.workdirs()).as("the orderly shutdown destroyed its unkeyed workspace").isEmpty();
        assertThat(containers(inst.fleet(), null)).isEmpty();
    }

    @Test
    @Tag("slow") // the default tier keeps the first test: the adapter end to end on the real engine
    void badInputGetsErrorsAndTheServerCarriesOnUntilTheClientLeavesMidCall() throws Exception {
        Installation inst = installation("stdio-raw");
        Path log = Servers.log("stdio-raw");
        Process p = new ProcessBuilder(inst.command("raw"))
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        Raw io = new Raw(p);
        try {
            io.send(Map.of("jsonrpc", "2.0", "id", 1, "method", "initialize", "params", Map.of(
                    "protocolVersion", "2025-06-18", "capabilities", Map.of(),
                    "clientInfo", Map.of("name", "raw", "version", "1"))));
            assertThat(io.response(1)).containsKey("result");
            io.send(Map.of("jsonrpc", "2.0", "method", "notifications/initialized"));

            // Malformed JSON-RPC: each line gets its own error; blank lines are skipped (the SDK would end the session).
            io.line("{not json");
            assertThat(io.error(null)).containsEntry("code", -32700);
            io.line("");
            io.line("   ");
            io.line("{\"hello\":1}");
            assertThat(io.error(null)).containsEntry("code", -32600);
            io.line("[{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}]");
            assertThat(io.error(null)).containsEntry("code", -32600);
            io.send(Map.of("jsonrpc", "2.0", "id", 10, "method", "no/such/method"));
            assertThat(io.error(10)).containsEntry("code", -32601);

            // Unknown tool: a protocol error that names it. Arguments against the schema: a tool error, before any
            // sandbox work.
            io.send(toolCall(11, "no_such_tool", Map.of()));
            assertThat(io.error(11)).containsEntry("code", -32602).extractingByKey("message").asString()
                    .contains("no_such_tool").contains("run_command");
            io.send(toolCall(12, "read_file", Map.of("path", 7)));
            assertThat(io.result(12)).containsEntry("isError", true).extractingByKey("content").asString()
                    .contains("validation failed");
            io.send(toolCall(13, "run_command", Map.of("command", "true", "bogus", 1)));
            assertThat(io.result(13)).containsEntry("isError", true).extractingByKey("content").asString()
                    .contains("bogus");

            // params or arguments of the wrong JSON type: invalid params, said in words, not in Java.
            io.line("{\"jsonrpc\":\"2.0\",\"id\":40,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\","
                    + "\"arguments\":\"str\"}}");
            assertInvalidParams(io.error(40), "arguments");
            io.line("{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\","
                    + "\"arguments\":[1,2]}}");
            assertInvalidParams(io.error(41), "arguments");
            io.line("{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/call\",\"params\":\"x\"}");
            assertInvalidParams(io.error(42), "params");
            io.line("{\"jsonrpc\":\"2.0\",\"id\":43,\"method\":\"resources/read\",\"params\":{\"uri\":[1]}}");
            assertInvalidParams(io.error(43), "uri");
            // Only JSON-RPC 2.0.
            io.line("{\"jsonrpc\":\"1.0\",\"id\":44,\"method\":\"ping\"}");
            assertThat(io.error(44)).containsEntry("code", -32600).extractingByKey("message").asString()
                    .contains("2.0");

            // A 100 MiB argument (over the 16 MiB message limit): an error for that request, streamed past, not held.
            io.hugeWrite(14, 100 * 1024 * 1024, false);
            assertThat(io.error(14)).containsEntry("code", -32600).extractingByKey("message").asString()
                    .contains("Request too large");
            // The same with "id" after the 100 MiB (as the TypeScript SDK writes it): answered with that id.
            io.hugeWrite("last-14", 100 * 1024 * 1024, true);
            assertThat(io.error("last-14")).containsEntry("code", -32600).extractingByKey("message").asString()
                    .contains("Request too large");

            io.send(toolCall(15, "run_command", Map.of("command", "echo still-alive")));
            assertThat(io.result(15).toString()).contains("still-alive");
            assertThat(inst.workdirs()).hasSize(1);

            // notifications/cancelled stops the call: its command is killed in the sandbox and no answer follows.
            io.send(toolCall(50, "run_command", Map.of("command", "sleep 300", "timeout_seconds", 600)));
            Servers.await(Duration.ofSeconds(60), () -> sandboxPs(inst).contains("sleep 300"),
                    () -> "sleep 300 never started: " + sandboxPs(inst));
            io.send(Map.of("jsonrpc", "2.0", "method", "notifications/cancelled",
                    "params", Map.of("requestId", 50, "reason", "the user stopped it")));
            Servers.await(Duration.ofSeconds(30), () -> !sandboxPs(inst).contains("sleep 300"),
                    () -> "sleep 300 still runs after the cancellation: " + sandboxPs(inst));
            io.send(Map.of("jsonrpc", "2.0", "id", 51, "method", "ping"));
            assertThat(io.response(51)).containsKey("result");
            assertThat(io.seenIds()).doesNotContain(50);

            // The client leaves in the middle of a long call: the process ends promptly and cleans up after itself.
            io.send(toolCall(16, "run_command", Map.of("command", "sleep 60", "timeout_seconds", 120)));
            Servers.sleep(1500);
            long left = System.nanoTime();
            p.getOutputStream().close();
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("the server exits after its client left").isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - left)).isLessThan(Duration.ofSeconds(30));
            assertThat(p.exitValue()).isZero();
            io.readerDone();
            assertThat(io.notJson).as("stdout carries only JSON-RPC").isEmpty();
            assertThat(containers(inst.fleet(), null)).isEmpty();
            assertThat(inst.workdirs()).as("the unkeyed workspace is deleted with its session").isEmpty();
        } finally {
            p.destroyForcibly();
        }
    }

    private static void assertInvalidParams(Map<String, Object> error, String naming) {
        assertThat(error).containsEntry("code", -32602);
        assertThat((String) error.get("message")).contains(naming).doesNotContain("Exception")
                .doesNotContain("jackson").doesNotContain("java.");
    }

    /** What runs in the installation's one sandbox, seen through the engine (not through the server under test). */
    private static String sandboxPs(Installation inst) {
        List<String> ids = containers(inst.fleet(), null);
        assertThat(ids).hasSize(1);
        return Servers.exec(List.of(Servers.docker(), "exec", ids.get(0), "ps", "-o", "args"));
    }

    private static Map<String, Object> toolCall(int id, String name, Map<String, Object> args) {
        return Map.of("jsonrpc", "2.0", "id", id, "method", "tools/call",
                "params", Map.of("name", name, "arguments", args));
    }

    /** A raw stdio client: writes lines, reads every stdout line as JSON. */
    private static final class Raw {
        final Process process;
        final OutputStream in;
        final BlockingQueue<Map<String, Object>> messages = new LinkedBlockingQueue<>();
        final List<String> notJson = new CopyOnWriteArrayList<>();
        final Thread reader;
        final List<Map<String, Object>> seen = new ArrayList<>();

        Raw(Process process) {
            this.process = process;
            this.in = process.getOutputStream();
            this.reader = new Thread(this::read, "raw-stdio-reader");
            reader.setDaemon(true);
            reader.start();
        }

        private void read() {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    try {
                        @SuppressWarnings("unchecked")
                        Map<String, Object> m = JSON.readValue(line, Map.class);
                        messages.add(m);
                    } catch (IOException | RuntimeException e) {
                        notJson.add(line);
                    }
                }
            } catch (IOException ignored) {
                // the process ended
            }
        }

        void readerDone() throws InterruptedException {
            reader.join(10_000);
        }

        void send(Map<String, Object> message) throws IOException {
            line(JSON.writeValueAsString(message));
        }

        void line(String line) throws IOException {
            in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
        }

        /** Writes a write_file call whose content has this many bytes, in chunks, with its id first or last. */
        void hugeWrite(Object id, int bytes, boolean idLast) throws IOException {
            String idMember = "\"id\":" + JSON.writeValueAsString(id);
            in.write(("{\"jsonrpc\":\"2.0\"," + (idLast ? "" : idMember + ",") + "\"method\":\"tools/call\","
                    + "\"params\":{\"name\":\"write_file\",\"arguments\":{\"path\":\"big.txt\",\"content\":\"")
                    .getBytes(StandardCharsets.UTF_8));
            byte[] chunk = "x".repeat(1 << 20).getBytes(StandardCharsets.US_ASCII);
            for (int written = 0; written < bytes; written += chunk.length) {
                in.write(chunk);
            }
            in.write(("\"}}" + (idLast ? "," + idMember : "") + "}\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
        }

        /** The ids of every message read so far. */
        List<Object> seenIds() {
            List<Object> ids = new ArrayList<>();
            seen.forEach(m -> ids.add(m.get("id")));
            messages.forEach(m -> ids.add(m.get("id")));
            return ids;
        }

        /** The next message answering this id ({@code null}: an error without id). */
        Map<String, Object> response(Object id) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                for (Map<String, Object> m : seen) {
                    if (java.util.Objects.equals(m.get("id"), id)) {
                        seen.remove(m);
                        return m;
                    }
                }
                long left = deadline - System.nanoTime();
                Map<String, Object> m = messages.poll(Math.max(0, left), TimeUnit.NANOSECONDS);
                if (m == null) {
                    throw new AssertionError("no response with id " + id + "; other messages: " + seen);
                }
                seen.add(m);
            }
        }

        @SuppressWarnings("unchecked")
        Map<String, Object> error(Object id) throws InterruptedException {
            Map<String, Object> m = response(id);
            assertThat(m).as("an error response").containsKey("error");
            return (Map<String, Object>) m.get("error");
        }

        @SuppressWarnings("unchecked")
        Map<String, Object> result(Object id) throws InterruptedException {
            Map<String, Object> m = response(id);
            assertThat(m).as("a result").containsKey("result");
            return (Map<String, Object>) m.get("result");
        }
    }
}
