package dev.sandboxkit.docker.internal.channel;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** The channel's framing parser without an engine: the eight-byte '#' scan and frames cut anywhere. */
class ChannelOutputTest {
    private static final String NONCE = "0123456789abcdef0123456789abcdef";

    @Test
    @DisplayName("the eight-byte scan finds the first '#' at every position and alignment, or none")
    void indexOfHashMatchesTheByteLoop() {
        Random random = new Random(21);
        for (int size = 0; size < 70; size++) {
            for (int trial = 0; trial < 40; trial++) {
                byte[] a = new byte[size + 5];
                for (int i = 0; i < a.length; i++) {
                    // bytes next to '#' (0x22, 0x24, 0xa3) and zeros stress the borrow of the zero-byte trick
                    byte[] near = {0, 0x22, 0x24, (byte) 0xa3, 0x01, (byte) 0xff, 'x'};
                    a[i] = near[random.nextInt(near.length)];
                }
                int hashes = random.nextInt(3);
                for (int h = 0; h < hashes && size > 0; h++) {
                    a[2 + random.nextInt(size)] = '#';
                }
                int from = 2;
                int to = 2 + size;
                int expected = to;
                for (int i = from; i < to; i++) {
                    if (a[i] == '#') {
                        expected = i;
                        break;
                    }
                }
                assertThat(ChannelOutput.indexOfHash(a, from, to)).as("size %d in %s", size, Arrays.toString(a))
                        .isEqualTo(expected);
            }
        }
    }

    @Test
    @DisplayName("bulk output with fake tokens, cut into frames and reads of every size, comes out byte for byte")
    void bulkOutputSurvivesAnyCut() {
        Random random = new Random(7);
        ByteArrayOutputStream user = new ByteArrayOutputStream();
        byte[] fakeToken = ("#" + NONCE.substring(0, 31) + "0").getBytes(StandardCharsets.US_ASCII);
        while (user.size() < 300_000) {
            int kind = random.nextInt(10);
            if (kind == 0) {
                user.write(fakeToken, 0, 1 + random.nextInt(fakeToken.length)); // a prefix of a near miss
            } else if (kind == 1) {
                user.write('#');
            } else {
                byte[] chunk = new byte[random.nextInt(5000)];
                random.nextBytes(chunk);
                user.writeBytes(chunk);
            }
        }
        byte[] expected = user.toByteArray();
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        byte[] token = ("#" + NONCE).getBytes(StandardCharsets.US_ASCII);
        frame(wire, 2, concat(token, "S".getBytes(StandardCharsets.US_ASCII)));
        for (int at = 0; at < expected.length; ) {
            int n = Math.min(expected.length - at, 1 + random.nextInt(40_000));
            frame(wire, 1, Arrays.copyOfRange(expected, at, at + n));
            at += n;
        }
        frame(wire, 2, concat(token, "R3.".getBytes(StandardCharsets.US_ASCII)));
        frame(wire, 1, concat(token, "T".getBytes(StandardCharsets.US_ASCII)));
        frame(wire, 2, concat(token, "T".getBytes(StandardCharsets.US_ASCII)));
        byte[] all = wire.toByteArray();

        long[] listened = new long[1];
        ChannelOutput out = new ChannelOutput(NONCE, 1 << 20, 1 << 20, (s, b, o, l) -> listened[0] += l);
        ByteBuffer buffer = ByteBuffer.allocate(65536);
        for (int at = 0; at < all.length; ) {
            int n = Math.min(all.length - at, 1 + random.nextInt(9000));
            buffer.clear();
            buffer.put(all, at, n).flip();
            out.consume(buffer);
            at += n;
        }
        assertThat(out.finished()).isTrue();
        assertThat(out.exitCode()).isEqualTo(3);
        assertThat(out.stdout()).isEqualTo(expected);
        assertThat(out.stderr()).isEmpty();
        assertThat(listened[0]).isEqualTo(expected.length);
        assertThat(out.atFrameBoundary()).isTrue();
    }

    private static void frame(ByteArrayOutputStream wire, int type, byte[] payload) {
        wire.writeBytes(new byte[] {(byte) type, 0, 0, 0, (byte) (payload.length >>> 24), (byte) (payload.length >>> 16),
                (byte) (payload.length >>> 8), (byte) payload.length});
        wire.writeBytes(payload);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}
