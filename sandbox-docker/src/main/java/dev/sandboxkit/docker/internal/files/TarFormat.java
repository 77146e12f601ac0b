package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.SandboxFileException;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Just enough tar for the files API: writing GNU-format headers (with {@code ././@LongLink} entries for
 * long names and base-256 sizes beyond 8 GiB), and reading ustar, GNU and PAX archives from an untrusted
 * stream with every header checked (checksum, sizes, bounded metadata) before anything is acted on.
 */
final class TarFormat {
    static final int BLOCK = 512;
    static final byte REGULAR = '0';
    static final byte REGULAR_OLD = 0;
    static final byte HARDLINK = '1';
    static final byte SYMLINK = '2';
    static final byte CHAR_DEVICE = '3';
    static final byte BLOCK_DEVICE = '4';
    static final byte DIRECTORY = '5';
    static final byte FIFO = '6';
    static final byte CONTIGUOUS = '7';
    static final byte PAX_HEADER = 'x';
    static final byte PAX_GLOBAL = 'g';
    static final byte GNU_LONGNAME = 'L';
    static final byte GNU_LONGLINK = 'K';

    /** Bounds on metadata read into memory from an untrusted archive. */
    private static final int MAX_LONG_NAME = 64 * 1024;
    private static final int MAX_PAX = 1024 * 1024;
    /**
     * Metadata headers (GNU long name and link, PAX, PAX global) before one entry. A writer emits at most one of
     * each kind; without a bound an endless run of them would be read forever.
     */
    private static final int MAX_METADATA_HEADERS = 16;
    /** Largest entry size: its content plus padding must fit in a long, or skipping it would wrap. */
    private static final long MAX_ENTRY_SIZE = Long.MAX_VALUE - BLOCK;
    private static final long MAX_OCTAL_11 = 077777777777L;

    private TarFormat() {
    }

    // ------------------------------------------------------------------ writing

