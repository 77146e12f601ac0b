package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.ComputeCapability;
import dev.sandboxkit.spi.WorkspaceCapability;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link WorkspaceBackendTck}'s workdir archives group: the archive tier, hostile imports. */
abstract class ArchiveConformance extends KitSupport {
    ArchiveConformance(DriverKit kit) {
        super(kit);
    }

    /** A uid-less, gid-less ustar header block for {@link #hostileImportsAreRefused}. */
    private byte[] header(String name, char type, int size, String link) {
        byte[] h = new byte[512];
        put(h, 0, name);
        put(h, 100, "0000644");
        put(h, 108, "0000000");
        put(h, 116, "0000000");
        put(h, 124, String.format("%011o", size));
        put(h, 136, "00000000000");
        h[156] = (byte) type;
        put(h, 157, link);
        put(h, 257, "ustar");
        put(h, 263, "00");
        Arrays.fill(h, 148, 156, (byte) ' ');
        int sum = 0;
        for (byte b : h) {
            sum += b & 0xff;
        }
        put(h, 148, String.format("%06o", sum));
        h[154] = 0;
        return h;
    }

    private long countFiles(Path dir) throws IOException {
        try (var files = Files.walk(dir)) {
            return files.filter(Files::isRegularFile).count();
        }
    }

    private void put(byte[] h, int offset, String value) {
        byte[] b = value.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(b, 0, h, offset, b.length);
    }

    private byte[] tar(byte[]... blocks) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] b : blocks) {
            out.writeBytes(b);
            out.writeBytes(new byte[(512 - b.length % 512) % 512]);
        }
        out.writeBytes(new byte[1024]);
        return out.toByteArray();
    }

    @Test
    @DisplayName("an archived workdir comes back whole on resume: files, modes, links as links")
    void archiveAndResume() throws IOException {
        requireCapability(WorkspaceCapability.WORKSPACE_ARCHIVE, ComputeCapability.REAL_PROCESSES);
        Path objects = workspaceRoot.resolveSibling(workspaceRoot.getFileName() + "-archives");
        try {
            manager.close();
            manager = managerBuilder().archive(dev.sandboxkit.spi.ArchiveStore.directory(objects),
                    Duration.ofHours(1)).build();
            Sandbox sandbox = acquire();
            String script = "mkdir -p d/e && echo one > d/e/f && chmod 600 d/e/f && ln -s d/e/f link"
                    + " && ln -s /nowhere dangling && printf '%s|%s|%s' \"$(cat link)\" \"$(readlink dangling)\""
                    + " \"$(stat -c %a d/e/f)\"";
            ExecResult before = sh(sandbox, script);
            assertSucceeded(before);
            scheduler.advance(TTL.plus(REAPER_INTERVAL));
            assertThat(sandbox.info().state()).isEqualTo(SessionState.SUSPENDED);
            clock.advance(Duration.ofHours(1));

            assertThat(manager.archiveIdle()).isEqualTo(1);
            assertThat(countFiles(objects)).isEqualTo(1);

            ExecResult after = sh(sandbox, "printf '%s|%s|%s' \"$(cat link)\" \"$(readlink dangling)\""
                    + " \"$(stat -c %a d/e/f)\"");
            assertSucceeded(after);
            assertThat(after.stdout()).isEqualTo("one|/nowhere|600");
            assertThat(countFiles(objects)).as("deleted once restored").isZero();
        } finally {
            deleteRecursively(objects);
        }
    }

    @Test
    @DisplayName("a hostile archive is refused: '..', absolute names, writing through a link, devices")
    void hostileImportsAreRefused() throws IOException {
        requireCapability(WorkspaceCapability.WORKSPACE_ARCHIVE);
        Path outside = workspaceRoot.resolve("outside-" + UUID.randomUUID());
        byte[] body = "pwned".getBytes(StandardCharsets.UTF_8);
        List<byte[]> hostile = List.of(
                tar(header("../" + outside.getFileName() + "/x", '0', body.length, ""), body),
                tar(header(outside + "/x", '0', body.length, ""), body),
                tar(header("ln", '2', 0, outside.toString()), header("ln/x", '0', body.length, ""), body),
                tar(header("dev", '3', 0, "")));
        for (byte[] archive : hostile) {
            String ws = createWorkspace(newSessionId("tck-hostile"));
            Files.createDirectories(outside);
            assertThatThrownBy(() -> driver.importWorkspace(ws, spec(), new java.io.ByteArrayInputStream(archive)))
                    .isInstanceOf(dev.sandboxkit.SandboxException.class);
            try (var left = Files.list(outside)) {
                assertThat(left.toList()).as("nothing written outside the workdir").isEmpty();
            }
        }
    }
}
