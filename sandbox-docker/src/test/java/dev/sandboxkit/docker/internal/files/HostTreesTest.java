package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.docker.internal.files.LinuxFs.Errno;
import dev.sandboxkit.docker.internal.files.LinuxFs.Stat;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The tree walks behind workdir deletion, the files API's recursive delete and re-owning, on host
 * directories (no Docker): hostile entries, nesting far beyond PATH_MAX and the window of open directories,
 * locked modes, and the failures they must report. The tests run as root (as CI does); the non-root case is
 * {@link NonRootWorkspaceTest}.
 */
class HostTreesTest {
    private static final Duration NEVER_BLOCKS = Duration.ofSeconds(60);
    private static final byte[] LONG_NAME = "d".repeat(250).getBytes(StandardCharsets.US_ASCII);
    @TempDir
    Path tmp;
    private Path outside;
    private Map<String, String> outsideBefore;

    @BeforeEach
    void canary() throws IOException {
        outside = Files.createDirectory(tmp.resolve("outside"));
        Files.writeString(outside.resolve("keep.txt"), "precious");
        Files.createDirectory(outside.resolve("sub"));
        Files.writeString(outside.resolve("sub/keep2.txt"), "precious too");
        outsideBefore = FilesTestSupport.snapshot(outside);
    }

    // ------------------------------------------------------------------ removal

    @Test
    void removesEveryKindOfEntryWithoutFollowingOrOpeningAny() throws Exception {
        requireRoot();
        Path top = Files.createDirectory(tmp.resolve("top"));
        Files.createDirectories(top.resolve("a/b/c"));
        Files.writeString(top.resolve("a/b/c/f.txt"), "x");
        Files.createSymbolicLink(top.resolve("dirlink"), outside);
        Files.createSymbolicLink(top.resolve("a/filelink"), outside.resolve("keep.txt"));
        Files.createSymbolicLink(top.resolve("a/b/dangling"), tmp.resolve("nothing-here"));
        Files.createLink(top.resolve("a/hard"), top.resolve("a/b/c/f.txt"));
        mkfifo(top.resolve("a/b/fifo"));
        mkfifo(top.resolve("fifo-at-top"));
        try (ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            s.bind(UnixDomainSocketAddress.of(top.resolve("a/sock")));
        }
        run("mknod", top.resolve("a/b/c/null-device").toString(), "c", "1", "3");
        withTop(top, fd -> {
            LinuxFs.mkdir(fd, new byte[] {(byte) 0xff, '\n', 'x'}, 0755); // not UTF-8, a newline
        });
        Files.createDirectories(top.resolve("locked/inner"));
        Files.writeString(top.resolve("locked/inner/f"), "x");
        chmod(top.resolve("locked/inner"), "---------");
        chmod(top.resolve("locked"), "---------");

        assertTimeoutPreemptively(NEVER_BLOCKS, () -> assertThat(remove(tmp, "top")).isTrue());

        assertThat(top).doesNotExist();
        assertThat(FilesTestSupport.snapshot(outside)).isEqualTo(outsideBefore);
        assertThat(remove(tmp, "top")).as("nothing left: reported absent").isFalse();
    }

    @Test
    void removesALinkOrFileAtTheTopAsItself() throws Exception {
        Files.createSymbolicLink(tmp.resolve("link"), outside);
        assertThat(remove(tmp, "link")).isTrue();
        assertThat(tmp.resolve("link")).doesNotExist();
        assertThat(FilesTestSupport.snapshot(outside)).isEqualTo(outsideBefore);
    }

    @Test
    void removesAChainFarBeyondPathMaxAndTheWindow() throws Exception {
        Path top = Files.createDirectory(tmp.resolve("deep"));
        int depth = 2_000; // 250-byte names: half a megabyte of path, 120 times PATH_MAX
        withTop(top, fd -> chain(fd, depth, LONG_NAME, true));
        assertThat(countDepth(top)).isEqualTo(depth);

        assertTimeoutPreemptively(NEVER_BLOCKS, () -> assertThat(remove(tmp, "deep")).isTrue());
        assertThat(top).doesNotExist();
    }

