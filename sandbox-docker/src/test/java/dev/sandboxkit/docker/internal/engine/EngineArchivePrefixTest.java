package dev.sandboxkit.docker.internal.engine;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link EngineClient#archivePrefix}: only the first bytes of an archive are read, however long the engine would
 * go on (the volume backend reads a workdir's owner so on every container start), and the connection is closed.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@DisplayName("Raw engine client: the first bytes of an archive")
class EngineArchivePrefixTest {
    private static final String VERSION = "{\"ApiVersion\":\"1.41\",\"MinAPIVersion\":\"1.12\"}";
    private FakeEngine engine;

    @AfterEach
    void stop() throws IOException {
        if (engine != null) {
            engine.close();
        }
    }

    private interface Answer {
        void write(OutputStream out) throws IOException;
    }

    private EngineClient client(Answer archive) throws IOException {
        engine = new FakeEngine((requestLine, out) -> {
            if (requestLine.startsWith("GET /version")) {
                out.write(FakeEngine.response(200, VERSION).getBytes(StandardCharsets.UTF_8));
            } else {
                archive.write(out);
            }
        }, false);
        return new EngineClient(engine.host());
    }

    @Test
    @DisplayName("an endless chunked archive: exactly the first bytes, de-chunked, and the engine sees the hang-up")
    void endlessChunkedArchive() throws Exception {
        CountDownLatch hungUp = new CountDownLatch(1);
        try (EngineClient client = client(out -> {
            out.write("HTTP/1.1 200 OK\r\nContent-Type: application/x-tar\r\nTransfer-Encoding: chunked\r\n\r\n"
                    .getBytes(StandardCharsets.ISO_8859_1));
            byte[] chunk = new byte[1000];
            try {
                for (int i = 0; ; i++) {
                    java.util.Arrays.fill(chunk, (byte) ('a' + i % 26));
                    out.write(("3e8\r\n").getBytes(StandardCharsets.ISO_8859_1));
                    out.write(chunk);
                    out.write("\r\n".getBytes(StandardCharsets.ISO_8859_1));
                }
            } finally {
                hungUp.countDown();
            }
        })) {
            EngineClient.Response r = client.archivePrefix("c1", "/workspace", 2500);

            assertThat(r.status()).isEqualTo(200);
            assertThat(r.body()).hasSize(2500);
            assertThat(new String(r.body(), StandardCharsets.ISO_8859_1))
                    .isEqualTo("a".repeat(1000) + "b".repeat(1000) + "c".repeat(500));
            assertThat(hungUp.await(10, TimeUnit.SECONDS)).as("the endless answer ended by the hang-up").isTrue();
            assertThat(engine.requests).contains("GET /v1.41/containers/c1/archive?path=%2Fworkspace");
        }
    }

    @Test
    @DisplayName("a short archive with a length: all of it; an error: the engine's message")
    void shortArchiveAndError() throws Exception {
        try (EngineClient client = client(out -> out.write(("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
                .getBytes(StandardCharsets.ISO_8859_1)))) {
            assertThat(client.archivePrefix("c1", "/workspace", 4096).body()).asString(StandardCharsets.ISO_8859_1)
                    .isEqualTo("hello");
        }
        engine.close();
        try (EngineClient client = client(out -> out.write(FakeEngine.response(404,
                "{\"message\":\"Could not find the file /workspace in container c1\"}").getBytes(StandardCharsets.UTF_8)))) {
            EngineClient.Response r = client.archivePrefix("c1", "/workspace", 4096);
            assertThat(r.status()).isEqualTo(404);
            assertThat(r.message()).contains("Could not find the file");
        }
    }
}
