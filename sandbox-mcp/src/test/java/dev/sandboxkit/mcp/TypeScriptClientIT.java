package dev.sandboxkit.mcp;

import dev.sandboxkit.mcp.Servers.HttpServer;
import dev.sandboxkit.mcp.Servers.Installation;
import dev.sandboxkit.testkit.SandboxTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The packaged jar driven by the official TypeScript MCP SDK (see {@link NodeClient}), on the real engine: the
 * behaviours that SDK found, which differ from the Java SDK's (it writes a request's {@code "id"} last, and it
 * cancels a request the caller aborts).
 */
@Tag("node")
@SandboxTest(driver = "docker")
class TypeScriptClientIT {
    private static final List<Installation> USED = new CopyOnWriteArrayList<>();

    @TempDir
    static Path base;

    @BeforeAll
    static void prepare() {
        Servers.requireImage();
        NodeClient.install();
    }

    @AfterAll
    static void nothingLeaks() {
        Servers.killLeftovers();
        for (Installation i : USED) {
            Servers.assertNoContainersLeft(i.fleet());
            assertThat(i.workdirs()).as("unkeyed workspaces of " + i.fleet()).isEmpty();
        }
    }

    private static Installation installation(String name) {
        Installation i = Installation.create(base, name);
        USED.add(i);
        return i;
    }

    private static Map<String, Object> stdio(Installation inst, String server, String scenario) {
        List<String> command = inst.command(server);
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("transport", "stdio");
        config.put("command", command.get(0));
        config.put("args", command.subList(1, command.size()));
        config.put("stderr", Servers.log(server + ".server").toAbsolutePath().toString());
        config.put("scenario", scenario);
        return config;
    }

    @Test
    void anOversizedRequestWithItsIdLastIsRefusedWithThatIdAndTheSessionGoesOn() {
        Installation inst = installation("ts-oversize");
        Map<String, Object> config = stdio(inst, "ts-oversize", "oversize");
        config.put("bytes", 50 << 20);
        config.put("timeoutMs", 60_000);
        Map<String, Object> out = NodeClient.run(config, "ts-oversize", Duration.ofMinutes(3));

        // Without the id the SDK cannot match the answer and waits for its own timeout (-32001 after 60 s).
        assertThat(out.get("oversize")).as(out.toString()).isInstanceOfSatisfying(Map.class, o -> {
            assertThat(o.get("code")).isEqualTo(-32600);
            assertThat((String) o.get("message")).contains("Request too large");
            assertThat(((Number) o.get("ms")).longValue()).as("answered long before the client's timeout")
                    .isLessThan(30_000);
        });
        assertThat((String) out.get("after")).contains("still-alive");
    }

    @Test
    void anAbortedCallKillsItsCommandOverStdio() {
        Installation inst = installation("ts-cancel-stdio");
        Map<String, Object> config = stdio(inst, "ts-cancel-stdio", "cancel");
        config.put("killWithinMs", 30_000);
        assertKilled(NodeClient.run(config, "ts-cancel-stdio", Duration.ofMinutes(3)));
    }

    @Test
    void anAbortedCallKillsItsCommandOverHttp() {
        Installation inst = installation("ts-cancel-http");
        try (HttpServer server = HttpServer.start(inst.command("ts-cancel-http"), "ts-cancel-http", Map.of())) {
            Map<String, Object> config = new LinkedHashMap<>();
            config.put("transport", "http");
            config.put("url", server.baseUrl + "/mcp");
            config.put("scenario", "cancel");
            config.put("killWithinMs", 30_000);
            assertKilled(NodeClient.run(config, "ts-cancel-http", Duration.ofMinutes(3)));
        }
    }

    /** notifications/cancelled reached the server and its command stopped: sleep 300 no longer runs. */
    private static void assertKilled(Map<String, Object> out) {
        assertThat(out.get("killed")).as("sleep 300 ended after the abort: " + out).isEqualTo(true);
        assertThat((String) out.get("after")).contains("ps -o args").doesNotContain("sleep 300");
    }
}
