package dev.sandboxkit.tools.internal;

/**
 * Keeps the first and the last bytes of a stream of unknown length, and counts what passes in between, so
 * that a 50 MiB output costs the JVM only the two windows. Not thread-safe: one exec's listener calls come
 * one at a time.
 */
final class HeadTail {
    private final byte[] head;
    private final byte[] tail;
    private int headLength;
    private long tailWritten;
    private long total;
    private long newlines;

    HeadTail(int headBytes, int tailBytes) {
        this.head = new byte[headBytes];
        this.tail = new byte[tailBytes];
    }

    void write(byte[] b, int off, int len) {
        total += len;
        newlines += Text.countNewlines(b, off, len);
        int toHead = Math.min(len, head.length - headLength);
        System.arraycopy(b, off, head, headLength, toHead);
        headLength += toHead;
        off += toHead;
        len -= toHead;
        if (len == 0 || tail.length == 0) {
            tailWritten += len;
            return;
        }
        if (len >= tail.length) { // only the last tail.length bytes can survive
            off += len - tail.length;
            tailWritten += len - tail.length;
            len = tail.length;
        }
        int at = (int) (tailWritten % tail.length);
        int first = Math.min(len, tail.length - at);
        System.arraycopy(b, off, tail, at, first);
        System.arraycopy(b, off + first, tail, 0, len - first);
        tailWritten += len;
    }

    long total() {
        return total;
    }

    /**
     * Renders what was kept: everything when it all fit, else the head and the tail around a line that says
     * how many bytes and lines were cut. Cuts fall on line ends when one is near, never inside a character.
     */
    String render() {
        if (total == 0) {
            return "";
        }
        byte[] tailBytes = tailInOrder();
        if (total <= head.length + tailBytes.length) {
            byte[] all = new byte[(int) total];
            System.arraycopy(head, 0, all, 0, headLength);
            System.arraycopy(tailBytes, 0, all, headLength, tailBytes.length);
            return Text.looksBinary(all, 0, all.length) ? binary(total) : Text.decode(all, 0, all.length);
        }
        if (Text.looksBinary(head, 0, headLength) || Text.looksBinary(tailBytes, 0, tailBytes.length)) {
            return binary(total);
        }
        int headEnd = headLength;
        int lastNl = lastIndexOf(head, headLength, (byte) '\n');
        if (lastNl >= headLength / 2) {
            headEnd = lastNl + 1;
        }
        int tailStart = 0;
        int firstNl = indexOf(tailBytes, (byte) '\n');
        if (firstNl >= 0 && firstNl < tailBytes.length / 2) {
            tailStart = firstNl + 1;
        }
        long shownNewlines = Text.countNewlines(head, 0, headEnd)
                + Text.countNewlines(tailBytes, tailStart, tailBytes.length - tailStart);
        long cutBytes = total - headEnd - (tailBytes.length - tailStart);
        long cutLines = newlines - shownNewlines;
        String h = Text.decode(head, 0, headEnd);
        String t = Text.decode(tailBytes, tailStart, tailBytes.length - tailStart);
        return h + (h.endsWith("\n") ? "" : "\n") + "[... " + Text.count(cutBytes) + " bytes" +
                (cutLines > 0 ? " (" + Text.plural(cutLines, "line") + ")" : "") + " cut from the middle of " +
                Text.size(total) + " of output ...]\n" + t;
    }

    private static String binary(long total) {
        return "[binary output, " + Text.size(total) + ", not shown: pipe it through `od -c | head` or `base64` "
                + "to see it, or write it to a file]";
    }

    private byte[] tailInOrder() {
        int kept = (int) Math.min(tailWritten, tail.length);
        byte[] out = new byte[kept];
        if (tailWritten <= tail.length) {
            System.arraycopy(tail, 0, out, 0, kept);
        } else {
            int at = (int) (tailWritten % tail.length);
            System.arraycopy(tail, at, out, 0, tail.length - at);
            System.arraycopy(tail, 0, out, tail.length - at, at);
        }
        return out;
    }

    private static int lastIndexOf(byte[] b, int len, byte x) {
        for (int i = len - 1; i >= 0; i--) {
            if (b[i] == x) {
                return i;
            }
        }
        return -1;
    }

    private static int indexOf(byte[] b, byte x) {
        for (int i = 0; i < b.length; i++) {
            if (b[i] == x) {
                return i;
            }
        }
        return -1;
    }
}
