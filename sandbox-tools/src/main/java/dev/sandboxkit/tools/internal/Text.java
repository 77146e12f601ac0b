package dev.sandboxkit.tools.internal;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/** Bytes to text for a model: UTF-8 cut on character boundaries, binary content recognised, sizes in words. */
final class Text {
    private Text() {
    }

    /**
     * Whether bytes look like binary data rather than text: a NUL, or content that is not UTF-8. A
     * multi-byte character cut at either end (output is cut by size) does not count.
     */
    static boolean looksBinary(byte[] b, int off, int len) {
        int end = off + len;
        for (int i = off; i < end; i++) {
            if (b[i] == 0) {
                return true;
            }
        }
        int start = skipContinuation(b, off, end);
        int stop = completeEnd(b, start, end);
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b, start, stop - start));
            return false;
        } catch (CharacterCodingException e) {
            return true;
        }
    }

    /** Decodes UTF-8, dropping a character cut at either end and replacing anything malformed. */
    static String decode(byte[] b, int off, int len) {
        int end = off + len;
        int start = skipContinuation(b, off, end);
        int stop = completeEnd(b, start, end);
        return new String(b, start, stop - start, StandardCharsets.UTF_8);
    }

    /** Skips continuation bytes (10xxxxxx) at the start: the tail of a character cut off before. */
    static int skipContinuation(byte[] b, int off, int end) {
        int i = off;
        while (i < end && i < off + 3 && (b[i] & 0xC0) == 0x80) {
            i++;
        }
        return i;
    }

    /** The end of the last complete character: a lead byte whose sequence runs past {@code end} is dropped. */
    static int completeEnd(byte[] b, int start, int end) {
        for (int back = 1; back <= 3 && end - back >= start; back++) {
            int c = b[end - back] & 0xff;
            if ((c & 0xC0) == 0x80) {
                continue; // continuation: keep looking for its lead byte
            }
            int need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
            return need > back ? end - back : end;
        }
        return end;
    }

    static int countNewlines(byte[] b, int off, int len) {
        int n = 0;
        for (int i = off; i < off + len; i++) {
            if (b[i] == '\n') {
                n++;
            }
        }
        return n;
    }

    /** {@code 1,234 bytes}, {@code 12.3 KB}, {@code 4.0 MB}. */
    static String size(long bytes) {
        if (bytes < 10_000) {
            return plural(bytes, "byte");
        }
        if (bytes < 1_000_000) {
            return String.format(Locale.ROOT, "%.1f KB", bytes / 1000.0);
        }
        if (bytes < 1_000_000_000) {
            return String.format(Locale.ROOT, "%.1f MB", bytes / 1e6);
        }
        return String.format(Locale.ROOT, "%.1f GB", bytes / 1e9);
    }

    static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    static String plural(long n, String word) {
        return count(n) + " " + word + (n == 1 ? "" : "s");
    }
}
