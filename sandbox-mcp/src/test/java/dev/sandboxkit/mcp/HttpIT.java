package dev.sandboxkit.mcp;

import dev.sandboxkit.mcp.Servers.HttpServer;
import dev.sandboxkit.mcp.Servers.Installation;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.testkit.SandboxTest;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.sandboxkit.mcp.Servers.await;
import static dev.sandboxkit.mcp.Servers.awaitNoContainers;
import static dev.sandboxkit.mcp.Servers.call;
import static dev.sandboxkit.mcp.Servers.containers;
import static dev.sandboxkit.mcp.Servers.run;
import static dev.sandboxkit.mcp.Servers.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The packaged jar on Streamable HTTP (loopback), on the real engine. Two servers run for the whole class: an open
 * one with short timings (2 s idle TTL, 3 s session sweep) for the workspace and bad-input checks, and a locked one
 * (bearer token from the environment, at most 2 sessions) for access and the session limit. The last test restarts
 * the open one on its store. {@code @SandboxTest} makes a missing engine fail these tests on CI.
 */
@Tag("slow")
@SandboxTest(driver = "docker")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HttpIT {
    private static final String TOKEN = "it-token-0123456789abcdef";
    private static final String HEADER = "X-Sandbox-Session";
    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();

    @TempDir
    static Path base;
    static Installation open;
    static Installation locked;
    static HttpServer openServer;
    static HttpServer lockedServer;
    static final List<HttpServer> STARTED = new ArrayList<>();

    @BeforeAll
    static void startServers() {
        Servers.requireImage();
        open = Installation.create(base, "http-open");
        locked = Installation.create(base, "http-locked");
        CompletableFuture<HttpServer> a = CompletableFuture.supplyAsync(() -> startOpen("http-open"));
        CompletableFuture<HttpServer> b = CompletableFuture.supplyAsync(() -> HttpServer.start(
                locked.command("http-locked", "--max-sessions", "2"), "http-locked",
                Map.of("SANDBOX_MCP_TOKEN", TOKEN)));
        openServer = a.join();
        lockedServer = b.join();
        STARTED.add(openServer);
        STARTED.add(lockedServer);
    }

    private static HttpServer startOpen(String name) {
        return HttpServer.start(open.command(name, "--idle-ttl", "2s", "--http-keep-alive", "2s",
                "--http-session-timeout", "3s"), name, Map.of());
    }

    @AfterAll
    static void stopAndCheckNothingLeaks() {
        try {
            for (HttpServer s : STARTED) {
                s.close();
                assertThat(s.process.exitValue()).as("exit after SIGTERM").isIn(0, 143);
                assertThat(Servers.read(s.stdout)).as("nothing on stdout, even over HTTP").isEmpty();
            }
        } finally {
            Servers.killLeftovers();
        }
        Servers.assertNoContainersLeft(open.fleet());
        Servers.assertNoContainersLeft(locked.fleet());
        // Only keyed workspaces are kept; every unkeyed one went with its session (closed, swept or shut down).
        assertThat(open.workdirs()).containsExactlyInAnyOrder("mcp-k.reap", "mcp-k.reattach", "mcp-k.other");
        assertThat(locked.workdirs()).isEmpty();
    }

    // ------------------------------------------------------------------ the open server

    @Test
    @Order(1)
    void toolsFilesTwoWorkspacesAndAnInvisibleReap() {
        McpSyncClient keyed = openServer.client(Map.of(HEADER, "reap"));
        McpSyncClient unkeyed = openServer.client(Map.of());
        try {
            assertThat(keyed.listTools().tools()).extracting(McpSchema.Tool::name).containsExactly("run_command",
                    "read_file", "write_file", "edit_file", "list_files", "search_files");
            assertThat(text(call(keyed, "write_file", Map.of("path", "dir/a.txt", "content", "over http\n"))))
                    .contains("dir/a.txt");
            assertThat(run(keyed, "cat dir/a.txt")).contains("Exit code: 0").contains("over http");
            McpSchema.ReadResourceResult r = keyed.readResource(new McpSchema.ReadResourceRequest(
                    "sandbox://workspace/dir/a.txt", null));
            assertThat(((McpSchema.TextResourceContents) r.contents().get(0)).text()).isEqualTo("over http\n");
            assertThat(keyed.listResources().resources()).extracting(McpSchema.Resource::uri)
                    .containsExactly("sandbox://workspace/dir/a.txt");

            assertThat(run(unkeyed, "cat dir/a.txt")).contains("Exit code: 1");
            assertThat(run(unkeyed, "echo theirs > theirs.txt")).contains("Exit code: 0");
            assertThat(run(keyed, "ls")).doesNotContain("theirs.txt");

            awaitNoContainers(open.fleet(), "mcp-k.reap", Duration.ofSeconds(30));
            assertThat(run(keyed, "cat dir/a.txt")).contains("Exit code: 0").contains("over http");
        } finally {
            keyed.closeGracefully();
            unkeyed.closeGracefully();
        }
    }

    @Test
    @Order(2)
    void aSessionKeyReattachesAfterAReconnectAndAnUnkeyedWorkspaceGoesWithItsSession() {
        McpSyncClient first = openServer.client(Map.of(HEADER, "reattach"));
        assertThat(run(first, "echo kept > kept.txt")).contains("Exit code: 0");
        first.closeGracefully(); // DELETE: the session ends, its sandbox is released

        McpSyncClient again = openServer.client(Map.of(HEADER, "reattach"));
        McpSyncClient other = openServer.client(Map.of(HEADER, "other"));
        McpSyncClient unkeyed = openServer.client(Map.of());
        try {
            assertThat(run(again, "cat kept.txt")).contains("kept");
            assertThat(run(other, "cat kept.txt")).contains("Exit code: 1");
            List<String> before = open.workdirs();
            assertThat(run(unkeyed, "echo gone-soon > f.txt")).contains("Exit code: 0");
            List<String> added = new ArrayList<>(open.workdirs());
            added.removeAll(before);
            assertThat(added).hasSize(1).allMatch(d -> d.startsWith("mcp-s."));
            unkeyed.closeGracefully();
            await(Duration.ofSeconds(20), () -> !open.workdirs().contains(added.get(0)),
                    () -> "the unkeyed workdir " + added.get(0) + " is still there");
        } finally {
            again.closeGracefully();
            other.closeGracefully();
        }
    }

    @Test
    @Order(3)
    void badInputGetsProtocolOrToolErrorsAndTheServerStaysUp() throws Exception {
        String url = openServer.baseUrl + "/mcp";
        String session = initialize(url, Map.of());

        // Malformed JSON-RPC: 400 with a JSON-RPC error body, no stack trace (the SDK's own body has one); not JSON
        // at all is a parse error, as on stdio.
        HttpResponse<String> malformed = post(url, "{not json", Map.of("Mcp-Session-Id", session));
        assertThat(malformed.statusCode()).isEqualTo(400);
        assertCleanError(malformed, -32700);
        HttpResponse<String> oldVersion = post(url, "{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}",
                Map.of("Mcp-Session-Id", session));
        assertThat(oldVersion.statusCode()).isEqualTo(400);
        assertCleanError(oldVersion, -32600);
        assertThat(oldVersion.body()).contains("\"id\":3");
        // params or arguments of the wrong JSON type: invalid params, in words (the SDK answered with Java's).
        for (String params : List.of("{\"name\":\"run_command\",\"arguments\":\"str\"}",
                "{\"name\":\"run_command\",\"arguments\":[1,2]}", "\"x\"")) {
            HttpResponse<String> bad = post(url, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":"
                    + params + "}", Map.of("Mcp-Session-Id", session));
            assertCleanError(bad, -32602);
            assertThat(bad.body()).as(params).contains("\"id\":4").containsAnyOf("arguments", "params");
        }
        HttpResponse<String> notRpc = post(url, "{\"hello\":1}", Map.of("Mcp-Session-Id", session));
        assertThat(notRpc.statusCode()).isEqualTo(400);
        assertCleanError(notRpc, -32600);
        HttpResponse<String> unknownSession = post(url, rpc(5, "tools/list", Map.of()), Map.of("Mcp-Session-Id", "nope"));
        assertThat(unknownSession.statusCode()).isEqualTo(404);
        assertCleanError(unknownSession, -32603);
        HttpResponse<String> badKey = post(url, initializeBody(), Map.of(HEADER, "k".repeat(300)));
        assertThat(badKey.statusCode()).isEqualTo(400);
        assertCleanError(badKey, -32000);
        HttpResponse<String> wrongPath = post(openServer.baseUrl + "/elsewhere", "{}", Map.of());
        assertThat(wrongPath.statusCode()).isEqualTo(404);
        assertCleanError(wrongPath, -32600);

        // A 100 MiB body, over the 16 MiB limit: 413 before the body is read. (Not with Expect: 100-continue: JDK
        // 17's client waits for the 100 forever when the answer is final, JDK-8286171.)
        HttpResponse<String> huge = HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                .header("Mcp-Session-Id", session)
                .POST(HttpRequest.BodyPublishers.fromPublisher(HttpRequest.BodyPublishers.ofInputStream(() ->
                        new ZeroStream(100L << 20)), 100L << 20)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(huge.statusCode()).isEqualTo(413);
        assertCleanError(huge, -32600);
        // A client that writes 32 MiB of its body before it looks for an answer still reads the 413: the server
        // drains the refused body instead of closing on unread bytes (a reset, which would destroy the answer).
        try (Socket raw = new Socket("127.0.0.1", URI.create(url).getPort())) {
            raw.setSoTimeout(30_000);
            OutputStream out = raw.getOutputStream();
            out.write(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Accept: application/json, text/event-stream\r\nMcp-Session-Id: " + session + "\r\n"
                    + "Content-Length: " + (100L << 20) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            byte[] chunk = new byte[1 << 20];
            for (int i = 0; i < 32; i++) {
                out.write(chunk);
            }
            out.flush();
            String status = new String(raw.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
            assertThat(status).isEqualTo("HTTP/1.1 413");
        }

        McpSyncClient client = openServer.client(Map.of());
        try {
            // Unknown tool: a JSON-RPC error. Arguments against the schema: a tool error. Both leave the session usable.
            assertThatThrownBy(() -> call(client, "no_such_tool", Map.of())).isInstanceOfSatisfying(McpError.class,
                    e -> {
                        assertThat(e.getJsonRpcError().code()).isEqualTo(-32602);
                        assertThat(e.getJsonRpcError().message()).contains("no_such_tool");
                    });
            McpSchema.CallToolResult invalid = call(client, "run_command", Map.of("command", 42));
            assertThat(invalid.isError()).isTrue();
            assertThat(text(invalid)).contains("validation failed");
            // A 100 MiB argument through the SDK client: refused with 413, reported to the caller as a failure.
            assertThatThrownBy(() -> call(client, "write_file", Map.of("path", "big.txt",
                    "content", "x".repeat(100 << 20)))).hasMessageContaining("413");
            assertThat(run(client, "echo alive")).contains("alive");
        } finally {
            client.closeGracefully();
        }

        // A client that disconnects in the middle of a call: the server carries on, and the idle sweep ends the
        // abandoned session once the call is over, destroying its unkeyed workspace.
        String abandoned = initialize(url, Map.of());
        String sandboxSession = "mcp-s." + abandoned;
        try (Socket s = new Socket("127.0.0.1", URI.create(url).getPort())) {
            byte[] body = rpc(7, "tools/call", Map.of("name", "run_command", "arguments",
                    Map.of("command", "sleep 4"))).getBytes(StandardCharsets.UTF_8);
            OutputStream out = s.getOutputStream();
            out.write(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Accept: application/json, text/event-stream\r\nMcp-Session-Id: " + abandoned + "\r\n"
                    + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            await(Duration.ofSeconds(30), () -> !containers(open.fleet(), sandboxSession).isEmpty(),
                    () -> "the call never started a sandbox");
            Servers.sleep(500);
        }
        McpSyncClient after = openServer.client(Map.of());
        try {
            assertThat(run(after, "echo still-serving")).contains("still-serving");
        } finally {
            after.closeGracefully();
        }
        assertThat(open.workdirs()).contains(sandboxSession);
        await(Duration.ofSeconds(40), () -> !open.workdirs().contains(sandboxSession),
                () -> "the abandoned session's workdir " + sandboxSession + " is still there");
    }

    // ------------------------------------------------------------------ the locked server

    @Test
    @Order(4)
    void aConfiguredTokenIsRequired() throws Exception {
        String url = lockedServer.baseUrl + "/mcp";
        HttpResponse<String> none = post(url, initializeBody(), Map.of());
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(none.headers().firstValue("WWW-Authenticate")).hasValueSatisfying(v -> assertThat(v).startsWith("Bearer"));
        assertCleanError(none, -32000);
        HttpResponse<String> wrong = post(url, initializeBody(), Map.of("Authorization", "Bearer not-the-token-at-all"));
        assertThat(wrong.statusCode()).isEqualTo(401);
        assertThatThrownBy(() -> lockedServer.client(Map.of())).isNotNull();

        McpSyncClient client = lockedServer.client(Map.of("Authorization", "Bearer " + TOKEN));
        try {
            assertThat(client.listTools().tools()).hasSize(6);
        } finally {
            client.closeGracefully();
        }
    }

    @Test
    @Order(5)
    void originAndHostAreChecked() throws Exception {
        String url = lockedServer.baseUrl + "/mcp";
        Map<String, String> auth = Map.of("Authorization", "Bearer " + TOKEN);
        Map<String, String> evil = new LinkedHashMap<>(auth);
        evil.put("Origin", "http://evil.example");
        HttpResponse<String> refused = post(url, initializeBody(), evil);
        assertThat(refused.statusCode()).isEqualTo(403);
        assertCleanError(refused, -32000);

        Map<String, String> local = new LinkedHashMap<>(auth);
        local.put("Origin", "http://localhost:6274");
        HttpResponse<String> allowed = post(url, initializeBody(), local);
        assertThat(allowed.statusCode()).isEqualTo(200);
        delete(url, allowed.headers().firstValue("Mcp-Session-Id").orElseThrow(), auth);

        // DNS rebinding: a page on evil.example resolving to 127.0.0.1 sends Host: evil.example.
        try (Socket s = new Socket("127.0.0.1", URI.create(url).getPort())) {
            s.getOutputStream().write(("GET /mcp HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer " + TOKEN
                    + "\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            String response = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(response).startsWith("HTTP/1.1 421");
        }
    }

    @Test
    @Order(6)
    void pastTheSessionLimitAClientGetsAClearError() throws Exception {
        Map<String, String> auth = Map.of("Authorization", "Bearer " + TOKEN);
        McpSyncClient one = lockedServer.client(auth);
        McpSyncClient two = lockedServer.client(auth);
        try {
            assertThatThrownBy(() -> lockedServer.client(auth)).satisfies(e -> assertThat(messages(e))
                    .contains("503").contains("maximum of 2 MCP sessions"));
            HttpResponse<String> raw = post(lockedServer.baseUrl + "/mcp", initializeBody(), auth);
            assertThat(raw.statusCode()).isEqualTo(503);
            assertThat(raw.headers().firstValue("Retry-After")).isPresent();
            assertCleanError(raw, -32000);
            assertThat(raw.body()).contains("maximum of 2 MCP sessions");

            two.closeGracefully(); // a place frees up
            McpSyncClient three = lockedServer.client(auth);
            assertThat(three.listTools().tools()).hasSize(6);
            three.closeGracefully();
        } finally {
            one.closeGracefully();
            two.close();
        }
    }

    // ------------------------------------------------------------------ restart

    @Test
    @Order(7)
    void keyedWorkspacesSurviveARestart() {
        openServer.stop();
        assertThat(openServer.process.exitValue()).isIn(0, 143);
        assertThat(containers(open.fleet(), null)).as("an orderly shutdown removes the containers").isEmpty();
        openServer = startOpen("http-open-restarted");
        STARTED.add(openServer);
        McpSyncClient client = openServer.client(Map.of(HEADER, "reattach"));
        try {
            // Nothing holds the session after an orderly shutdown: the first call works at once.
            McpSchema.CallToolResult r = call(client, "run_command", Map.of("command", "cat kept.txt"));
            assertThat(r.isError()).as(text(r)).isNotEqualTo(Boolean.TRUE);
            assertThat(text(r)).contains("kept");
        } finally {
            client.closeGracefully();
        }
    }

    // ------------------------------------------------------------------ in-flight calls and keep-alive

    @Test
    @Order(8)
    void aPongLaterThanTheKeepAliveIntervalIsAcceptedAndTheStreamStays() throws Exception {
        String url = openServer.baseUrl + "/mcp";
        String session = initialize(url, Map.of());
        try (Socket s = new Socket("127.0.0.1", URI.create(url).getPort())) {
            s.setSoTimeout(30_000);
            s.getOutputStream().write(("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                    + "Mcp-Session-Id: " + session + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            BufferedReader events = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
            Object pingId = nextPing(events);
            // A client busy for longer than the 2 s keep-alive interval: its pong comes late, and is still welcome.
            Servers.sleep(3500);
            HttpResponse<String> pong = post(url, JSON.writeValueAsString(Map.of("jsonrpc", "2.0", "id", pingId,
                    "result", Map.of())), Map.of("Mcp-Session-Id", session));
            assertThat(pong.statusCode()).as(pong.body()).isEqualTo(202);
            assertThat(nextPing(events)).as("the stream stays open and is pinged again").isNotEqualTo(pingId);
        }
        delete(url, session, Map.of());
    }

    @Test
    @Order(9)
    void aDeleteFromAnotherConnectionEndsAnInFlightCallWithAnError() throws Exception {
        McpSyncClient client = openServer.client(Map.of());
        try {
            CompletableFuture<McpSchema.CallToolResult> call = CompletableFuture.supplyAsync(() -> call(client,
                    "run_command", Map.of("command", "sleep 120", "timeout_seconds", 300)));
            String sandbox = awaitSleeping(open.fleet());
            String mcpSession = sandbox.substring("mcp-s.".length());
            delete(openServer.baseUrl + "/mcp", mcpSession, Map.of());
            // Before: the POST's stream closed empty, and the client waited for its 60 s timeout.
            assertThatThrownBy(() -> call.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(McpError.class)
                    .cause().hasMessageContaining("session was closed");
            awaitNoContainers(open.fleet(), sandbox, Duration.ofSeconds(30));
        } finally {
            client.close();
        }
    }

    @Test
    @Order(10)
    void sigtermEndsAnInFlightCallWithAnError() throws Exception {
        Installation term = Installation.create(base, "http-term");
        HttpServer server = HttpServer.start(term.command("http-term"), "http-term", Map.of());
        STARTED.add(server);
        McpSyncClient client = server.client(Map.of());
        try {
            CompletableFuture<McpSchema.CallToolResult> call = CompletableFuture.supplyAsync(() -> call(client,
                    "run_command", Map.of("command", "sleep 120", "timeout_seconds", 300)));
            awaitSleeping(term.fleet());
            server.process.destroy(); // SIGTERM
            assertThatThrownBy(() -> call.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(McpError.class)
                    .cause().hasMessageContaining("shutting down");
            Servers.awaitExit(server.process.toHandle(), Duration.ofSeconds(40));
        } finally {
            client.close();
        }
        Servers.assertNoContainersLeft(term.fleet());
        assertThat(term.workdirs()).isEmpty();
    }

    /** Waits until a sandbox of the fleet runs {@code sleep 120}; returns its session name. */
    private static String awaitSleeping(String fleet) {
        String[] found = new String[1];
        await(Duration.ofSeconds(60), () -> {
            for (String id : containers(fleet, null)) {
                String ps = Servers.exec(List.of(Servers.docker(), "exec", id, "ps", "-o", "args"));
                if (ps.contains("sleep 120")) {
                    found[0] = Servers.exec(List.of(Servers.docker(), "inspect", "--format",
                            "{{index .Config.Labels \"" + SandboxLabels.SESSION + "\"}}", id)).trim();
                    return true;
                }
            }
            return false;
        }, () -> "no sandbox of " + fleet + " runs sleep 120");
        return found[0];
    }

    /** Reads server-sent events until a ping request; returns its id. */
    @SuppressWarnings("unchecked")
    private static Object nextPing(BufferedReader events) throws IOException {
        for (String line; (line = events.readLine()) != null; ) {
            if (line.startsWith("data:")) {
                Map<String, Object> m = JSON.readValue(line.substring(5).trim(), Map.class);
                if ("ping".equals(m.get("method"))) {
                    return m.get("id");
                }
            }
        }
        throw new AssertionError("the event stream ended before a ping came");
    }

    // ------------------------------------------------------------------ raw HTTP

    private static String initializeBody() {
        return rpc(1, "initialize", Map.of("protocolVersion", "2025-06-18", "capabilities", Map.of(),
                "clientInfo", Map.of("name", "raw", "version", "1")));
    }

    /** Initializes a raw session and returns its Mcp-Session-Id. */
    private static String initialize(String url, Map<String, String> headers) throws Exception {
        HttpResponse<String> r = post(url, initializeBody(), headers);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        String session = r.headers().firstValue("Mcp-Session-Id").orElseThrow();
        Map<String, String> h = new LinkedHashMap<>(headers);
        h.put("Mcp-Session-Id", session);
        HttpResponse<String> initialized = post(url, JSON.writeValueAsString(Map.of("jsonrpc", "2.0",
                "method", "notifications/initialized")), h);
        assertThat(initialized.statusCode()).isEqualTo(202);
        return session;
    }

    private static void delete(String url, String session, Map<String, String> headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60)).DELETE()
                .header("Mcp-Session-Id", session);
        headers.forEach(b::header);
        assertThat(HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
    }

    private static HttpResponse<String> post(String url, String body, Map<String, String> headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        headers.forEach(b::header);
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String rpc(int id, String method, Map<String, Object> params) {
        try {
            return JSON.writeValueAsString(Map.of("jsonrpc", "2.0", "id", id, "method", method, "params", params));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** A JSON-RPC error envelope with this code, and nothing of the server's insides. */
    @SuppressWarnings("unchecked")
    private static void assertCleanError(HttpResponse<String> r, int code) throws IOException {
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v)
                .startsWith("application/json"));
        Map<String, Object> body = JSON.readValue(r.body(), Map.class);
        assertThat(body).as(r.body()).containsEntry("jsonrpc", "2.0").containsKey("error");
        assertThat((Map<String, Object>) body.get("error")).containsEntry("code", code).containsKey("message");
        assertThat(r.body()).doesNotContain("stackTrace").doesNotContain("Exception").doesNotContain(".java")
                .doesNotContain("jetty");
    }

    private static String messages(Throwable e) {
        StringBuilder b = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            b.append(t).append('\n');
        }
        return b.toString();
    }

    /** {@code n} bytes of zeros, produced on demand. */
    private static final class ZeroStream extends InputStream {
        private long left;

        ZeroStream(long n) {
            this.left = n;
        }

        @Override
        public int read() {
            return left-- > 0 ? 0 : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (left <= 0) {
                return -1;
            }
            int n = (int) Math.min(len, left);
            java.util.Arrays.fill(b, off, off + n, (byte) 0);
            left -= n;
            return n;
        }
    }
}
