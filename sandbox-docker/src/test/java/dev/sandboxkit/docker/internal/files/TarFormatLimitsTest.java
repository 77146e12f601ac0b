package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFileException.Reason;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The tar reader's bounds on an untrusted upload: sizes whose arithmetic would overflow, and an endless run of
 * metadata headers, are refused as {@link Reason#INVALID_ARCHIVE} instead of being misread or looped over.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@DisplayName("Tar reader: sizes that overflow and endless metadata headers are invalid archives")
class TarFormatLimitsTest {

    @Test
    @DisplayName("a PAX size near Long.MAX_VALUE cannot make the reader skip nothing and read content as headers")
    void hugePaxSizeDoesNotSmuggleAnEntry() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        pax(out, "size=" + Long.MAX_VALUE);
        // Declared content of "d/" per the PAX size: a well-formed header for an entry the archive does not hold.
        out.writeBytes(TarFormat.header(utf8("d/"), TarFormat.DIRECTORY, 0755, 0, 0, 0, 0, null));
        out.writeBytes(TarFormat.header(utf8("smuggled.txt"), TarFormat.REGULAR, 0644, 1, 0, 0, 0, null));
        out.writeBytes(new byte[TarFormat.BLOCK]);
        out.writeBytes(TarFormat.endOfArchive());

        Throwable thrown = catchThrowable(() -> names(new ByteArrayInputStream(out.toByteArray())));

        assertThat(thrown).isInstanceOf(SandboxFileException.class).hasMessageContaining("size");
        assertThat(((SandboxFileException) thrown).reason()).isEqualTo(Reason.INVALID_ARCHIVE);
    }

    @Test
    @DisplayName("an endless run of PAX global headers ends as an invalid archive")
    void endlessMetadataHeaders() {
        ByteArrayOutputStream one = new ByteArrayOutputStream();
        byte[] record = paxRecord("comment=x");
        one.writeBytes(TarFormat.header(utf8("pax_global_header"), TarFormat.PAX_GLOBAL, 0644, record.length, 0, 0, 0,
                null));
        one.writeBytes(record);
        one.writeBytes(new byte[TarFormat.padding(record.length)]);
        byte[] block = one.toByteArray();
        InputStream endless = new InputStream() {
            private long position;

            @Override
            public int read() {
                return block[(int) (position++ % block.length)] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                for (int i = 0; i < len; i++) {
                    b[off + i] = block[(int) (position++ % block.length)];
                }
                return len;
            }
        };

        Throwable thrown = catchThrowable(() -> new TarFormat.Reader(endless).next());

        assertThat(thrown).isInstanceOf(SandboxFileException.class).hasMessageContaining("metadata headers");
        assertThat(((SandboxFileException) thrown).reason()).isEqualTo(Reason.INVALID_ARCHIVE);
    }

    @Test
    @DisplayName("archives as GNU tar and Docker write them (long name, PAX path and size, global header) still read")
    void usualMetadataStillReads() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] global = paxRecord("comment=made by a test");
        out.writeBytes(TarFormat.header(utf8("pax_global_header"), TarFormat.PAX_GLOBAL, 0644, global.length, 0, 0, 0,
                null));
        out.writeBytes(global);
        out.writeBytes(new byte[TarFormat.padding(global.length)]);
        pax(out, "path=p/" + "n".repeat(150));
        byte[] data = utf8("hello");
        out.writeBytes(TarFormat.header(utf8("placeholder"), TarFormat.REGULAR, 0644, data.length, 0, 0, 0, null));
        out.writeBytes(data);
        out.writeBytes(new byte[TarFormat.padding(data.length)]);
        out.writeBytes(TarFormat.header(utf8("long/" + "m".repeat(200)), TarFormat.REGULAR, 0644, 0, 0, 0, 0, null));
        out.writeBytes(TarFormat.endOfArchive());

        assertThat(names(new ByteArrayInputStream(out.toByteArray())))
                .containsExactly("p/" + "n".repeat(150), "long/" + "m".repeat(200));
    }

    private static List<String> names(InputStream in) throws Exception {
        List<String> names = new ArrayList<>();
        TarFormat.Reader reader = new TarFormat.Reader(in);
        for (TarFormat.Entry e = reader.next(); e != null; e = reader.next()) {
            names.add(new String(e.name(), StandardCharsets.UTF_8));
        }
        return names;
    }

    /** A PAX extended header holding one record. */
    static void pax(ByteArrayOutputStream out, String keyValue) {
        byte[] record = paxRecord(keyValue);
        out.writeBytes(TarFormat.header(utf8("PaxHeaders/x"), TarFormat.PAX_HEADER, 0644, record.length, 0, 0, 0,
                null));
        out.writeBytes(record);
        out.writeBytes(new byte[TarFormat.padding(record.length)]);
    }

    /** {@code "<len> key=value\n"}, the length counting itself. */
    private static byte[] paxRecord(String keyValue) {
        int body = keyValue.length() + 2; // the space and the newline
        int len = body + Integer.toString(body).length();
        if (Integer.toString(len).length() != Integer.toString(body).length()) {
            len++;
        }
        return utf8(len + " " + keyValue + "\n");
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
