package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxSpec;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The files API in a JVM that is not root: it is then the sandbox user itself, chowns nothing, and must cope
 * with modes the sandbox set (read-only files and directories, a locked directory to delete). The
 * "sandbox" here is this JVM planting entries directly. Run as an unprivileged user by
 * {@link NonRootFilesTest}; prints OK.
 */
final class NonRootFilesScenario {
    private NonRootFilesScenario() {
    }

    public static void main(String[] args) throws Exception {
        Path base = Path.of(args[0]);
        HostWorkspaces workspaces = new HostWorkspaces(base.resolve("workspaces"), "10001:10001");
        SandboxSpec spec = SandboxSpec.builder().image("any").build();
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        Path ws = Path.of(workspaces.create("s1", spec));
        SandboxFiles files = workspaces.files(ws.toString(), spec, FileLimits.DEFAULT);

        files.write("a/b/c.txt", "hello".getBytes(StandardCharsets.UTF_8));
        check(new String(files.readBytes("a/b/c.txt"), StandardCharsets.UTF_8).equals("hello"), "round trip");
        check(Files.getAttribute(ws.resolve("a/b/c.txt"), "unix:uid").equals(uid), "owned by the JVM (sandbox) uid");
        check(mode(ws.resolve("a/b/c.txt")).equals("rw-r--r--"), "file 0644");
        check(mode(ws.resolve("a/b")).equals("rwxr-xr-x"), "dir 0755");

        // A read-only file is replaced (the rename needs the directory, not the file, writable).
        Files.writeString(ws.resolve("ro.txt"), "old");
        Files.setPosixFilePermissions(ws.resolve("ro.txt"), PosixFilePermissions.fromString("r--r--r--"));
        files.write("ro.txt", "new".getBytes(StandardCharsets.UTF_8));
        check(Files.readString(ws.resolve("ro.txt")).equals("new"), "read-only file replaced");

        // A read-only directory refuses with a clear reason (the sandbox chose that mode; it is not overridden).
        Files.createDirectories(ws.resolve("rodir"));
        Files.setPosixFilePermissions(ws.resolve("rodir"), PosixFilePermissions.fromString("r-xr-xr-x"));
        try {
            files.write("rodir/x", new byte[1]);
            throw new AssertionError("write into a read-only directory must fail");
        } catch (SandboxFileException e) {
            check(e.reason() == SandboxFileException.Reason.PERMISSION_DENIED, "read-only dir: " + e.getMessage());
        }

        // A tree the sandbox locked (mode 000 inside) is still deleted: the JVM owns it and repairs modes.
        Files.createDirectories(ws.resolve("locked/inner/deeper"));
        Files.writeString(ws.resolve("locked/inner/deeper/f"), "x");
        Files.setPosixFilePermissions(ws.resolve("locked/inner/deeper"), PosixFilePermissions.fromString("---------"));
        Files.setPosixFilePermissions(ws.resolve("locked/inner"), PosixFilePermissions.fromString("r-x------"));
        check(files.deleteRecursively("locked"), "locked tree deleted");
        check(!Files.exists(ws.resolve("locked")), "locked tree gone");

        // Links and FIFOs, as for root.
        Path outside = Files.createDirectories(base.resolve("outside"));
        Files.writeString(outside.resolve("keep.txt"), "precious");
        Files.createSymbolicLink(ws.resolve("link"), outside.resolve("keep.txt"));
        files.write("link", "mine".getBytes(StandardCharsets.UTF_8));
        check(Files.readString(outside.resolve("keep.txt")).equals("precious"), "link target untouched");
        Process mkfifo = new ProcessBuilder("mkfifo", ws.resolve("fifo").toString()).start();
        check(mkfifo.waitFor() == 0, "mkfifo");
        try {
            files.readBytes("fifo");
            throw new AssertionError("a FIFO must not be read");
        } catch (SandboxFileException e) {
            check(e.reason() == SandboxFileException.Reason.NOT_A_REGULAR_FILE, "fifo refused");
        }
        workspaces.delete(ws.toString());
        System.out.println("OK");
    }

    private static String mode(Path p) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }

    private static void check(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError("failed: " + what);
        }
    }
}
