package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.docker.internal.files.LinuxFs.DirEntry;
import dev.sandboxkit.docker.internal.files.LinuxFs.DirStream;
import dev.sandboxkit.docker.internal.files.LinuxFs.Errno;
import dev.sandboxkit.docker.internal.files.LinuxFs.Stat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The two whole-tree operations on a workdir: removing a tree (the files API's recursive delete and the
 * deletion of a whole workdir share it) and re-owning one (when a session resumes under another user).
 *
 * <p>The container made the tree and may have made it hostile: links that resolve on the host, FIFOs,
 * devices, directories of mode 000, names of any bytes, and nesting far beyond {@code PATH_MAX} (a chain of
 * directories can be 100,000 deep). So both walks use only descriptor-relative calls ({@code openat} with
 * {@code O_NOFOLLOW | O_DIRECTORY}, {@code unlinkat}, {@code renameat}, {@code fchownat} with
 * {@code AT_SYMLINK_NOFOLLOW}): no path is ever built (no length limit), a link is removed or re-owned as
 * itself and never followed, and nothing but a directory is ever opened. Neither walk recurses or holds a
 * descriptor per level (no depth limit): at most {@link #WINDOW} directories are open at once.
 * Neither crosses into another file system (a mount point below the tree fails the walk).
 *
 * <p>Directories the JVM cannot read, search or write (the sandbox set their modes; when the JVM is not
 * root it is the sandbox user and owns them) are given back {@code u+rwx} through their pinned descriptor
 * and the call is retried once; anything still refused fails the walk, naming the entry and the errno.
 */
final class HostTrees {
    /** Directories a walk keeps open at once. */
    static final int WINDOW = 64;
    /** Passes over one directory before a tree that keeps changing is given up (only a live sandbox can). */
    static final int MAX_PASSES = 5;
    private static final int SHOWN_PATH_CHARS = 400;

    private HostTrees() {
    }

    /** A walk that failed: the call, the entry it failed on (shown relative to the walk's start) and why. */
    static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;
        final String call;
        final int errno;
        final String entry;

        Failure(String call, int errno, String entry, String message) {
            super(message, null, false, false);
            this.call = call;
            this.errno = errno;
            this.entry = entry;
        }

        static Failure of(String call, Errno e, String entry) {
            return new Failure(call, e.code, entry, call + " of '" + entry + "' failed: " + LinuxFs.describe(e.code));
        }
    }

    // ================================================================== removal

    /**
     * Removes {@code name} below the pinned directory {@code parent}: an entry of any other kind is unlinked
     * itself; a directory is emptied, then removed.
     *
     * @param shown how to name the entry in errors (for example a workdir-relative path)
     * @return whether anything was there
     */
    static boolean remove(int parent, byte[] name, String shown) throws Failure {
        for (int pass = 0; pass < MAX_PASSES; pass++) {
            Stat st;
            try {
                st = LinuxFs.lstat(parent, name);
            } catch (Errno e) {
                if (e.code == LinuxFs.ENOENT) {
                    return pass > 0;
                }
                throw Failure.of("statx", e, shown);
            }
            if (!st.isDirectory()) {
                try {
                    unlinkRepairing(parent, name, false);
                    return true;
                } catch (Errno e) {
                    if (e.code == LinuxFs.ENOENT) {
                        return true;
                    }
                    if (e.code == LinuxFs.EISDIR) {
                        continue; // became a directory meanwhile
                    }
                    throw Failure.of("unlinkat", e, shown);
                }
            }
            DirStream top;
            try {
                top = openRepairing(parent, name);
            } catch (Errno e) {
                if (e.code == LinuxFs.ENOENT || e.code == LinuxFs.ELOOP || e.code == LinuxFs.ENOTDIR) {
                    continue; // swapped meanwhile: look again
                }
                throw Failure.of("openat", e, shown);
            }
            try {
                new Removal(top, shown).run();
            } finally {
                top.close();
            }
            try {
                unlinkRepairing(parent, name, true);
                return true;
            } catch (Errno e) {
                if (e.code == LinuxFs.ENOENT) {
                    return true;
                }
                if (e.code != LinuxFs.ENOTEMPTY && e.code != LinuxFs.EEXIST && e.code != LinuxFs.ENOTDIR) {
                    throw Failure.of("unlinkat", e, shown);
                }
                // The sandbox is still adding entries (or swapped the name): another pass.
            }
        }
        throw changing(shown);
    }

    private static Failure changing(String shown) {
        return new Failure("unlinkat", LinuxFs.ENOTEMPTY, shown, "'" + shown + "' kept changing while being deleted");
    }

    /**
     * Empties one directory, depth first, with at most {@link #WINDOW} directories open. A directory met
     * deeper than that is renamed up to a fresh name directly in the top directory, which flattens the tree:
     * it is removed when the top directory is read again. Every entry is visited a bounded number of times,
     * and memory does not grow with depth.
     */
    private static final class Removal {
        private final List<Frame> stack = new ArrayList<>();
        private final long dev;
        private final String shown;
        private final String flatPrefix = ".sandboxkit-deep-" + Long.toHexString(ThreadLocalRandom.current().nextLong())
                + "-";
        private long flattened;

        Removal(DirStream top, String shown) throws Failure {
            this.shown = shown;
            try {
                this.dev = LinuxFs.stat(top.fd()).dev();
            } catch (Errno e) {
                throw Failure.of("statx", e, shown);
            }
            stack.add(new Frame(top, null, false));
        }

        private static final class Frame {
            final DirStream dir;
            final byte[] name;
            final boolean owned;
            /** Completed passes that found entries. */
            int passes;
            boolean sawEntries;
            boolean repaired;
            /** Top only: something was flattened into it during the current pass (not the sandbox's doing). */
            boolean flattenedInto;

            Frame(DirStream dir, byte[] name, boolean owned) {
                this.dir = dir;
                this.name = name;
                this.owned = owned;
            }
        }

        void run() throws Failure {
            try {
                while (!stack.isEmpty()) {
                    Frame f = stack.get(stack.size() - 1);
                    DirEntry e;
                    try {
                        e = f.dir.next();
                    } catch (Errno x) {
                        throw Failure.of("readdir", x, path(null));
                    }
                    if (e == null) {
                        endOfPass(f);
                    } else {
                        f.sawEntries = true;
                        entry(f, e);
                    }
                }
            } finally {
                for (Frame f : stack) {
                    if (f.owned) {
                        f.dir.close();
                    }
                }
            }
        }

        /** A pass that found nothing means the directory is empty: remove it. Else read it again. */
        private void endOfPass(Frame f) throws Failure {
            if (f.sawEntries) {
                if (f.flattenedInto) {
                    f.flattenedInto = false; // our own renames, not the sandbox: free
                } else if (++f.passes > MAX_PASSES) {
                    throw changing(path(null));
                }
                f.sawEntries = false;
                f.dir.rewind();
                return;
            }
            stack.remove(stack.size() - 1);
            if (!f.owned) {
                return; // the top: the caller removes it
            }
            f.dir.close();
            Frame parent = stack.get(stack.size() - 1);
            try {
                unlink(parent, f.name, true);
            } catch (Errno x) {
                if (x.code != LinuxFs.ENOENT && x.code != LinuxFs.ENOTEMPTY && x.code != LinuxFs.EEXIST) {
                    throw Failure.of("unlinkat", x, path(f.name));
                }
                // Refilled meanwhile: the parent's next pass meets it again (and counts).
            }
        }

        private void entry(Frame f, DirEntry e) throws Failure {
            byte[] name = e.name();
            boolean directory = e.type() == LinuxFs.DT_DIR;
            if (e.type() == LinuxFs.DT_UNKNOWN) {
                try {
                    directory = lstat(f, name).isDirectory();
                } catch (Errno x) {
                    if (x.code == LinuxFs.ENOENT) {
                        return;
                    }
                    throw Failure.of("statx", x, path(name));
                }
            }
            if (!directory) {
                try {
                    unlink(f, name, false);
                    return;
                } catch (Errno x) {
                    if (x.code == LinuxFs.ENOENT) {
                        return;
                    }
                    if (x.code != LinuxFs.EISDIR) {
                        throw Failure.of("unlinkat", x, path(name));
                    }
                    // a directory after all (d_type was stale): descend
                }
            }
            if (stack.size() >= WINDOW) {
                flatten(f, name);
                return;
            }
            DirStream child;
            try {
                child = openChild(f, name);
            } catch (Errno x) {
                if (x.code == LinuxFs.ENOENT) {
                    return;
                }
                if (x.code == LinuxFs.ELOOP || x.code == LinuxFs.ENOTDIR) {
                    return; // not a directory any more: the next pass unlinks it
                }
                throw Failure.of("openat", x, path(name));
            }
            try {
                long childDev = LinuxFs.stat(child.fd()).dev();
                if (childDev != dev) {
                    throw new Failure("openat", LinuxFs.EXDEV, path(name), "'" + path(name)
                            + "' is a mount point; nothing on another file system is deleted");
                }
            } catch (Errno x) {
                child.close();
                throw Failure.of("statx", x, path(name));
            } catch (Failure x) {
                child.close();
                throw x;
            }
            stack.add(new Frame(child, name, true));
        }

        /** Renames a too-deep directory to a fresh name in the top directory; it is removed from there. */
        private void flatten(Frame f, byte[] name) throws Failure {
            Frame top = stack.get(0);
            for (int attempt = 0; ; attempt++) {
                byte[] to = (flatPrefix + flattened++).getBytes(StandardCharsets.US_ASCII);
                try {
                    renameRepairing(f, name, top.dir.fd(), to);
                    top.flattenedInto = true;
                    return;
                } catch (Errno x) {
                    if (x.code == LinuxFs.ENOENT) {
                        return; // gone meanwhile
                    }
                    if ((x.code == LinuxFs.EEXIST || x.code == LinuxFs.ENOTEMPTY || x.code == LinuxFs.ENOTDIR
                            || x.code == LinuxFs.EISDIR) && attempt < MAX_PASSES) {
                        continue; // the sandbox holds that name: another one
                    }
                    throw Failure.of("renameat", x, path(name));
                }
            }
        }

        private Stat lstat(Frame f, byte[] name) throws Errno {
            try {
                return LinuxFs.lstat(f.dir.fd(), name);
            } catch (Errno x) {
                if (x.code != LinuxFs.EACCES || !repairOnce(f)) {
                    throw x;
                }
                return LinuxFs.lstat(f.dir.fd(), name);
            }
        }

        private void unlink(Frame f, byte[] name, boolean directory) throws Errno {
            try {
                LinuxFs.unlink(f.dir.fd(), name, directory);
            } catch (Errno x) {
                if (x.code != LinuxFs.EACCES || !repairOnce(f)) {
                    throw x;
                }
                LinuxFs.unlink(f.dir.fd(), name, directory);
            }
        }

        private DirStream openChild(Frame f, byte[] name) throws Errno {
            try {
                return openRepairing(f.dir.fd(), name);
            } catch (Errno x) {
                if (x.code != LinuxFs.EACCES || !repairOnce(f)) {
                    throw x;
                }
                return openRepairing(f.dir.fd(), name);
            }
        }

        /** A directory moved to another parent must be writable itself (its {@code ..} changes). */
        private void renameRepairing(Frame f, byte[] name, int toDir, byte[] to) throws Errno {
            try {
                LinuxFs.rename(f.dir.fd(), name, toDir, to);
            } catch (Errno x) {
                if (x.code != LinuxFs.EACCES) {
                    throw x;
                }
                repairOnce(f);
                repairChild(f.dir.fd(), name);
                LinuxFs.rename(f.dir.fd(), name, toDir, to);
            }
        }

        private static boolean repairOnce(Frame f) {
            if (f.repaired) {
                return false;
            }
            f.repaired = true;
            return repair(f.dir.fd());
        }

        /** The entry being worked on, relative to where the walk started, for errors (only held levels). */
        private String path(byte[] last) {
            StringBuilder b = new StringBuilder(shown);
            for (Frame f : stack) {
                if (f.name != null) {
                    b.append('/').append(printable(f.name));
                }
            }
            if (last != null) {
                b.append('/').append(printable(last));
            }
            return abbreviate(b.toString());
        }
    }

    // ================================================================== re-owning

    /**
     * Gives every entry below and including the pinned directory {@code top} that belongs to
     * {@code fromUid} to {@code toUid}, and every one in group {@code fromGid} to {@code toGid}; other
     * owners are left alone. Links, FIFOs, sockets and devices are re-owned as themselves
     * ({@code AT_SYMLINK_NOFOLLOW}), never opened or followed. Directories are re-owned after their content
     * and {@code top} last, so an interrupted run is completed by the next one (the top still has the old
     * owner). The tree must not change meanwhile (no sandbox runs on it).
     *
     * <p>At most {@link #WINDOW} directories are open at once; below that, the walk climbs back through
     * {@code ..} (checked to be the directory it came from) and resumes reading where it left off.
     *
     * @param shown how to name the top in errors
     * @return the number of entries re-owned
     */
    static long reown(int top, long fromUid, long fromGid, long toUid, long toGid, String shown) throws Failure {
        return new Reowning(fromUid, fromGid, toUid, toGid, shown).run(top);
    }

    private static final class Reowning {
        private final long fromUid;
        private final long fromGid;
        private final long toUid;
        private final long toGid;
        private final String shown;
        /** Open streams of the levels above the current one, up to the window. */
        private final List<DirStream> held = new ArrayList<>();
        /** For levels whose stream was closed: where to resume reading, and their inode to check {@code ..}. */
        private long[] positions = new long[16];
        private long[] inodes = new long[16];
        private long dev;
        private long count;

        Reowning(long fromUid, long fromGid, long toUid, long toGid, String shown) {
            this.fromUid = fromUid;
            this.fromGid = fromGid;
            this.toUid = toUid;
            this.toGid = toGid;
            this.shown = shown;
        }

        long run(int topFd) throws Failure {
            DirStream cur;
            Stat curStat;
            try {
                cur = DirStream.open(topFd, new byte[] {'.'});
            } catch (Errno e) {
                throw Failure.of("openat", e, shown);
            }
            int depth = 0; // levels below the top
            try {
                curStat = stat(cur, shown);
                dev = curStat.dev();
                while (true) {
                    DirEntry e;
                    try {
                        e = cur.next();
                    } catch (Errno x) {
                        throw Failure.of("readdir", x, shown(depth, null));
                    }
                    if (e == null) {
                        chown(cur, null, curStat, depth);
                        if (depth == 0) {
                            return count;
                        }
                        DirStream parent = ascend(cur, depth);
                        cur.close();
                        cur = parent;
                        depth--;
                        curStat = stat(cur, shown(depth, null));
                        continue;
                    }
                    Stat st;
                    try {
                        st = LinuxFs.lstat(cur.fd(), e.name());
                    } catch (Errno x) {
                        throw Failure.of("statx", x, shown(depth, e.name()));
                    }
                    if (!st.isDirectory()) {
                        chown(cur, e.name(), st, depth);
                        continue;
                    }
                    DirStream child;
                    try {
                        child = DirStream.open(cur.fd(), e.name());
                    } catch (Errno x) {
                        throw Failure.of("openat", x, shown(depth, e.name()));
                    }
                    Stat childStat;
                    try {
                        childStat = stat(child, shown(depth, e.name()));
                        if (childStat.dev() != dev) {
                            throw new Failure("openat", LinuxFs.EXDEV, shown(depth, e.name()), "'"
                                    + shown(depth, e.name()) + "' is a mount point; its owner is not changed");
                        }
                    } catch (Failure x) {
                        child.close();
                        throw x;
                    }
                    descend(cur, curStat, depth);
                    cur = child;
                    curStat = childStat;
                    depth++;
                }
            } finally {
                cur.close();
                held.forEach(DirStream::close);
                held.clear();
            }
        }

        /** Keeps the current stream open while the window allows; else remembers where to resume. */
        private void descend(DirStream cur, Stat curStat, int depth) {
            if (depth < WINDOW) {
                held.add(cur);
                return;
            }
            int i = depth - WINDOW;
            if (i >= positions.length) {
                positions = Arrays.copyOf(positions, positions.length * 2);
                inodes = Arrays.copyOf(inodes, inodes.length * 2);
            }
            positions[i] = cur.tell();
            inodes[i] = curStat.ino();
            cur.close();
        }

        /** The stream of the level above {@code depth}: held, or reopened through {@code ..} and checked. */
        private DirStream ascend(DirStream cur, int depth) throws Failure {
            int level = depth - 1;
            if (level < WINDOW) {
                return held.remove(held.size() - 1);
            }
            DirStream parent;
            try {
                parent = DirStream.open(cur.fd(), new byte[] {'.', '.'});
            } catch (Errno x) {
                throw Failure.of("openat", x, shown(depth, null) + "/..");
            }
            Stat st = stat(parent, shown(level, null));
            if (st.ino() != inodes[level - WINDOW] || st.dev() != dev) {
                parent.close();
                throw new Failure("openat", LinuxFs.EXDEV, shown(level, null), "the tree changed while its owner was "
                        + "being changed ('..' is not the directory the walk came from)");
            }
            parent.seek(positions[level - WINDOW]);
            return parent;
        }

        /** Re-owns {@code name} in {@code dir} as itself, or {@code dir} itself when {@code name} is null. */
        private void chown(DirStream dir, byte[] name, Stat st, int depth) throws Failure {
            long uid = st.uid() == fromUid ? toUid : -1;
            long gid = st.gid() == fromGid ? toGid : -1;
            if (uid == -1 && gid == -1) {
                return;
            }
            try {
                if (name == null) {
                    LinuxFs.chown(dir.fd(), uid, gid);
                } else {
                    LinuxFs.lchown(dir.fd(), name, uid, gid);
                }
                count++;
            } catch (Errno x) {
                if (name == null || x.code != LinuxFs.ENOENT) {
                    throw Failure.of("fchownat", x, shown(depth, name));
                }
            }
        }

        private static Stat stat(DirStream dir, String shown) throws Failure {
            try {
                return LinuxFs.stat(dir.fd());
            } catch (Errno x) {
                throw Failure.of("statx", x, shown);
            }
        }

        /** Names are not kept (memory would grow with depth): errors name the top, the depth and the entry. */
        private String shown(int depth, byte[] name) {
            String at = depth == 0 ? shown : shown + " (" + depth + " levels down)";
            return name == null ? at : at + "/" + abbreviate(printable(name));
        }
    }

    // ================================================================== shared

    /** Opens a directory below {@code parent} for reading; one that refuses (mode 000) is repaired first. */
    private static DirStream openRepairing(int parent, byte[] name) throws Errno {
        try {
            return DirStream.open(parent, name);
        } catch (Errno e) {
            if (e.code != LinuxFs.EACCES || !repairChild(parent, name)) {
                throw e;
            }
            return DirStream.open(parent, name);
        }
    }

    private static void unlinkRepairing(int parent, byte[] name, boolean directory) throws Errno {
        try {
            LinuxFs.unlink(parent, name, directory);
        } catch (Errno e) {
            if (e.code != LinuxFs.EACCES || !repair(parent)) {
                throw e;
            }
            LinuxFs.unlink(parent, name, directory);
        }
    }

    private static boolean repairChild(int parent, byte[] name) {
        int fd;
        try {
            fd = LinuxFs.openPath(parent, name);
        } catch (Errno e) {
            return false;
        }
        try {
            return repair(fd);
        } finally {
            LinuxFs.closeQuietly(fd);
        }
    }

    /**
     * Gives a directory the sandbox locked back {@code u+rwx}, through its descriptor: possible when the JVM
     * owns it (it is the sandbox user) or is root.
     */
    private static boolean repair(int dirFd) {
        try {
            Stat st = LinuxFs.stat(dirFd);
            if (!st.isDirectory()) {
                return false;
            }
            LinuxFs.chmod(dirFd, (st.mode() & 0777) | 0700);
            return true;
        } catch (Errno e) {
            return false;
        }
    }

    /** A name as text safe for messages and logs: control characters escaped, never raw. */
    static String printable(byte[] name) {
        String s = new String(name, StandardCharsets.UTF_8);
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == '\u2028' || c == '\u2029') {
                b.append(String.format("\\x%02x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    private static String abbreviate(String path) {
        return path.length() <= SHOWN_PATH_CHARS ? path : "..." + path.substring(path.length() - SHOWN_PATH_CHARS);
    }
}
