package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFileException.Reason;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A whole-workdir import keeps links with any target, but a target with a NUL byte (possible only through a PAX
 * {@code linkpath}) cannot be stored: the host backend used to cut it at the NUL, the volume backend refused it.
 * Both share one extractor now, so both refuse it.
 */
@DisplayName("Workdir import: a link target containing NUL is an invalid archive on the host backend too")
class TarImportLinkTargetTest {
    @TempDir
    Path root;

    @Test
    @DisplayName("importTree refuses a PAX linkpath with NUL and creates no link")
    void nulInLinkTargetIsRefused() throws Exception {
        Path workdir = Files.createDirectory(root.resolve("w"));
        HostFiles files = new HostFiles(workdir.toString(), new HostFiles.Staging(root), 0, 0, false,
                VolumeFiles.UNLIMITED);
        ByteArrayOutputStream tar = new ByteArrayOutputStream();
        TarFormatLimitsTest.pax(tar, "linkpath=kept\0cut");
        tar.writeBytes(TarFormat.header(utf8("l"), TarFormat.SYMLINK, 0777, 0, 0, 0, 0, utf8("placeholder")));
        tar.writeBytes(TarFormat.endOfArchive());

        Throwable thrown = catchThrowable(() -> files.importTree(new ByteArrayInputStream(tar.toByteArray())));

        assertThat(thrown).isInstanceOf(SandboxFileException.class).hasMessageContaining("NUL");
        assertThat(((SandboxFileException) thrown).reason()).isEqualTo(Reason.INVALID_ARCHIVE);
        assertThat(Files.exists(workdir.resolve("l"), java.nio.file.LinkOption.NOFOLLOW_LINKS)).isFalse();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
