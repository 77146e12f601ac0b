package dev.sandboxkit.docker.internal.engine;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/** The raw HTTP client against a scripted fake engine: version negotiation, bodies, keep-alive. */
class EngineClientTest {
    private FakeEngine engine;

    @AfterEach
    void stop() throws IOException {
        if (engine != null) {
            engine.close();
        }
    }

    @Test
    void negotiatesTheApiVersionOnceAndPrefersV141() throws Exception {
        engine = new FakeEngine(version("1.47", "1.44"), false);
        try (EngineClient client = new EngineClient(engine.host())) {
            assertThat(client.call("GET", "/exec/x/json", null).status()).isEqualTo(200);
            assertThat(client.call("GET", "/exec/y/json", null).status()).isEqualTo(200);
        }
        assertThat(engine.requests).containsExactly("GET /version", "GET /v1.44/exec/x/json", "GET /v1.44/exec/y/json");

        engine.close();
        engine = new FakeEngine(version("1.43", "1.12"), false);
        try (EngineClient client = new EngineClient(engine.host())) {
            client.call("GET", "/_ping", null);
        }
        assertThat(engine.requests).containsExactly("GET /version", "GET /v1.41/_ping");

        engine.close();
        engine = new FakeEngine(version("1.40", "1.12"), false);
        try (EngineClient client = new EngineClient(engine.host())) {
            client.call("GET", "/_ping", null);
        }
        assertThat(engine.requests).containsExactly("GET /version", "GET /v1.40/_ping");
    }

    @Test
    void ignoresApiVersionsThatOverflowAnInt() throws Exception {
        // 4294968 * 1000 wraps to 704: without a bound it would pick the engine's minimum, 1.12.
        engine = new FakeEngine(version("4294968.41", "1.12"), false);
        try (EngineClient client = new EngineClient(engine.host())) {
            client.call("GET", "/_ping", null);
        }
        assertThat(engine.requests).containsExactly("GET /version", "GET /v1.41/_ping");

        engine.close();
        engine = new FakeEngine(version("1.47", "99999999999.0"), false);
        try (EngineClient client = new EngineClient(engine.host())) {
            client.call("GET", "/_ping", null);
        }
        assertThat(engine.requests).containsExactly("GET /version", "GET /v1.41/_ping");
    }

    @Test
    void readsChunkedBodiesAndReusesTheConnection() throws Exception {
        engine = new FakeEngine(request -> request.startsWith("GET /version") ? json("{\"ApiVersion\":\"1.41\"}")
                : "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "c\r\n{\"message\":\"\r\n10;ext=1\r\nno such exec\"}\n \r\n0\r\n\r\n", false);
        try (EngineClient client = new EngineClient(engine.host())) {
            for (int i = 0; i < 3; i++) {
                EngineClient.Response r = client.call("GET", "/exec/x/json", null);
                assertThat(r.status()).isEqualTo(404);
                assertThat(r.message()).isEqualTo("no such exec");
            }
        }
        // One connection for /version, one reused for the three calls.
        assertThat(engine.connections.get()).isEqualTo(2);
    }

    @Test
    void retriesOnAFreshConnectionWhenTheEngineDroppedAnIdleOne() throws Exception {
        engine = new FakeEngine(request -> request.startsWith("GET /version")
                ? json("{\"ApiVersion\":\"1.41\"}") : json("{\"Id\":\"abc\"}"), true);
        try (EngineClient client = new EngineClient(engine.host())) {
            for (int i = 0; i < 25; i++) {
                assertThat(client.call("POST", "/containers/c/exec", java.util.Map.of("Cmd", List.of("true")))
                        .json().get("Id").asText()).isEqualTo("abc");
            }
        }
        assertThat(engine.requests).filteredOn(r -> r.startsWith("POST")).hasSize(25);
    }

    @Test
    void encodesPathSegments() {
        assertThat(EngineClient.segment("abc-DEF_1.2")).isEqualTo("abc-DEF_1.2");
        assertThat(EngineClient.segment("a/b c?")).isEqualTo("a%2Fb%20c%3F");
    }

    private static Function<String, String> version(String max, String min) {
        return request -> request.startsWith("GET /version")
                ? json("{\"ApiVersion\":\"" + max + "\",\"MinAPIVersion\":\"" + min + "\"}")
                : json("{}");
    }

    private static String json(String body) {
        return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body;
    }
}