    /**
     * The header block(s) for one entry: a GNU long-name entry first when the name does not fit in 100 bytes.
     *
     * @param name  raw entry name (a directory's ends with {@code /})
     * @param type  {@link #REGULAR}, {@link #DIRECTORY}, ...
     * @param mode  permission bits to record
     * @param size  content size (0 except for regular files)
     * @param link  link target for link entries, or {@code null}
     */
    static byte[] header(byte[] name, byte type, int mode, long size, long uid, long gid, long mtime, byte[] link) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(BLOCK * 3);
        if (name.length > 100) {
            longEntry(out, GNU_LONGNAME, name);
        }
        if (link != null && link.length > 100) {
            longEntry(out, GNU_LONGLINK, link);
        }
        byte[] h = new byte[BLOCK];
        System.arraycopy(name, 0, h, 0, Math.min(100, name.length));
        octal(h, 100, 8, mode & 07777);
        number(h, 108, 8, Math.max(0, uid));
        number(h, 116, 8, Math.max(0, gid));
        number(h, 124, 12, size);
        octal(h, 136, 12, Math.max(0, Math.min(mtime, MAX_OCTAL_11)));
        h[156] = type;
        if (link != null) {
            System.arraycopy(link, 0, h, 157, Math.min(100, link.length));
        }
        // GNU magic "ustar  \0": the format whose long-name and base-256 extensions are used here.
        byte[] magic = "ustar  \0".getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(magic, 0, h, 257, magic.length);
        checksum(h);
        out.writeBytes(h);
        return out.toByteArray();
    }

    /** The zero blocks that end an archive. */
    static byte[] endOfArchive() {
        return new byte[BLOCK * 2];
    }

    static int padding(long size) {
        return (int) ((BLOCK - (size % BLOCK)) % BLOCK);
    }

    private static void longEntry(ByteArrayOutputStream out, byte type, byte[] value) {
        byte[] data = Arrays.copyOf(value, value.length + 1);
        byte[] h = new byte[BLOCK];
        byte[] name = "././@LongLink".getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(name, 0, h, 0, name.length);
        octal(h, 100, 8, 0644);
        octal(h, 108, 8, 0);
        octal(h, 116, 8, 0);
        octal(h, 124, 12, data.length);
        octal(h, 136, 12, 0);
        h[156] = type;
        byte[] magic = "ustar  \0".getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(magic, 0, h, 257, magic.length);
        checksum(h);
        out.writeBytes(h);
        out.writeBytes(data);
        out.writeBytes(new byte[padding(data.length)]);
    }

    private static void octal(byte[] h, int off, int len, long value) {
        String s = Long.toOctalString(value);
        int digits = len - 1;
        if (s.length() > digits) {
            throw new IllegalArgumentException("value " + value + " does not fit in " + digits + " octal digits");
        }
        for (int i = 0; i < digits - s.length(); i++) {
            h[off + i] = '0';
        }
        byte[] b = s.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(b, 0, h, off + digits - b.length, b.length);
        h[off + len - 1] = 0;
    }

    /** Octal when it fits, else GNU base-256 (high bit set, big-endian). */
    private static void number(byte[] h, int off, int len, long value) {
        if (value < (1L << (3 * (len - 1)))) {
            octal(h, off, len, value);
            return;
        }
        for (int i = len - 1; i > 0; i--) {
            h[off + i] = (byte) value;
            value >>>= 8;
        }
        h[off] = (byte) 0x80;
    }

    private static void checksum(byte[] h) {
        Arrays.fill(h, 148, 156, (byte) ' ');
        long sum = 0;
        for (byte b : h) {
            sum += b & 0xff;
        }
        octal(h, 148, 7, sum);
        h[155] = ' ';
    }

    // ------------------------------------------------------------------ reading

    /**
     * One entry of an uploaded archive, its long names and PAX overrides applied. Owner and time come from the
     * header only (PAX overrides of them are ignored): uploads never take them, archives the engine wrote keep them.
     */
    record Entry(byte[] name, byte type, int mode, long size, byte[] link, long uid, long gid, long mtime) {
    }

    /**
     * Reads entries from an untrusted stream, one at a time; the caller consumes each entry's content with
     * {@link #copyContent} (or lets {@link #next()} skip it).
     */
    static final class Reader {
        private final InputStream in;
        private final byte[] block = new byte[BLOCK];
        private long remaining;
        private int pad;
        private boolean ended;

        Reader(InputStream in) {
            this.in = in;
        }

        /** The next entry, or null at the end of the archive. */
        Entry next() throws IOException {
            skipRest();
            byte[] longName = null;
            byte[] longLink = null;
            byte[] paxPath = null;
            byte[] paxLink = null;
            long paxSize = -1;
            long paxUid = -1;
            long paxGid = -1;
            for (int headers = 0; ; headers++) {
                if (headers > MAX_METADATA_HEADERS) {
                    throw invalid("more than " + MAX_METADATA_HEADERS + " metadata headers before an entry");
                }
                if (ended || !readHeader()) {
                    ended = true;
                    return null;
                }
                byte type = block[156];
                long size = requireSize(parseNumber(block, 124, 12, "size"));
                if (type == GNU_LONGNAME || type == GNU_LONGLINK) {
                    byte[] value = stripNuls(readSmall(size, MAX_LONG_NAME, "GNU long name"));
                    if (type == GNU_LONGNAME) {
                        longName = value;
                    } else {
                        longLink = value;
                    }
                    continue;
                }
                if (type == PAX_HEADER || type == PAX_GLOBAL) {
                    byte[] pax = readSmall(size, MAX_PAX, "PAX header");
                    if (type == PAX_GLOBAL) {
                        continue; // global defaults (charset, comments): nothing here depends on them
                    }
                    for (String[] kv : parsePax(pax)) {
                        switch (kv[0]) {
                            case "path" -> paxPath = kv[1].getBytes(StandardCharsets.UTF_8);
                            case "linkpath" -> paxLink = kv[1].getBytes(StandardCharsets.UTF_8);
                            case "size" -> paxSize = requireSize(parsePaxSize(kv[1]));
                            // Ids past the header's 7 octal digits (the engine writes them so): only informative
                            case "uid" -> paxUid = paxId(kv[1]);
                            case "gid" -> paxGid = paxId(kv[1]);
                            default -> {
                                // mtime, uname, xattrs...: ownership and times are not taken from uploads
                            }
                        }
                    }
                    continue;
                }
                byte[] name = paxPath != null ? paxPath : longName != null ? longName : headerName();
                byte[] link = paxLink != null ? paxLink : longLink != null ? longLink : field(block, 157, 100);
                if (paxSize >= 0) {
                    size = paxSize;
                }
                int mode = (int) (parseNumber(block, 100, 8, "mode") & 07777);
                remaining = size;
                pad = padding(size);
                return new Entry(name, type, mode, size, link, paxUid >= 0 ? paxUid : lenient(108, 8),
                        paxGid >= 0 ? paxGid : lenient(116, 8), lenient(136, 12));
            }
        }

        /** Copies exactly the current entry's content to {@code out}. */
        long copyContent(WritableByteChannel out) throws IOException {
            byte[] buf = new byte[64 * 1024];
            long copied = 0;
            while (remaining > 0) {
                int n = in.read(buf, 0, (int) Math.min(buf.length, remaining));
                if (n < 0) {
                    throw invalid("the archive ends inside an entry's content");
                }
                ByteBuffer bb = ByteBuffer.wrap(buf, 0, n);
                while (bb.hasRemaining()) {
                    out.write(bb);
                }
                remaining -= n;
                copied += n;
            }
            return copied;
        }

        /** Reads up to {@code len} bytes of the current entry's content; -1 once it is all read. */
        int readContent(byte[] b, int off, int len) throws IOException {
            if (remaining == 0) {
                return -1;
            }
            int n = in.read(b, off, (int) Math.min(len, remaining));
            if (n < 0) {
                throw invalid("the archive ends inside an entry's content");
            }
            remaining -= n;
            return n;
        }

        private void skipRest() throws IOException {
            long skip = remaining + pad;
            remaining = 0;
            pad = 0;
            byte[] buf = new byte[8192];
            while (skip > 0) {
                int n = in.read(buf, 0, (int) Math.min(buf.length, skip));
                if (n < 0) {
                    throw invalid("the archive ends inside an entry's content");
                }
                skip -= n;
            }
        }

        /** Reads a header block; false at the end marker or a clean end of stream. */
        private boolean readHeader() throws IOException {
            int n = in.readNBytes(block, 0, BLOCK);
            if (n == 0) {
                return false; // no end marker: tolerated, as GNU tar does
            }
            if (n < BLOCK) {
                throw invalid("the archive ends inside a header");
            }
            boolean zero = true;
            for (byte b : block) {
                if (b != 0) {
                    zero = false;
                    break;
                }
            }
            if (zero) {
                return false;
            }
            long stored = parseNumber(block, 148, 8, "checksum");
            long unsigned = 0;
            long signed = 0;
            for (int i = 0; i < BLOCK; i++) {
                int b = (i >= 148 && i < 156) ? ' ' : block[i];
                unsigned += b & 0xff;
                signed += (i >= 148 && i < 156) ? ' ' : block[i];
            }
            if (stored != unsigned && stored != signed) {
                throw invalid("bad header checksum (not a tar archive, or corrupted)");
            }
            return true;
        }

        private byte[] readSmall(long size, int max, String what) throws IOException {
            if (size < 0 || size > max) {
                throw invalid(what + " of " + size + " bytes is over the " + max + "-byte limit");
            }
            byte[] data = in.readNBytes((int) size);
            if (data.length < size) {
                throw invalid("the archive ends inside a " + what);
            }
            skipFully(in, padding(size));
            return data;
        }

        /** ustar's prefix + name, or the GNU/old name alone. */
        private byte[] headerName() {
            byte[] name = field(block, 0, 100);
            boolean posix = block[257] == 'u' && block[258] == 's' && block[259] == 't' && block[260] == 'a'
                    && block[261] == 'r' && block[262] == 0;
            if (posix) {
                byte[] prefix = field(block, 345, 155);
                if (prefix.length > 0) {
                    byte[] full = Arrays.copyOf(prefix, prefix.length + 1 + name.length);
                    full[prefix.length] = '/';
                    System.arraycopy(name, 0, full, prefix.length + 1, name.length);
                    return full;
                }
            }
            return name;
        }

        /** Owner and time: informational only, so a malformed field reads as 0 instead of failing the entry. */
        private long lenient(int off, int len) {
            try {
                return parseNumber(block, off, len, "field");
            } catch (SandboxFileException e) {
                return 0;
            }
        }

        private static byte[] field(byte[] h, int off, int len) {
            int end = off;
            while (end < off + len && h[end] != 0) {
                end++;
            }
            return Arrays.copyOfRange(h, off, end);
        }

        private static byte[] stripNuls(byte[] b) {
            int end = b.length;
            while (end > 0 && b[end - 1] == 0) {
                end--;
            }
            for (int i = 0; i < end; i++) {
                if (b[i] == 0) {
                    throw invalid("a long name contains NUL");
                }
            }
            return Arrays.copyOf(b, end);
        }

        private static long parseNumber(byte[] h, int off, int len, String what) {
            if ((h[off] & 0x80) != 0) {
                if ((h[off] & 0x40) != 0) {
                    throw invalid("negative " + what + " in a header");
                }
                long v = h[off] & 0x3f;
                for (int i = 1; i < len; i++) {
                    if (v > (Long.MAX_VALUE >>> 8)) {
                        throw invalid(what + " too large in a header");
                    }
                    v = (v << 8) | (h[off + i] & 0xff);
                }
                return v;
            }
            long v = 0;
            int i = off;
            int end = off + len;
            while (i < end && (h[i] == ' ' || h[i] == 0)) {
                i++;
            }
            for (; i < end && h[i] != ' ' && h[i] != 0; i++) {
                if (h[i] < '0' || h[i] > '7') {
                    throw invalid("malformed " + what + " in a header");
                }
                v = (v << 3) | (h[i] - '0');
            }
            return v;
        }

        private static long requireSize(long size) {
            if (size > MAX_ENTRY_SIZE) {
                throw invalid("entry size " + size + " is too large");
            }
            return size;
        }

        /** A PAX uid or gid, or -1 when malformed (the header's field is used then). */
        private static long paxId(String s) {
            try {
                long v = Long.parseLong(s.trim());
                return v >= 0 ? v : -1;
            } catch (NumberFormatException e) {
                return -1;
            }
        }

        private static long parsePaxSize(String s) {
            try {
                long v = Long.parseLong(s.trim());
                if (v < 0) {
                    throw invalid("negative size in a PAX header");
                }
                return v;
            } catch (NumberFormatException e) {
                throw invalid("malformed size in a PAX header");
            }
        }

        /** PAX records: {@code "<len> <key>=<value>\n"}, lengths counted in bytes. */
        private static java.util.List<String[]> parsePax(byte[] pax) {
            java.util.List<String[]> out = new java.util.ArrayList<>();
            int pos = 0;
            while (pos < pax.length) {
                if (pax[pos] == 0) {
                    break;
                }
                int sp = pos;
                long len = 0;
                while (sp < pax.length && pax[sp] != ' ') {
                    if (pax[sp] < '0' || pax[sp] > '9' || len > pax.length) {
                        throw invalid("malformed PAX record");
                    }
                    len = len * 10 + (pax[sp] - '0');
                    sp++;
                }
                if (sp >= pax.length || len <= sp - pos + 1 || pos + len > pax.length || pax[(int) (pos + len - 1)] != '\n') {
                    throw invalid("malformed PAX record");
                }
                String record = new String(pax, sp + 1, (int) (pos + len - 1 - (sp + 1)), StandardCharsets.UTF_8);
                int eq = record.indexOf('=');
                if (eq <= 0) {
                    throw invalid("malformed PAX record");
                }
                out.add(new String[] {record.substring(0, eq), record.substring(eq + 1)});
                pos += (int) len;
            }
            return out;
        }
    }

    static SandboxFileException invalid(String why) {
        return new SandboxFileException(SandboxFileException.Reason.INVALID_ARCHIVE, "invalid tar archive: " + why);
    }

    /** Reads and drops {@code n} bytes; EOF there means a truncated archive. */
    static void skipFully(InputStream in, long n) throws IOException {
        try {
            in.skipNBytes(n);
        } catch (EOFException e) {
            throw invalid("the archive ends inside padding");
        }
    }
}
