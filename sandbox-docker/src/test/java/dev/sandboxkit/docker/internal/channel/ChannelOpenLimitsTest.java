package dev.sandboxkit.docker.internal.channel;

import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.docker.internal.engine.EngineClient;
import dev.sandboxkit.docker.internal.engine.FakeEngine;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Opening a command channel against a hostile or broken endpoint: whatever streams in instead of the
 * supervisor's ready line, and whatever the exec create answers, the open ends quickly with a typed outcome
 * ({@link CommandChannel.Unavailable}: plain execs from then on; or {@link SandboxExecException}).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@DisplayName("Command channel: a hostile stream before the ready line ends the open quickly")
class ChannelOpenLimitsTest {
    private static final String VERSION = json(200, "{\"ApiVersion\":\"1.41\",\"MinAPIVersion\":\"1.12\"}");
    private FakeEngine engine;

    @AfterEach
    void stop() throws IOException {
        if (engine != null) {
            engine.close();
        }
    }

    @ParameterizedTest(name = "stream type {0}")
    @ValueSource(ints = {1, 2})
    @DisplayName("endless output without a ready line (stdout without a newline, or stderr chatter)")
    void endlessOutputBeforeTheReadyLine(int streamType) throws Exception {
        engine = new FakeEngine((requestLine, out) -> {
            if (requestLine.startsWith("GET /version")) {
                out.write(ascii(VERSION));
            } else if (requestLine.contains("/containers/")) {
                out.write(ascii(json(201, "{\"Id\":\"e1\"}")));
            } else {
                out.write(ascii("HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\n"
                        + "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n"));
                endlessFrames(out, streamType);
            }
        }, false);
        try (EngineClient client = new EngineClient(engine.host())) {
            long t0 = System.nanoTime();
            Throwable thrown = catchThrowable(() -> CommandChannel.open(client, "c", true));
            assertThat(thrown).isInstanceOf(CommandChannel.Unavailable.class).hasMessageContaining("ready line");
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
        }
    }

    @ParameterizedTest(name = "body {0}")
    @ValueSource(strings = {"{}", "{\"Id\":null}", "{\"Id\":7}", "[]", "not json", ""})
    @DisplayName("an exec create answer without an exec id")
    void execCreateWithoutAnId(String body) throws Exception {
        engine = new FakeEngine(request -> request.startsWith("GET /version") ? VERSION : json(201, body), false);
        try (EngineClient client = new EngineClient(engine.host())) {
            Throwable thrown = catchThrowable(() -> CommandChannel.open(client, "c", true));
            assertThat(thrown).isInstanceOf(SandboxExecException.class).hasMessageContaining("exec create");
        }
    }

    /** Frames of 64 KiB of {@code x} on one stream until the client hangs up. */
    private static void endlessFrames(OutputStream out, int streamType) throws IOException {
        byte[] frame = new byte[8 + 64 * 1024];
        Arrays.fill(frame, (byte) 'x');
        frame[0] = (byte) streamType;
        frame[1] = 0;
        frame[2] = 0;
        frame[3] = 0;
        frame[4] = 0;
        frame[5] = 1; // 0x00010000 = 64 KiB
        frame[6] = 0;
        frame[7] = 0;
        while (true) {
            out.write(frame);
        }
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    private static String json(int status, String body) {
        return "HTTP/1.1 " + status + " X\r\nContent-Type: application/json\r\nContent-Length: "
                + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body;
    }
}
