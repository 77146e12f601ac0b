package dev.sandboxkit.docker.internal.files;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import dev.sandboxkit.SandboxFileException;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The handful of fd-relative Linux system calls the files API needs and the JDK does not offer: {@code openat}
 * with {@code O_PATH}, {@code statx} on a descriptor, {@code mkdirat}, {@code unlinkat}, {@code renameat},
 * {@code symlinkat}, {@code fchownat}, {@code fchmodat}, {@code readlinkat} and {@code readdir}, bound through JNA. Names are
 * raw bytes, never decoded, so any name the sandbox creates can be handled. Only 64-bit Linux on x86-64,
 * AArch64 and RISC-V 64 (whose open flags and {@code struct dirent} layout are known here) is supported;
 * elsewhere {@link #require()} reports why the files API is unavailable.
 */
final class LinuxFs {
    static final int O_RDONLY = 0;
    static final int O_WRONLY = 01;
    static final int O_CREAT = 0100;
    static final int O_EXCL = 0200;
    static final int O_NONBLOCK = 04000;
    static final int O_CLOEXEC = 02000000;
    static final int O_PATH = 010000000;
    static final int O_DIRECTORY;
    static final int O_NOFOLLOW;

    static final int AT_FDCWD = -100;
    static final int AT_SYMLINK_NOFOLLOW = 0x100;
    static final int AT_REMOVEDIR = 0x200;
    static final int AT_EMPTY_PATH = 0x1000;

    static final int EPERM = 1;
    static final int ENOENT = 2;
    static final int EIO = 5;
    static final int EBADF = 9;
    static final int EACCES = 13;
    static final int EBUSY = 16;
    static final int EEXIST = 17;
    static final int EXDEV = 18;
    static final int ENOTDIR = 20;
    static final int EISDIR = 21;
    static final int EINVAL = 22;
    static final int ENOSPC = 28;
    static final int EROFS = 30;
    static final int ENAMETOOLONG = 36;
    static final int ENOTEMPTY = 39;
    static final int ELOOP = 40;

    static final int S_IFMT = 0170000;
    static final int S_IFSOCK = 0140000;
    static final int S_IFLNK = 0120000;
    static final int S_IFREG = 0100000;
    static final int S_IFBLK = 0060000;
    static final int S_IFDIR = 0040000;
    static final int S_IFCHR = 0020000;
    static final int S_IFIFO = 0010000;

    /** {@code d_type} values of {@code struct dirent}. */
    static final int DT_UNKNOWN = 0;
    static final int DT_DIR = 4;

    private static final int STATX_BASIC_STATS = 0x7ff;
    private static final int STATX_SIZE = 256;
    /** Offsets in glibc's and musl's 64-bit {@code struct dirent}: ino 8, off 8, reclen 2, type 1, name. */
    private static final int DIRENT_TYPE_OFFSET = 18;
    private static final int DIRENT_NAME_OFFSET = 19;
    private static final byte[] EMPTY = {0};

    /** Why the binding cannot be used here, or null when it can. */
    private static final String UNAVAILABLE;

    static {
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        boolean linux = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux");
        int directory = 0;
        int nofollow = 0;
        String problem = null;
        switch (arch) {
            case "amd64", "x86_64", "riscv64" -> {
                directory = 0200000;
                nofollow = 0400000;
            }
            case "aarch64" -> {
                directory = 040000;
                nofollow = 0100000;
            }
            default -> problem = "the files API supports 64-bit Linux on x86-64, aarch64 and riscv64, not " + arch;
        }
        if (problem == null && !linux) {
            problem = "the files API needs Linux, not " + System.getProperty("os.name");
        }
        if (problem == null && !Files.isDirectory(Path.of("/proc/self/fd"))) {
            problem = "the files API needs /proc mounted (it reopens verified descriptors through /proc/self/fd)";
        }
        if (problem == null) {
            try {
                Native.register(LinuxFs.class, NativeLibrary.getInstance("c"));
            } catch (LinkageError | RuntimeException e) {
                problem = "the files API could not bind libc through JNA (statx needs glibc 2.28+): " + e;
            }
        }
        O_DIRECTORY = directory;
        O_NOFOLLOW = nofollow;
        UNAVAILABLE = problem;
    }

    private LinuxFs() {
    }

    /** Throws {@code UNSUPPORTED} unless the binding works on this machine. */
    static void require() {
        if (UNAVAILABLE != null) {
            throw new SandboxFileException(SandboxFileException.Reason.UNSUPPORTED, UNAVAILABLE);
        }
    }

    /** A failed system call: its errno, for the caller to map to the API's exceptions. */
    static final class Errno extends Exception {
        private static final long serialVersionUID = 1L;
        final int code;

        Errno(String call, int code) {
            super(call + " failed: " + describe(code), null, false, false);
            this.code = code;
        }
    }

    /** {@code errno 13 (EACCES)}: the number and, for the codes a file walk meets, its name. */
    static String describe(int code) {
        String name = switch (code) {
            case EPERM -> "EPERM, operation not permitted";
            case ENOENT -> "ENOENT, no such file or directory";
            case EIO -> "EIO, input/output error";
            case EBADF -> "EBADF, bad file descriptor";
            case EACCES -> "EACCES, permission denied";
            case EBUSY -> "EBUSY, busy (a mount point?)";
            case EEXIST -> "EEXIST, exists";
            case EXDEV -> "EXDEV, cross-device";
            case ENOTDIR -> "ENOTDIR, not a directory";
            case EISDIR -> "EISDIR, is a directory";
            case EINVAL -> "EINVAL, invalid argument";
            case ENOSPC -> "ENOSPC, no space left";
            case EROFS -> "EROFS, read-only file system";
            case ENAMETOOLONG -> "ENAMETOOLONG, name too long";
            case ENOTEMPTY -> "ENOTEMPTY, directory not empty";
            case ELOOP -> "ELOOP, symbolic link";
            default -> null;
        };
        return "errno " + code + (name == null ? "" : " (" + name + ")");
    }

    /** What {@code statx} reports about an inode; uid and gid are unsigned 32-bit values. */
    record Stat(int mode, long ino, long dev, long size, long uid, long gid, long nlink, long mtimeSeconds,
                int mtimeNanos) {
        int type() {
            return mode & S_IFMT;
        }

        boolean isDirectory() {
            return type() == S_IFDIR;
        }

        boolean isRegular() {
            return type() == S_IFREG;
        }

        boolean isSymlink() {
            return type() == S_IFLNK;
        }
    }

    // ------------------------------------------------------------------ the system calls, bound directly

    private static native int openat(int dirfd, byte[] path, int flags, int mode);

    private static native int close(int fd);

    private static native int statx(int dirfd, byte[] path, int flags, int mask, byte[] buf);

    private static native int mkdirat(int dirfd, byte[] path, int mode);

    private static native int unlinkat(int dirfd, byte[] path, int flags);

    private static native int renameat(int olddirfd, byte[] oldpath, int newdirfd, byte[] newpath);

    private static native int symlinkat(byte[] target, int newdirfd, byte[] linkpath);

    private static native int fchownat(int dirfd, byte[] path, int owner, int group, int flags);

    private static native int fchmodat(int dirfd, byte[] path, int mode, int flags);

    private static native long readlinkat(int dirfd, byte[] path, byte[] buf, long size);

    private static native Pointer fdopendir(int fd);

    private static native Pointer readdir(Pointer dir);

    private static native int closedir(Pointer dir);

    private static native void rewinddir(Pointer dir);

    private static native long telldir(Pointer dir);

    private static native void seekdir(Pointer dir, long position);

    // ------------------------------------------------------------------ checked wrappers

    /** NUL-terminates a name for C. */
    static byte[] c(byte[] name) {
        byte[] out = new byte[name.length + 1];
        System.arraycopy(name, 0, out, 0, name.length);
        return out;
    }

    static int open(int dirfd, byte[] name, int flags) throws Errno {
        int fd = openat(dirfd, c(name), flags | O_CLOEXEC, 0);
        if (fd < 0) {
            throw new Errno("openat", Native.getLastError());
        }
        return fd;
    }

    /** Creates a new regular file below {@code dirfd} for writing; never follows or reuses an existing entry. */
    static int create(int dirfd, byte[] name, int mode) throws Errno {
        int fd = openat(dirfd, c(name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0) {
            throw new Errno("openat", Native.getLastError());
        }
        return fd;
    }

    /**
     * Opens a name below {@code dirfd} as an {@code O_PATH} descriptor without following a link: this never
     * opens the file itself (no FIFO wait, no device driver), it only pins the inode found there.
     */
    static int openPath(int dirfd, byte[] name) throws Errno {
        return open(dirfd, name, O_PATH | O_NOFOLLOW);
    }

    static void closeQuietly(int fd) {
        if (fd >= 0) {
            close(fd);
        }
    }

    /** {@code fstat} of a descriptor (including O_PATH ones). */
    static Stat stat(int fd) throws Errno {
        return statAt(fd, EMPTY, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
    }

    /** {@code lstat} of a name in a directory: never follows a link. */
    static Stat lstat(int dirfd, byte[] name) throws Errno {
        return statAt(dirfd, c(name), AT_SYMLINK_NOFOLLOW);
    }

    private static Stat statAt(int dirfd, byte[] path, int flags) throws Errno {
        byte[] buf = new byte[STATX_SIZE];
        if (statx(dirfd, path, flags, STATX_BASIC_STATS, buf) != 0) {
            throw new Errno("statx", Native.getLastError());
        }
        // struct statx has one layout on every architecture.
        ByteBuffer b = ByteBuffer.wrap(buf).order(ByteOrder.nativeOrder());
        long nlink = Integer.toUnsignedLong(b.getInt(16));
        long uid = Integer.toUnsignedLong(b.getInt(20));
        long gid = Integer.toUnsignedLong(b.getInt(24));
        int mode = b.getShort(28) & 0xffff;
        long ino = b.getLong(32);
        long size = b.getLong(40);
        long mtime = b.getLong(112);
        int mtimeNanos = b.getInt(120);
        long dev = ((long) b.getInt(136) << 32) | Integer.toUnsignedLong(b.getInt(140));
        return new Stat(mode, ino, dev, size, uid, gid, nlink, mtime, mtimeNanos);
    }

    static void mkdir(int dirfd, byte[] name, int mode) throws Errno {
        if (mkdirat(dirfd, c(name), mode) != 0) {
            throw new Errno("mkdirat", Native.getLastError());
        }
    }

    static void unlink(int dirfd, byte[] name, boolean directory) throws Errno {
        if (unlinkat(dirfd, c(name), directory ? AT_REMOVEDIR : 0) != 0) {
            throw new Errno("unlinkat", Native.getLastError());
        }
    }

    /** {@code renameat}: replaces what holds the new name (a link is replaced itself, never followed). */
    static void rename(int olddirfd, byte[] oldName, int newdirfd, byte[] newName) throws Errno {
        if (renameat(olddirfd, c(oldName), newdirfd, c(newName)) != 0) {
            throw new Errno("renameat", Native.getLastError());
        }
    }

    static void symlink(byte[] target, int dirfd, byte[] name) throws Errno {
        if (symlinkat(c(target), dirfd, c(name)) != 0) {
            throw new Errno("symlinkat", Native.getLastError());
        }
    }

    /**
     * {@code fchown} of a descriptor, O_PATH ones included. Ids are unsigned 32-bit values; {@code -1} keeps
     * the current one (the C {@code (uid_t) -1}: the cast to int keeps the bits, so ids of 2^31 and more pass).
     */
    static void chown(int fd, long uid, long gid) throws Errno {
        if (fchownat(fd, EMPTY, (int) uid, (int) gid, AT_EMPTY_PATH) != 0) {
            throw new Errno("fchownat", Native.getLastError());
        }
    }

    /** {@code lchown} of a name in a directory (ids as in {@link #chown}). */
    static void lchown(int dirfd, byte[] name, long uid, long gid) throws Errno {
        if (fchownat(dirfd, c(name), (int) uid, (int) gid, AT_SYMLINK_NOFOLLOW) != 0) {
            throw new Errno("fchownat", Native.getLastError());
        }
    }

    /**
     * {@code chmod} of exactly the inode a descriptor holds (O_PATH ones included), through its
     * {@code /proc/self/fd} entry: {@code fchmod} refuses O_PATH descriptors.
     */
    static void chmod(int fd, int mode) throws Errno {
        if (fchmodat(AT_FDCWD, c(proc(fd).toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII)), mode,
                0) != 0) {
            throw new Errno("fchmodat", Native.getLastError());
        }
    }

    static byte[] readlink(int dirfd, byte[] name) throws Errno {
        byte[] buf = new byte[4096];
        long n = readlinkat(dirfd, c(name), buf, buf.length);
        if (n < 0) {
            throw new Errno("readlinkat", Native.getLastError());
        }
        byte[] out = new byte[(int) n];
        System.arraycopy(buf, 0, out, 0, out.length);
        return out;
    }

    /**
     * The names in a directory held by {@code dirfd} (O_PATH is fine), without {@code .} and {@code ..}.
     * Opens {@code "."} relative to the descriptor, so the directory read is exactly the pinned one.
     *
     * @param max stop and return {@code max + 1} names once more than {@code max} are found
     */
    static List<byte[]> names(int dirfd, int max) throws Errno {
        try (DirStream dir = DirStream.open(dirfd, new byte[] {'.'})) {
            List<byte[]> names = new ArrayList<>();
            for (DirEntry e = dir.next(); e != null; e = dir.next()) {
                names.add(e.name());
                if (names.size() > max) {
                    break;
                }
            }
            return names;
        }
    }

    /** One directory entry: its raw name and {@code d_type} ({@link #DT_UNKNOWN} when the file system does not say). */
    record DirEntry(byte[] name, int type) {
    }

    /**
     * A directory being read ({@code fdopendir}/{@code readdir}), for walks that must not hold every name of a
     * large directory at once. Not thread-safe; close it.
     */
    static final class DirStream implements AutoCloseable {
        private Pointer dir;
        private final int fd;

        private DirStream(Pointer dir, int fd) {
            this.dir = dir;
            this.fd = fd;
        }

        /**
         * Opens {@code name} below {@code dirfd} for reading, only if it is a directory: never follows a link
         * ({@code ELOOP}) and never opens anything else ({@code ENOTDIR}: a FIFO or device is not opened).
         */
        static DirStream open(int dirfd, byte[] name) throws Errno {
            int fd = LinuxFs.open(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
            Pointer dir = fdopendir(fd);
            if (dir == null) {
                int errno = Native.getLastError();
                LinuxFs.close(fd);
                throw new Errno("fdopendir", errno);
            }
            return new DirStream(dir, fd);
        }

        /** The directory's descriptor, for the {@code *at} calls; valid until {@link #close()}. */
        int fd() {
            return fd;
        }

        /** The next entry other than {@code .} and {@code ..}, or null at the end. */
        DirEntry next() throws Errno {
            while (true) {
                Native.setLastError(0);
                Pointer e = readdir(dir);
                if (e == null) {
                    int errno = Native.getLastError();
                    if (errno != 0) {
                        throw new Errno("readdir", errno);
                    }
                    return null;
                }
                int length = (int) e.indexOf(DIRENT_NAME_OFFSET, (byte) 0);
                byte[] name = e.getByteArray(DIRENT_NAME_OFFSET, length);
                if ((length == 1 && name[0] == '.') || (length == 2 && name[0] == '.' && name[1] == '.')) {
                    continue;
                }
                return new DirEntry(name, e.getByte(DIRENT_TYPE_OFFSET) & 0xff);
            }
        }

        /** Reads from the start again. */
        void rewind() {
            rewinddir(dir);
        }

        /** Where the next {@link #next()} reads, for {@link #seek} on a later stream of the same directory. */
        long tell() {
            return telldir(dir);
        }

        void seek(long position) {
            seekdir(dir, position);
        }

        @Override
        public void close() {
            if (dir != null) {
                closedir(dir);
                dir = null;
            }
        }
    }

    /** The path through which a verified descriptor is reopened by the JDK: the exact inode, no lookup. */
    static Path proc(int fd) {
        return Path.of("/proc/self/fd/" + fd);
    }
}
