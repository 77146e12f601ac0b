package dev.sandboxkit.docker.internal.engine;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.SandboxExecException;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The raw client against a hostile or broken endpoint: every answer that breaks HTTP or one of the parser's
 * limits must end the call quickly with a {@link SandboxExecException}, holding a bounded amount of memory,
 * never an {@link OutOfMemoryError}, a hang or an unmapped runtime exception. Runs in the {@code bounded-heap}
 * Surefire execution ({@code -Xmx64m}), where an answer the parser would buffer without a limit fails at once,
 * and each call's allocation is measured as well.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@DisplayName("Raw engine client: hostile answers give a typed error, quickly, in bounded memory")
class EngineResponseLimitsTest {
    private static final int MiB = 1024 * 1024;
    private static final int BODY_LIMIT = EngineConnection.MAX_BODY_BYTES;
    /**
     * What a refused head may cost: the line buffer, a few small strings and the exception, never the hostile
     * bytes (measured: 80 to 200 KB, the endless streams deliver hundreds of MB in the same time).
     */
    private static final long HEAD_ALLOCATION = MiB;
    /** What a refused body may cost: the bytes that arrived up to the body limit, in small blocks. */
    private static final long BODY_ALLOCATION = BODY_LIMIT + 2L * MiB;
    private static final String VERSION = json("{\"ApiVersion\":\"1.41\",\"MinAPIVersion\":\"1.12\"}");

    private FakeEngine engine;

    /**
     * One refused call before any is measured: the JVM's first exception and string concatenation on this
     * path load classes and bootstrap call sites once (about 4 MB), which is not the parser's doing.
     */
    @BeforeAll
    static void warmUp() throws IOException {
        try (FakeEngine warm = new FakeEngine(hostile(out -> out.write(ascii("HTTP/1.1 200 OK\r\nContent-Len"))), true);
             EngineClient client = new EngineClient(warm.host())) {
            catchThrowable(() -> client.call("GET", "/exec/x/json", null));
        }
    }

    @AfterEach
    void stop() throws IOException {
        if (engine != null) {
            engine.close();
        }
    }

    // ------------------------------------------------------------------ head

    @Test
    @DisplayName("an endless header line")
    void endlessHeaderLine() throws Exception {
        SandboxExecException e = refused(out -> {
            out.write(ascii("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Filler: "));
            endless(out, 'a');
        }, HEAD_ALLOCATION);
        assertThat(e).hasMessageContaining("header line longer than");
    }

    @Test
    @DisplayName("an endless status line")
    void endlessStatusLine() throws Exception {
        SandboxExecException e = refused(out -> {
            out.write(ascii("HTTP/1.1 200 "));
            endless(out, 'a');
        }, HEAD_ALLOCATION);
        assertThat(e).hasMessageContaining("status line longer than");
    }

    @Test
    @DisplayName("endless header fields, each short")
    void endlessHeaderFields() throws Exception {
        SandboxExecException e = refused(out -> {
            out.write(ascii("HTTP/1.1 200 OK\r\n"));
            byte[] field = ascii("X-A: 1\r\n");
            while (true) {
                out.write(field);
            }
        }, HEAD_ALLOCATION);
        assertThat(e).hasMessageContaining("header fields");
    }

    @Test
    @DisplayName("a head over the total limit in fields under the line limit")
    void headOverTheTotalLimit() throws Exception {
        SandboxExecException e = refused(out -> {
            out.write(ascii("HTTP/1.1 200 OK\r\n"));
            byte[] field = ascii("X-A: " + "b".repeat(8000) + "\r\n");
            while (true) {
                out.write(field);
            }
        }, HEAD_ALLOCATION);
        assertThat(e).hasMessageContaining("head larger than");
    }

    @ParameterizedTest(name = "status line ''{0}''")
    @ValueSource(strings = {"HTTP/1.1 2000 OK", "HTTP/1.1 -1 OK", "HTTP/1.1 +20 OK", "HTTP/1.1 abc",
            "SSH-2.0-OpenSSH_9.2", "HTTP/1.1 99999999999 X"})
    @DisplayName("a malformed status line")
    void malformedStatusLine(String statusLine) throws Exception {
        refused(out -> out.write(ascii(statusLine + "\r\nContent-Length: 0\r\n\r\n")), HEAD_ALLOCATION);
    }

