package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxSpec;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * What a non-root JVM faces: the sandbox (same uid) made parts of its workdir unreadable and planted
 * links. Run in a child JVM as an unprivileged user by {@link NonRootWorkspaceTest}; prints OK.
 */
final class NonRootWorkspaceScenario {
    private NonRootWorkspaceScenario() {
    }

    public static void main(String[] args) throws Exception {
        Path base = Path.of(args[0]);
        Path root = base.resolve("workspaces");
        HostWorkspaces workspaces = new HostWorkspaces(root, "10001:10001");
        SandboxSpec spec = SandboxSpec.builder().image("any").build();
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        check(workspaces.sandboxUser(spec).startsWith(uid + ":"), "sandbox user is the JVM's uid");

        try {
            workspaces.create("other-user", spec.toBuilder().user(String.valueOf(uid + 1)).build());
            throw new AssertionError("a foreign sandbox uid must be refused when the JVM is not root");
        } catch (SandboxConfigurationException expected) {
            check(expected.getMessage().contains("only root"), "explains why: " + expected.getMessage());
        }

        Path ws = Path.of(workspaces.create("s1", spec));
        try {
            workspaces.claim(ws.toString(), spec.toBuilder().user(String.valueOf(uid + 1)).build());
            throw new AssertionError("resuming under a foreign uid must be refused when the JVM is not root");
        } catch (SandboxConfigurationException expected) {
            check(expected.getMessage().contains("only root"), "explains why: " + expected.getMessage());
        }
        workspaces.claim(ws.toString(), spec); // the JVM's own uid: nothing to change
        check(PosixFilePermissions.toString(Files.getPosixFilePermissions(ws)).equals("rwx------"), "mode 0700");
        check(Files.getAttribute(ws, "unix:uid").equals(uid), "owned by the JVM uid");

        Path outside = Files.createDirectory(base.resolve("outside"));
        Files.writeString(outside.resolve("keep.txt"), "precious");
        Files.createDirectories(ws.resolve("a/b/c"));
        Files.writeString(ws.resolve("a/b/c/f"), "x");
        Files.createSymbolicLink(ws.resolve("a/b/link"), outside);
        Files.createDirectories(ws.resolve("ro"));
        Files.writeString(ws.resolve("ro/f"), "x");
        Files.createSymbolicLink(ws.resolve("link"), outside);
        Files.setPosixFilePermissions(ws.resolve("ro"), PosixFilePermissions.fromString("r-x------"));
        Files.setPosixFilePermissions(ws.resolve("a/b"), PosixFilePermissions.fromString("---------"));
        Files.setPosixFilePermissions(ws.resolve("a"), PosixFilePermissions.fromString("---------"));
        // A chain past PATH_MAX and the walk's window, locked (000, r-x, -wx) at several depths, with a FIFO.
        int top = LinuxFs.open(LinuxFs.AT_FDCWD, ws.toString().getBytes(StandardCharsets.UTF_8),
                LinuxFs.O_PATH | LinuxFs.O_DIRECTORY);
        byte[] name = "n".repeat(250).getBytes(StandardCharsets.US_ASCII);
        int cur = top;
        int[] locks = {0, 0500, 0300};
        for (int i = 0; i < HostTrees.WINDOW * 3; i++) {
            LinuxFs.mkdir(cur, name, 0700);
            int next = LinuxFs.openPath(cur, name);
            if (i == HostTrees.WINDOW * 2) {
                Process mkfifo = new ProcessBuilder("mkfifo", "/proc/" + ProcessHandle.current().pid() + "/fd/" + next
                        + "/fifo").start();
                check(mkfifo.waitFor() == 0, "mkfifo deep down");
            }
            if (cur != top) {
                if (i % 30 == 29) {
                    LinuxFs.chmod(cur, locks[(i / 30) % locks.length]);
                }
                LinuxFs.closeQuietly(cur);
            }
            cur = next;
        }
        LinuxFs.closeQuietly(cur);
        LinuxFs.closeQuietly(top);
        Files.setPosixFilePermissions(ws, PosixFilePermissions.fromString("r-x------"));

        workspaces.delete(ws.toString());

        check(Files.notExists(ws, java.nio.file.LinkOption.NOFOLLOW_LINKS), "workdir deleted");
        check(Files.readString(outside.resolve("keep.txt")).equals("precious"), "link target untouched");
        workspaces.delete(ws.toString());
        System.out.println("OK");
    }

    private static void check(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError("failed: " + what);
        }
    }
}
