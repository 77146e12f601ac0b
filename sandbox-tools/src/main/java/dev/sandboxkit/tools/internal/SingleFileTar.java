package dev.sandboxkit.tools.internal;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * A tar archive holding one executable file. Writing it through {@code SandboxFiles.uploadTar} is the files
 * API's way to replace a file atomically and keep it executable, so an edited script still runs.
 */
final class SingleFileTar {
    private static final int BLOCK = 512;

    private SingleFileTar() {
    }

    static byte[] executable(String name, byte[] content) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(content.length + 4 * BLOCK);
        byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
        if (nameBytes.length > 100) { // GNU long name: an 'L' entry whose content is the name
            byte[] longName = new byte[nameBytes.length + 1];
            System.arraycopy(nameBytes, 0, longName, 0, nameBytes.length);
            out.writeBytes(header("././@LongLink".getBytes(StandardCharsets.US_ASCII), 0644, longName.length, 'L'));
            pad(out, longName);
            nameBytes = java.util.Arrays.copyOf(nameBytes, 100);
        }
        out.writeBytes(header(nameBytes, 0755, content.length, '0'));
        pad(out, content);
        out.writeBytes(new byte[2 * BLOCK]);
        return out.toByteArray();
    }

    private static void pad(ByteArrayOutputStream out, byte[] data) {
        out.writeBytes(data);
        int rest = data.length % BLOCK;
        if (rest != 0) {
            out.writeBytes(new byte[BLOCK - rest]);
        }
    }

    private static byte[] header(byte[] name, int mode, long size, char type) {
        byte[] h = new byte[BLOCK];
        System.arraycopy(name, 0, h, 0, Math.min(name.length, 100));
        octal(h, 100, 8, mode);
        octal(h, 108, 8, 0);
        octal(h, 116, 8, 0);
        octal(h, 124, 12, size);
        octal(h, 136, 12, System.currentTimeMillis() / 1000);
        h[156] = (byte) type;
        System.arraycopy("ustar\u000000".getBytes(StandardCharsets.US_ASCII), 0, h, 257, 8);
        for (int i = 148; i < 156; i++) {
            h[i] = ' ';
        }
        long sum = 0;
        for (byte x : h) {
            sum += x & 0xff;
        }
        octal(h, 148, 7, sum);
        return h;
    }

    private static void octal(byte[] h, int at, int width, long value) {
        String s = Long.toOctalString(value);
        int digits = width - 1;
        for (int i = 0; i < digits; i++) {
            int from = s.length() - digits + i;
            h[at + i] = (byte) (from < 0 ? '0' : s.charAt(from));
        }
        h[at + digits] = 0;
    }
}