    // ------------------------------------------------------------------ Content-Length

    @ParameterizedTest(name = "Content-Length: {0}")
    @ValueSource(longs = {2147483647L, 2147483648L, 4294967296L, 4294967298L, 17_179_869_184L,
            BODY_LIMIT + 1L, Long.MAX_VALUE})
    @DisplayName("a Content-Length over the body limit, whatever an (int) cast would make of it")
    void hugeContentLength(long length) throws Exception {
        SandboxExecException e = refused(out -> {
            out.write(ascii("HTTP/1.1 200 OK\r\nContent-Length: " + length + "\r\n\r\n"));
            endless(out, 'x');
        }, HEAD_ALLOCATION);
        assertThat(e).hasMessageContaining("over the " + BODY_LIMIT);
    }

    @ParameterizedTest(name = "Content-Length: ''{0}''")
    @ValueSource(strings = {"-1", "-5", "-9223372036854775808", "9223372036854775808", "99999999999999999999999",
            "+5", "0x10", "5 5", "5,5", "", "\u00b2"})
    @DisplayName("a negative, overflowing or malformed Content-Length")
    void malformedContentLength(String value) throws Exception {
        SandboxExecException e = refused(out -> out.write(ascii("HTTP/1.1 200 OK\r\nContent-Length: " + value
                + "\r\n\r\n{}")), HEAD_ALLOCATION);
        assertThat(e).hasMessageContaining("Content-Length");
    }