    @Test
    void removesWideDirectoriesBelowTheWindow() throws Exception {
        Path top = Files.createDirectory(tmp.resolve("wide"));
        // A chain deeper than the window whose deep levels are wide: many subtrees get flattened.
        withTop(top, fd -> {
            int cur = LinuxFs.openPath(fd, new byte[] {'.'});
            for (int i = 0; i < HostTrees.WINDOW + 5; i++) {
                LinuxFs.mkdir(cur, new byte[] {'l'}, 0755);
                int next = LinuxFs.openPath(cur, new byte[] {'l'});
                LinuxFs.closeQuietly(cur);
                cur = next;
            }
            for (int i = 0; i < 200; i++) {
                byte[] name = ("w" + i).getBytes(StandardCharsets.US_ASCII);
                LinuxFs.mkdir(cur, name, 0755);
                int sub = LinuxFs.openPath(cur, name);
                chain(sub, 3, new byte[] {'s'}, true);
                LinuxFs.closeQuietly(sub);
            }
            LinuxFs.closeQuietly(cur);
        });
        assertThat(remove(tmp, "wide")).isTrue();
        assertThat(top).doesNotExist();
    }

    @Test
    void repairsLockedDirectoriesAtEveryDepth() throws Exception {
        Path top = Files.createDirectory(tmp.resolve("locked"));
        withTop(top, fd -> chain(fd, HostTrees.WINDOW * 3, new byte[] {'x'}, true));
        // Lock levels on both sides of the window (the owner is root here: root repairs with chmod too).
        withTop(top, fd -> {
            int cur = LinuxFs.openPath(fd, new byte[] {'.'});
            for (int i = 0; i < HostTrees.WINDOW * 3; i++) {
                int next = LinuxFs.openPath(cur, new byte[] {'x'});
                if (i % 40 == 0) {
                    LinuxFs.chmod(next, 0);
                }
                LinuxFs.closeQuietly(cur);
                cur = next;
            }
            LinuxFs.closeQuietly(cur);
        });
        chmod(top, "r-x------");
        assertThat(remove(tmp, "locked")).isTrue();
        assertThat(top).doesNotExist();
    }

    @Test
    void anImmutableFileFailsTheRemovalNamingTheEntryAndTheErrno() throws Exception {
        requireRoot();
        Path top = Files.createDirectory(tmp.resolve("immutable"));
        Files.createDirectories(top.resolve("a/b"));
        Path stuck = Files.writeString(top.resolve("a/b/stuck\nfile"), "x");
        Files.writeString(top.resolve("a/other"), "x");
        run("chattr", "+i", stuck.toString());
        try {
            assertThatThrownBy(() -> remove(tmp, "immutable")).isInstanceOfSatisfying(HostTrees.Failure.class, f -> {
                assertThat(f.errno).isEqualTo(LinuxFs.EPERM);
                assertThat(f.getMessage()).contains("top/a/b/stuck\\x0afile").contains("errno 1 (EPERM")
                        .doesNotContain("\n");
            });
            assertThat(stuck).exists();
        } finally {
            run("chattr", "-i", stuck.toString());
        }
        assertThat(remove(tmp, "immutable")).isTrue();
        assertThat(top).doesNotExist();
    }

