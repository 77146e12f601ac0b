package dev.sandboxkit.mcp.internal;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class StdioGuardTest {
    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();
    private static final String PING = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
    private static final String NOTE = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

    private final ByteArrayOutputStream replies = new ByteArrayOutputStream();

    private String passed(InputStream raw, int max) throws IOException {
        return new String(new StdioGuard(raw, replies, JSON, max, m -> Gate.Verdict.PASS).readAllBytes(),
                StandardCharsets.UTF_8);
    }

    private String passed(String raw) throws IOException {
        return passed(new ByteArrayInputStream(raw.getBytes(StandardCharsets.UTF_8)), 1 << 20);
    }

    @SuppressWarnings("unchecked")
    private List<Map<String, Object>> replies() throws IOException {
        List<Map<String, Object>> out = new ArrayList<>();
        for (String line : replies.toString(StandardCharsets.UTF_8).split("\n")) {
            if (!line.isEmpty()) {
                out.add(JSON.readValue(line, Map.class));
            }
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Object code(Map<String, Object> reply) {
        return ((Map<String, Object>) reply.get("error")).get("code");
    }

    @Test
    void jsonRpcLinesPassUnchangedAndNothingIsAnswered() throws IOException {
        assertThat(passed(PING + "\n" + NOTE + "\r\n" + "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}"))
                .isEqualTo(PING + "\n" + NOTE + "\n" + "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}\n");
        assertThat(replies()).isEmpty();
    }

    @Test
    void blankLinesAreSkippedSilently() throws IOException {
        assertThat(passed("\n   \n\r\n" + PING + "\n\n")).isEqualTo(PING + "\n");
        assertThat(replies()).isEmpty();
    }

    @Test
    void eachBadLineGetsItsOwnErrorAndTheNextLinePasses() throws IOException {
        String in = String.join("\n", "{not json", PING, "{\"hello\":1,\"id\":7}", "[" + PING + "]", "42", "null",
                NOTE) + "\n";
        assertThat(passed(in)).isEqualTo(PING + "\n" + NOTE + "\n");
        List<Map<String, Object>> r = replies();
        assertThat(r).hasSize(5).allSatisfy(m -> assertThat(m).containsEntry("jsonrpc", "2.0"));
        assertThat(code(r.get(0))).isEqualTo(-32700);
        assertThat(r.get(0)).containsEntry("id", null);
        assertThat(code(r.get(1))).isEqualTo(-32600);
        assertThat(r.get(1)).containsEntry("id", 7); // the id of an invalid request is kept
        assertThat(r.subList(2, 5)).allSatisfy(m -> assertThat(code(m)).isEqualTo(-32600));
    }

    @Test
    void anOversizedLineIsAnsweredWithItsIdAndSkippedWithoutHoldingIt() throws IOException {
        int max = 64 * 1024;
        String head = "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"id\":\"big-1\",\"params\":{\"arguments\":"
                + "{\"content\":\"";
        // 50 MiB of content, produced on demand: the guard must skip it, not buffer it.
        InputStream huge = new SequenceInputStream(Collections.enumeration(List.of(
                new ByteArrayInputStream(head.getBytes(StandardCharsets.UTF_8)),
                new Repeat((byte) 'x', 50L << 20),
                new ByteArrayInputStream(("\"}}}\n" + PING + "\n").getBytes(StandardCharsets.UTF_8)))));
        assertThat(passed(huge, max)).isEqualTo(PING + "\n");
        List<Map<String, Object>> r = replies();
        assertThat(r).hasSize(1);
        assertThat(r.get(0)).containsEntry("id", "big-1");
        assertThat(code(r.get(0))).isEqualTo(-32600);
        assertThat(r.get(0).get("error").toString()).contains("Request too large").contains(String.valueOf(max));
    }

    @Test
    void aLineJustAtTheLimitPasses() throws IOException {
        int max = 2048;
        String filler = "x".repeat(max - "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"p\":\"\"}".length());
        String line = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"p\":\"" + filler + "\"}";
        assertThat(line).hasSize(max);
        assertThat(passed(new ByteArrayInputStream((line + "\n" + line + "x\n").getBytes(StandardCharsets.UTF_8)), max))
                .isEqualTo(line + "\n");
        assertThat(replies()).hasSize(1); // the one byte longer line
    }

    @Test
    void anOversizedLineWithItsIdLastIsAnsweredWithThatId() throws IOException {
        int max = 64 * 1024;
        // As the TypeScript SDK writes it: method, params (50 MiB), jsonrpc, and the id at the very end.
        InputStream huge = new SequenceInputStream(Collections.enumeration(List.of(
                new ByteArrayInputStream("{\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\",\"arguments\":{\"content\":\""
                        .getBytes(StandardCharsets.UTF_8)),
                new Repeat((byte) 'x', 50L << 20),
                new ByteArrayInputStream(("\",\"id\":\"no\"}},\"jsonrpc\":\"2.0\",\"id\":17}\n" + PING + "\n")
                        .getBytes(StandardCharsets.UTF_8)))));
        assertThat(passed(huge, max)).isEqualTo(PING + "\n");
        List<Map<String, Object>> r = replies();
        assertThat(r).hasSize(1);
        assertThat(r.get(0)).containsEntry("id", 17);
        assertThat(code(r.get(0))).isEqualTo(-32600);
    }

    @Test
    void anOversizedNotificationGetsNoAnswer() throws IOException {
        String note = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\",\"params\":{\"id\":4,\"p\":\"" + "y".repeat(5000)
                + "\"}}";
        assertThat(passed(new ByteArrayInputStream((note + "\n" + PING + "\n").getBytes(StandardCharsets.UTF_8)), 1024))
                .isEqualTo(PING + "\n");
        assertThat(replies()).isEmpty();
    }

    @Test
    void theScanFindsTheTopLevelIdWhereverItIsAndWhateverSurroundsIt() {
        StdioGuard g = new StdioGuard(InputStream.nullInputStream(), replies, JSON, 4096, m -> Gate.Verdict.PASS);
        assertThat(scan(g, "{\"jsonrpc\":\"2.0\",\"id\":12,\"params\":{\"x\":\"")).isEqualTo(12);
        assertThat(scan(g, "{ \"method\" : \"a\\\"}{\" , \"meta\":{\"id\":5,\"y\":[1,{\"z\":\"}\"}]}, \"id\" : \"s-1\" }"))
                .isEqualTo("s-1");
        assertThat(scan(g, "{\"params\":{\"id\":3,\"c\":\"]}\\\\\"},\"id\" :-7 }")).isEqualTo(-7);
        assertThat(scan(g, "{\"jsonrpc\":\"2.0\",\"params\":{\"id\":3,\"content\":\"xxxx")).isNull(); // cut short
        assertThat(scan(g, "{\"id\":{\"a\":1}}")).isNull();
        assertThat(scan(g, "{\"id\":null}")).isNull();
        assertThat(scan(g, "{\"i\\u0064\":9}")).isNull();
        assertThat(scan(g, "[1,2]")).isNull();
        assertThat(scan(g, "{\"id\":12")).isNull(); // the number may go on
    }

    /** The scan fed a byte at a time: the pieces may end anywhere. */
    private static Object scan(StdioGuard g, String message) {
        StdioGuard.IdScan scan = g.new IdScan();
        scan.reset();
        byte[] b = message.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < b.length; i++) {
            scan.feed(b, i, 1);
        }
        return scan.id();
    }

    /** {@code n} copies of a byte. */
    private static final class Repeat extends InputStream {
        private final byte value;
        private long left;

        Repeat(byte value, long n) {
            this.value = value;
            this.left = n;
        }

        @Override
        public int read() {
            return left-- > 0 ? value : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (left <= 0) {
                return -1;
            }
            int n = (int) Math.min(len, left);
            java.util.Arrays.fill(b, off, off + n, value);
            left -= n;
            return n;
        }
    }
}
