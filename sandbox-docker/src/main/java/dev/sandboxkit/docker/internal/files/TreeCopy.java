package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.docker.internal.files.HostTrees.Failure;
import dev.sandboxkit.docker.internal.files.LinuxFs.DirEntry;
import dev.sandboxkit.docker.internal.files.LinuxFs.DirStream;
import dev.sandboxkit.docker.internal.files.LinuxFs.Errno;
import dev.sandboxkit.docker.internal.files.LinuxFs.Stat;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Copies a directory tree that a sandbox may be changing into a directory only the JVM writes (snapshots,
 * restores, forks), entirely through descriptors: every entry is looked at with {@code statx(AT_SYMLINK_NOFOLLOW)}
 * and opened relative to its pinned parent with {@code O_NOFOLLOW}, so nothing planted is ever followed.
 * <ul>
 *   <li>directories are recreated, their permission bits set once their content is in (a {@code 0555} directory
 *       can be filled);</li>
 *   <li>regular files are copied with their permission bits; setuid, setgid and sticky are dropped. A file is
 *       opened {@code O_NONBLOCK} and checked to be regular on its descriptor, so a FIFO or device swapped in
 *       after the stat is never read;</li>
 *   <li>symbolic links are recreated as links with the same target, never resolved;</li>
 *   <li>FIFOs, sockets and devices are left out; hard links become separate files; entries that vanish
 *       mid-copy are skipped (the sandbox deleted them while the copy ran).</li>
 * </ul>
 * The walk keeps one descriptor pair per level on an explicit stack (no recursion), up to {@link #MAX_DEPTH}.
 * Ownership: everything created is given to {@code uid:gid} when the JVM is root.
 */
final class TreeCopy {
    /** Deeper trees fail rather than hold thousands of descriptors. */
    static final int MAX_DEPTH = 1024;

    private final long uid;
    private final long gid;
    private final boolean chown;
    private long bytes;
    private long entries;

    private TreeCopy(long uid, long gid, boolean chown) {
        this.uid = uid;
        this.gid = gid;
        this.chown = chown;
    }

    /** What a copy did. */
    record Result(long bytes, long entries) {
    }

    /**
     * Copies the content of the directory {@code source} (a descriptor on it; O_PATH is fine) into the empty
     * directory {@code target}.
     *
     * @param chown whether to give what is created to {@code uid:gid} (root JVMs only)
     * @return bytes of regular files and entries copied
     */
    static Result copy(int source, int target, long uid, long gid, boolean chown) throws Failure {
        TreeCopy copy = new TreeCopy(uid, gid, chown);
        copy.run(source, target);
        return new Result(copy.bytes, copy.entries);
    }

    private record Level(DirStream from, int to, String path, int mode) {
    }

    private void run(int source, int target) throws Failure {
        Deque<Level> stack = new ArrayDeque<>();
        try {
            stack.push(new Level(open(source, new byte[] {'.'}, ""), reopenDirectory(target), "", -1));
            while (!stack.isEmpty()) {
                Level level = stack.peek();
                DirEntry entry;
                try {
                    entry = level.from.next();
                } catch (Errno e) {
                    throw Failure.of("readdir", e, level.path.isEmpty() ? "." : level.path);
                }
                if (entry == null) {
                    stack.pop();
                    finish(level);
                    continue;
                }
                String shown = level.path.isEmpty() ? HostTrees.printable(entry.name())
                        : level.path + "/" + HostTrees.printable(entry.name());
                Level child = copyEntry(level, entry.name(), shown, stack.size());
                if (child != null) {
                    stack.push(child);
                }
            }
        } finally {
            for (Level level : stack) {
                level.from.close();
                LinuxFs.closeQuietly(level.to);
            }
        }
    }

    /** Copies one entry; returns the level to descend into for a directory. */
    private Level copyEntry(Level parent, byte[] name, String shown, int depth) throws Failure {
        Stat st;
        try {
            st = LinuxFs.lstat(parent.from.fd(), name);
        } catch (Errno e) {
            if (e.code == LinuxFs.ENOENT) {
                return null; // deleted while we copy
            }
            throw Failure.of("statx", e, shown);
        }
        int perms = st.mode() & 0777;
        try {
            if (st.isDirectory()) {
                if (depth >= MAX_DEPTH) {
                    throw new Failure("copy", LinuxFs.ENAMETOOLONG, shown, "the tree is deeper than " + MAX_DEPTH
                            + " levels at '" + shown + "'");
                }
                DirStream from;
                try {
                    from = open(parent.from.fd(), name, shown);
                } catch (Failure gone) {
                    if (gone.errno == LinuxFs.ENOENT || gone.errno == LinuxFs.ENOTDIR || gone.errno == LinuxFs.ELOOP) {
                        return null; // swapped or deleted meanwhile
                    }
                    throw gone;
                }
                try {
                    LinuxFs.mkdir(parent.to, name, 0700);
                    int to = LinuxFs.open(parent.to, name, LinuxFs.O_RDONLY | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW);
                    entries++;
                    return new Level(from, to, shown, perms);
                } catch (Errno e) {
                    from.close();
                    throw Failure.of("mkdirat", e, shown);
                }
            }
            if (st.isRegular()) {
                copyFile(parent, name, shown, perms);
            } else if (st.isSymlink()) {
                byte[] target = LinuxFs.readlink(parent.from.fd(), name);
                LinuxFs.symlink(target, parent.to, name);
                if (chown) {
                    LinuxFs.lchown(parent.to, name, uid, gid);
                }
                entries++;
            }
            // FIFOs, sockets and devices: left out, never opened.
            return null;
        } catch (Errno e) {
            if (e.code == LinuxFs.ENOENT) {
                return null;
            }
            throw Failure.of("copy", e, shown);
        }
    }

    private void copyFile(Level parent, byte[] name, String shown, int perms) throws Errno, Failure {
        int in;
        try {
            in = LinuxFs.open(parent.from.fd(), name, LinuxFs.O_RDONLY | LinuxFs.O_NOFOLLOW | LinuxFs.O_NONBLOCK);
        } catch (Errno e) {
            if (e.code == LinuxFs.ELOOP) {
                return; // became a link after the stat: left out, as links are only copied as links
            }
            throw e;
        }
        int out = -1;
        try {
            if (!LinuxFs.stat(in).isRegular()) {
                return; // swapped for something else after the stat
            }
            out = LinuxFs.create(parent.to, name, 0600);
            try (FileChannel src = FileChannel.open(LinuxFs.proc(in), StandardOpenOption.READ);
                 FileChannel dst = FileChannel.open(LinuxFs.proc(out), StandardOpenOption.WRITE)) {
                long size = src.size();
                long done = 0;
                // Copies what is there now; a file that grows meanwhile is cut at its size when opened.
                while (done < size) {
                    long n = src.transferTo(done, size - done, dst);
                    if (n <= 0) {
                        break; // truncated while we read
                    }
                    done += n;
                }
                bytes += done;
            } catch (IOException e) {
                throw new Failure("copy", LinuxFs.EIO, shown, "cannot copy '" + shown + "': " + e.getMessage());
            }
            LinuxFs.chmod(out, perms);
            if (chown) {
                LinuxFs.chown(out, uid, gid);
            }
            entries++;
        } finally {
            LinuxFs.closeQuietly(in);
            LinuxFs.closeQuietly(out);
        }
    }

    /** A directory's content is in: set its mode and owner, close it. */
    private void finish(Level level) throws Failure {
        try {
            if (level.mode >= 0) {
                LinuxFs.chmod(level.to, level.mode);
            }
            if (chown && level.mode >= 0) {
                LinuxFs.chown(level.to, uid, gid);
            }
        } catch (Errno e) {
            throw Failure.of("fchmod", e, level.path);
        } finally {
            level.from.close();
            LinuxFs.closeQuietly(level.to);
        }
    }

    private static DirStream open(int dirfd, byte[] name, String shown) throws Failure {
        try {
            return DirStream.open(dirfd, name);
        } catch (Errno e) {
            throw Failure.of("openat", e, shown.isEmpty() ? "." : shown);
        }
    }

    private static int reopenDirectory(int fd) throws Failure {
        try {
            return LinuxFs.open(fd, new byte[] {'.'}, LinuxFs.O_RDONLY | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW);
        } catch (Errno e) {
            throw Failure.of("openat", e, ".");
        }
    }
}