    @Test
    @DisplayName("two different Content-Lengths")
    void conflictingContentLengths() throws Exception {
        SandboxExecException e = refused(out -> out.write(ascii(
                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x")), HEAD_ALLOCATION);
        assertThat(e).hasMessageContaining("Content-Length");
    }

    @Test
    @DisplayName("an endless body without a length")
    void endlessBodyWithoutLength() throws Exception {
        SandboxExecException e = refused(out -> {
            out.write(ascii("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n"));
            endless(out, 'x');
        }, BODY_ALLOCATION);
        assertThat(e).hasMessageContaining("over the " + BODY_LIMIT);
    }

    // ------------------------------------------------------------------ chunked

    @ParameterizedTest(name = "chunk size ''{0}''")
    @ValueSource(strings = {"zz", "1g", "-1", "0x10", "", " ", "1 2", "\u00b2"})
    @DisplayName("a chunk size that is not hexadecimal")
    void nonHexChunkSize(String size) throws Exception {
        SandboxExecException e = refused(out -> out.write(ascii(chunkedHead() + size + "\r\n{}\r\n0\r\n\r\n")),
                HEAD_ALLOCATION);
        assertThat(e).hasMessageContaining("chunk size");
    }

    @ParameterizedTest(name = "chunk size {0}")
    @ValueSource(strings = {"7fffffff", "80000000", "ffffffffffffffff", "10000000000000000000000", "1000001"})
    @DisplayName("a chunk size over the body limit, or beyond any integer")
    void overlongChunkSize(String size) throws Exception {
        SandboxExecException e = refused(out -> {
            out.write(ascii(chunkedHead() + size + "\r\n"));
            endless(out, 'x');
        }, HEAD_ALLOCATION);
        assertThat(e).hasMessageContaining("chunk");
    }

    @Test
    @DisplayName("an endless chunk-size line")
    void endlessChunkSizeLine() throws Exception {
        SandboxExecException e = refused(out -> {
            out.write(ascii(chunkedHead()));
            endless(out, 'f');
        }, HEAD_ALLOCATION);
        assertThat(e).hasMessageContaining("longer than");
    }

    @Test
    @DisplayName("endless chunks, each small")
    void endlessChunks() throws Exception {
        SandboxExecException e = refused(out -> {
            out.write(ascii(chunkedHead()));
            byte[] chunk = ascii("1000\r\n" + "x".repeat(4096) + "\r\n");
            while (true) {
                out.write(chunk);
            }
        }, BODY_ALLOCATION);
        assertThat(e).hasMessageContaining("over the " + BODY_LIMIT);
    }

    @Test
    @DisplayName("endless trailer fields")
    void endlessTrailers() throws Exception {
        SandboxExecException e = refused(out -> {
            out.write(ascii(chunkedHead() + "2\r\n{}\r\n0\r\n"));
            byte[] trailer = ascii("X-T: 1\r\n");
            while (true) {
                out.write(trailer);
            }
        }, HEAD_ALLOCATION);
        assertThat(e).hasMessageContaining("trailer");
    }

    @Test
    @DisplayName("chunk data not followed by CRLF")
    void chunkWithoutItsCrlf() throws Exception {
        refused(out -> out.write(ascii(chunkedHead() + "2\r\n{}xx\r\n0\r\n\r\n")), HEAD_ALLOCATION);
    }

    // ------------------------------------------------------------------ truncation

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
            "HTTP/1.1 200 OK\r\nContent-Len",
            "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"Id\":",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{\"Id\"",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nX-T: 1"})
    @DisplayName("a stream that ends inside the answer")
    void truncatedStream(String answer) throws Exception {
        SandboxExecException e = refused(out -> out.write(ascii(answer)), HEAD_ALLOCATION);
        assertThat(e).hasMessageContaining("closed the connection inside");
    }

    // ------------------------------------------------------------------ through the exec path

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"HTTP/1.1 201 Created\r\nContent-Length: 4294967296\r\n\r\n",
            "HTTP/1.1 201 Created\r\nContent-Length: 40\r\n\r\n{\"Id\":"})
    @DisplayName("through a plain exec, a broken answer to the exec create is a SandboxExecException naming the engine")
    void mappedOnThePlainExecPath(String answer) throws Exception {
        engine = new FakeEngine(hostile(out -> out.write(ascii(answer))), true);
        try (EngineClient client = new EngineClient(engine.host())) {
            Throwable thrown = catchThrowable(() -> new EngineExec(client).exec("c", ExecRequest.of("true")));
            assertThat(thrown).isInstanceOf(SandboxExecException.class)
                    .hasMessageContaining("Docker engine at " + engine.uri());
        }
    }

    // ------------------------------------------------------------------ helpers

    /** Serves {@code answer} to every request but /version, calls the engine once, and returns what it threw. */
    /** What the hostile engine writes instead of an answer. */
    private interface Answer {
        void write(OutputStream out) throws IOException;
    }

    private SandboxExecException refused(Answer answer, long maxAllocation) throws IOException {
        engine = new FakeEngine(hostile(answer), true);
        try (EngineClient client = new EngineClient(engine.host())) {
            client.call("GET", "/_ping", null); // the version negotiation, healthy
            long allocatedBefore = allocatedBytes();
            long t0 = System.nanoTime();
            Throwable thrown = catchThrowable(() -> client.call("GET", "/exec/x/json", null));
            long allocated = allocatedBytes() - allocatedBefore;
            Duration took = Duration.ofNanos(System.nanoTime() - t0);

            assertThat(thrown).as("what the call threw").isInstanceOf(SandboxExecException.class)
                    .hasMessageContaining("Docker engine at " + engine.uri());
            assertThat(took).as("time to refuse").isLessThan(Duration.ofSeconds(10));
            assertThat(allocated).as("bytes allocated by the refused call").isLessThan(maxAllocation);
            return (SandboxExecException) thrown;
        }
    }

    /** Answers /version (and the healthy /_ping) normally, everything else with {@code answer}. */
    private static FakeEngine.Responder hostile(Answer answer) {
        return (requestLine, out) -> {
            if (requestLine.startsWith("GET /version")) {
                out.write(ascii(VERSION));
            } else if (requestLine.startsWith("GET /v1.41/_ping")) {
                out.write(ascii(json("{}")));
            } else {
                answer.write(out);
            }
        };
    }

    /** The head of a chunked answer. */
    private static String chunkedHead() {
        return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    }

    /** Writes {@code c} until the client hangs up (the write then fails). */
    private static void endless(OutputStream out, char c) throws IOException {
        byte[] block = new byte[64 * 1024];
        Arrays.fill(block, (byte) c);
        while (true) {
            out.write(block);
        }
    }

    private static long allocatedBytes() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    private static String json(String body) {
        return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body;
    }
}