    @Test
    void neverCrossesIntoAMountedFileSystem() throws Exception {
        requireRoot();
        Path top = Files.createDirectory(tmp.resolve("mounted"));
        Path mnt = Files.createDirectories(top.resolve("a/mnt"));
        run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt.toString());
        try {
            Files.writeString(mnt.resolve("on-the-other-fs"), "x");
            assertThatThrownBy(() -> remove(tmp, "mounted")).isInstanceOfSatisfying(HostTrees.Failure.class,
                    f -> assertThat(f.getMessage()).contains("mount point").contains("a/mnt"));
            assertThat(mnt.resolve("on-the-other-fs")).exists();
        } finally {
            run("umount", mnt.toString());
        }
        assertThat(remove(tmp, "mounted")).isTrue();
    }

    // ------------------------------------------------------------------ re-owning

    @Test
    void reownsOnlyThePreviousOwnersEntriesAndNeverFollowsALink() throws Exception {
        requireRoot();
        Path top = Files.createDirectory(tmp.resolve("own"));
        Files.createDirectories(top.resolve("a/b"));
        Files.writeString(top.resolve("a/b/f"), "x");
        Files.writeString(top.resolve("a/private"), "x");
        chmod(top.resolve("a/private"), "rw-------");
        Files.writeString(top.resolve("third-party"), "x");
        Files.createSymbolicLink(top.resolve("a/to-outside"), outside.resolve("keep.txt"));
        Files.createSymbolicLink(top.resolve("dir-to-outside"), outside);
        mkfifo(top.resolve("a/fifo"));
        Path setuid = Files.writeString(top.resolve("a/setuid"), "x");
        Files.setPosixFilePermissions(setuid, PosixFilePermissions.fromString("rwxr-xr-x"));
        // Everything belongs to 10001:10001 except the third party's file and the outside tree.
        try (var all = Files.walk(top)) {
            for (Path p : all.toList()) {
                chown(p, 10001, 10001);
            }
        }
        Files.setAttribute(setuid, "unix:mode", 04755);
        chown(top.resolve("third-party"), 10002, 10001);
        chown(outside.resolve("keep.txt"), 12345, 12345);
        chown(outside, 12345, 12345);

        long uid = 2147483648L + 7; // beyond a signed int, as Linux allows
        long gid = 4294967294L;
        long count = assertTimeoutPreemptively(NEVER_BLOCKS, () -> reown(top, 10001, 10001, uid, gid));

        for (String p : new String[] {"", "a", "a/b", "a/b/f", "a/private", "a/to-outside", "dir-to-outside",
                "a/fifo", "a/setuid"}) {
            Stat st = lstat(top.resolve(p));
            assertThat(st.uid()).as(p).isEqualTo(uid);
            assertThat(st.gid()).as(p).isEqualTo(gid);
        }
        assertThat(count).as("nine entries, and the third party's file for its group").isEqualTo(10);
        assertThat(lstat(top.resolve("third-party")).uid()).isEqualTo(10002);
        assertThat(lstat(top.resolve("third-party")).gid()).isEqualTo(gid);
        assertThat(lstat(top.resolve("a/setuid")).mode() & 07000).as("setuid cleared by the kernel").isZero();
        assertThat(lstat(outside.resolve("keep.txt")).uid()).isEqualTo(12345);
        assertThat(lstat(outside).uid()).isEqualTo(12345);
        assertThat(FilesTestSupport.snapshot(outside)).isEqualTo(outsideBefore);
    }

    @Test
    void reownsTreesDeeperThanTheWindowAndWideBelowIt() throws Exception {
        requireRoot();
        Path top = Files.createDirectory(tmp.resolve("deepown"));
        int depth = HostTrees.WINDOW * 4 + 3;
        int wide = 100;
        withTop(top, fd -> {
            int cur = LinuxFs.openPath(fd, new byte[] {'.'});
            for (int i = 0; i < depth; i++) {
                LinuxFs.mkdir(cur, LONG_NAME, 0700);
                touch(cur, ("f" + i).getBytes(StandardCharsets.US_ASCII));
                if (i == HostTrees.WINDOW + 10) {
                    for (int w = 0; w < wide; w++) { // a wide level past the window: reading resumes after each
                        byte[] n = ("w" + w).getBytes(StandardCharsets.US_ASCII);
                        LinuxFs.mkdir(cur, n, 0700);
                        int sub = LinuxFs.openPath(cur, n);
                        touch(sub, new byte[] {'g'});
                        LinuxFs.closeQuietly(sub);
                    }
                }
                int next = LinuxFs.openPath(cur, LONG_NAME);
                LinuxFs.closeQuietly(cur);
                cur = next;
            }
            LinuxFs.closeQuietly(cur);
        });
        long entries = 1 + 2L * depth + 2L * wide;
        long count = reown(top, 0, 0, 10001, 10002);
        assertThat(count).isEqualTo(entries);
        assertThat(countOwnedBy(top, 10001, 10002)).isEqualTo(entries);
        assertThat(reown(top, 0, 0, 10001, 10002)).as("nothing of the old owner left").isZero();
        assertThat(remove(tmp, "deepown")).isTrue(); // @TempDir's cleanup is path-based: it cannot
    }

    // ------------------------------------------------------------------ helpers

    interface FdAction {
        void run(int fd) throws Exception;
    }

    private static void withTop(Path top, FdAction action) throws Exception {
        int fd = LinuxFs.open(LinuxFs.AT_FDCWD, top.toString().getBytes(StandardCharsets.UTF_8),
                LinuxFs.O_PATH | LinuxFs.O_DIRECTORY);
        try {
            action.run(fd);
        } finally {
            LinuxFs.closeQuietly(fd);
        }
    }

    /** A chain of {@code depth} directories below {@code fd}, each with a file when asked. */
    static void chain(int fd, int depth, byte[] name, boolean files) throws Errno {
        int cur = LinuxFs.openPath(fd, new byte[] {'.'});
        for (int i = 0; i < depth; i++) {
            LinuxFs.mkdir(cur, name, 0755);
            if (files) {
                touch(cur, ("f" + i).getBytes(StandardCharsets.US_ASCII));
            }
            int next = LinuxFs.openPath(cur, name);
            LinuxFs.closeQuietly(cur);
            cur = next;
        }
        LinuxFs.closeQuietly(cur);
    }

    private static void touch(int dir, byte[] name) throws Errno {
        LinuxFs.closeQuietly(LinuxFs.open(dir, name, 0100 /* O_CREAT */ | 01 /* O_WRONLY */));
    }

    /** Levels of the single-directory chain below {@code top} (fd-relative: the path is too long for the JDK). */
    private static int countDepth(Path top) throws Exception {
        int[] depth = {0};
        withTop(top, fd -> {
            int cur = LinuxFs.openPath(fd, new byte[] {'.'});
            while (true) {
                byte[] dir = null;
                for (byte[] n : LinuxFs.names(cur, Integer.MAX_VALUE - 1)) {
                    if (LinuxFs.lstat(cur, n).isDirectory()) {
                        dir = n;
                    }
                }
                if (dir == null) {
                    break;
                }
                int next = LinuxFs.openPath(cur, dir);
                LinuxFs.closeQuietly(cur);
                cur = next;
                depth[0]++;
            }
            LinuxFs.closeQuietly(cur);
        });
        return depth[0];
    }

    /** Entries (top included) owned by uid:gid, walking the tree recursively (test trees are a few hundred deep). */
    private static long countOwnedBy(Path top, long uid, long gid) throws Exception {
        long[] n = {0};
        withTop(top, fd -> n[0] = countOwnedBy(fd, uid, gid));
        return n[0];
    }

    private static long countOwnedBy(int dir, long uid, long gid) throws Errno {
        Stat self = LinuxFs.stat(dir);
        long n = self.uid() == uid && self.gid() == gid ? 1 : 0;
        for (byte[] name : LinuxFs.names(dir, Integer.MAX_VALUE - 1)) {
            Stat st = LinuxFs.lstat(dir, name);
            if (st.isDirectory()) {
                int sub = LinuxFs.openPath(dir, name);
                try {
                    n += countOwnedBy(sub, uid, gid);
                } finally {
                    LinuxFs.closeQuietly(sub);
                }
            } else if (st.uid() == uid && st.gid() == gid) {
                n++;
            }
        }
        return n;
    }

    private static boolean remove(Path parent, String name) throws Exception {
        boolean[] result = new boolean[1];
        withTop(parent, fd -> result[0] = HostTrees.remove(fd, name.getBytes(StandardCharsets.UTF_8), "top"));
        return result[0];
    }

    private static long reown(Path top, long fromUid, long fromGid, long toUid, long toGid) throws Exception {
        long[] count = new long[1];
        withTop(top, fd -> count[0] = HostTrees.reown(fd, fromUid, fromGid, toUid, toGid, "top"));
        return count[0];
    }

    private static Stat lstat(Path p) throws Exception {
        Stat[] st = new Stat[1];
        withTop(p.getParent(), fd -> st[0] = LinuxFs.lstat(fd, p.getFileName().toString().getBytes(StandardCharsets.UTF_8)));
        return st[0];
    }

    private static void chown(Path p, long uid, long gid) throws Exception {
        withTop(p.getParent(), fd -> LinuxFs.lchown(fd, p.getFileName().toString().getBytes(StandardCharsets.UTF_8),
                uid, gid));
    }

    private static void chmod(Path p, String mode) throws IOException {
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(mode));
    }

    private static void mkfifo(Path p) throws Exception {
        run("mkfifo", p.toString());
    }

    private static void requireRoot() throws IOException {
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid", LinkOption.NOFOLLOW_LINKS);
        assertThat(uid).as("this test needs root (CI runs as root; chown, chattr and mount)").isZero();
    }

    private static void run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("%s: %s", String.join(" ", command), out).isZero();
    }
}
