package dev.sandboxkit.tools.internal;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class HeadTailTest {

    private static HeadTail feed(int head, int tail, String text, int chunk) {
        HeadTail h = new HeadTail(head, tail);
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < b.length; i += chunk) {
            h.write(b, i, Math.min(chunk, b.length - i));
        }
        return h;
    }

    @Test
    void outputThatFitsIsShownWhole() {
        assertThat(feed(10, 10, "", 3).render()).isEmpty();
        assertThat(feed(10, 10, "hello\nworld\n", 3).render()).isEqualTo("hello\nworld\n");
        String exactly = "a".repeat(20);
        assertThat(feed(10, 10, exactly, 7).render()).isEqualTo(exactly);
    }

    @Test
    void longOutputKeepsHeadAndTailAndSaysWhatWasCut() {
        StringBuilder s = new StringBuilder();
        for (int i = 1; i <= 10_000; i++) {
            s.append("line ").append(i).append('\n');
        }
        for (int chunk : new int[] {1, 7, 4096, 1 << 20}) {
            String r = feed(100, 100, s.toString(), chunk).render();
            assertThat(r).startsWith("line 1\nline 2\n").endsWith("line 9999\nline 10000\n");
            assertThat(r).containsPattern("\\[\\.\\.\\. [0-9,]+ bytes \\([0-9,]+ lines\\) cut from the middle of 98\\.9 KB of output \\.\\.\\.]\n");
            // Cuts fall on line ends: every shown line is whole.
            r.lines().filter(l -> !l.startsWith("[")).forEach(l -> assertThat(l).matches("line [0-9]+"));
            String[] shown = r.split("\n");
            int cutLines = Integer.parseInt(r.replaceAll("(?s).*\\(([0-9,]+) lines\\).*", "$1").replace(",", ""));
            assertThat(shown.length - 1 + cutLines).isEqualTo(10_000);
        }
    }

    @Test
    void neverCutsInsideACharacter() {
        String s = "é".repeat(1000) + "漢".repeat(1000) + "😀".repeat(1000);
        for (int head = 10; head < 20; head++) {
            String r = feed(head, head + 3, s, 5).render();
            assertThat(r).doesNotContain("\uFFFD");
            assertThat(r).startsWith("é").endsWith("😀");
        }
    }

    @Test
    void binaryOutputIsNamedNotShown() {
        HeadTail h = new HeadTail(100, 100);
        byte[] b = new byte[5000];
        b[10] = 0;
        b[11] = (byte) 0xff;
        h.write(b, 0, b.length);
        assertThat(h.render()).startsWith("[binary output, 5,000 bytes, not shown");
        assertThat(feed(100, 100, "ok\u0000ok", 1).render()).startsWith("[binary output");
        HeadTail latin1 = new HeadTail(100, 100);
        latin1.write(new byte[] {'c', 'a', 'f', (byte) 0xe9, '\n'}, 0, 5);
        assertThat(latin1.render()).startsWith("[binary output");
    }
}
