package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.docker.internal.files.FilesTestSupport.Entry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Workdir ownership on the host (no Docker), as root: ids of 2^31 and more (unsigned 32-bit) reach the
 * system calls intact, an existing workdir of another owner is re-owned on create and claim, and a link
 * planted in the root is removed as itself.
 */
class HostWorkspacesTest {
    private static final long BIG_UID = 4294967294L;
    private static final long BIG_GID = 2147483648L;
    @TempDir
    Path tmp;
    private HostWorkspaces workspaces;
    private Path root;

    @BeforeEach
    void requireRoot() throws Exception {
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        assertThat(uid).as("this test needs root (CI runs as root); NonRootWorkspaceTest covers the rest").isZero();
        root = tmp.resolve("ws");
        workspaces = new HostWorkspaces(root, "10001:10001");
    }

    private static SandboxSpec spec(String user) {
        return SandboxSpec.builder().image("img").user(user).build();
    }

    @Test
    void idsOfTwoToTheThirtyFirstAndMoreReachTheSystemCalls() throws Exception {
        SandboxSpec spec = spec(BIG_UID + ":" + BIG_GID);
        Path ws = Path.of(workspaces.create("big", spec));
        assertOwner(ws, BIG_UID, BIG_GID);

        SandboxFiles files = workspaces.files(ws.toString(), spec, FileLimits.DEFAULT);
        files.write("d/f.txt", "x".getBytes(StandardCharsets.UTF_8));
        files.mkdirs("e/g");
        files.uploadTar("u", FilesTestSupport.tarStream(Entry.file("a.txt", "a"), Entry.link("l", TarFormat.SYMLINK,
                "a.txt")));
        for (String p : new String[] {"d", "d/f.txt", "e", "e/g", "u", "u/a.txt", "u/l"}) {
            assertOwner(ws.resolve(p), BIG_UID, BIG_GID);
        }
        byte[] header;
        try (InputStream tar = files.downloadTar("d/f.txt")) {
            header = tar.readNBytes(512);
        }
        assertThat(tarNumber(header, 108)).as("uid in the tar header").isEqualTo(BIG_UID);
        assertThat(tarNumber(header, 116)).as("gid in the tar header").isEqualTo(BIG_GID);
        assertThat(files.stat("d/f.txt").size()).isEqualTo(1);
    }

    @Test
    void anExistingWorkdirOfAnotherOwnerIsReownedOnCreateAndOnClaim() throws Exception {
        Path ws = Path.of(workspaces.create("s", spec("10001")));
        SandboxFiles files = workspaces.files(ws.toString(), spec("10001"), FileLimits.DEFAULT);
        files.write("a/b.txt", new byte[1]);
        Path other = Files.writeString(ws.resolve("other.txt"), "x");
        chown(other, 10003, 10003);

        workspaces.claim(ws.toString(), spec("10002:10004"));
        for (String p : new String[] {"", "a", "a/b.txt"}) {
            assertOwner(ws.resolve(p), 10002, 10004);
        }
        assertOwner(other, 10003, 10003);

        assertThat(workspaces.create("s", spec(BIG_UID + ""))).isEqualTo(ws.toString());
        for (String p : new String[] {"", "a", "a/b.txt"}) {
            assertOwner(ws.resolve(p), BIG_UID, BIG_UID);
        }
        assertOwner(other, 10003, 10003);
    }

    @Test
    void aLinkInTheRootIsDeletedAsItselfAndOnlyDirectChildrenAreTouched() throws Exception {
        Path outside = Files.createDirectory(tmp.resolve("outside"));
        Files.writeString(outside.resolve("keep"), "x");
        workspaces.create("real", spec("10001"));
        Files.createSymbolicLink(root.resolve("link"), outside);

        workspaces.delete(root.resolve("link").toString());

        assertThat(root.resolve("link")).doesNotExist();
        assertThat(outside.resolve("keep")).hasContent("x");
        assertThatThrownBy(() -> workspaces.delete(outside.toString())).isInstanceOf(SandboxConfigurationException.class);
        workspaces.delete(root.resolve("never-existed").toString());
        workspaces.delete(root.resolve("real").toString());
        assertThat(root.resolve("real")).doesNotExist();
    }

    private static void assertOwner(Path p, long uid, long gid) throws Exception {
        int dir = LinuxFs.open(LinuxFs.AT_FDCWD, p.getParent().toString().getBytes(StandardCharsets.UTF_8),
                LinuxFs.O_PATH | LinuxFs.O_DIRECTORY);
        try {
            LinuxFs.Stat st = LinuxFs.lstat(dir, p.getFileName().toString().getBytes(StandardCharsets.UTF_8));
            assertThat(st.uid()).as("uid of %s", p).isEqualTo(uid);
            assertThat(st.gid()).as("gid of %s", p).isEqualTo(gid);
        } finally {
            LinuxFs.closeQuietly(dir);
        }
    }

    private static void chown(Path p, int uid, int gid) throws Exception {
        Files.setAttribute(p, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(p, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
    }

    /** A tar number field: octal, or base-256 (first byte 0x80) for values that do not fit. */
    private static long tarNumber(byte[] h, int off) {
        if ((h[off] & 0x80) != 0) {
            long v = 0;
            for (int i = 1; i < 8; i++) {
                v = (v << 8) | (h[off + i] & 0xff);
            }
            return v;
        }
        return Long.parseLong(new String(h, off, 7, StandardCharsets.US_ASCII).trim(), 8);
    }
}
