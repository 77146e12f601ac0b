package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.FileInfo;
import dev.sandboxkit.FileLimits;
import dev.sandboxkit.FileType;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFileException.Reason;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.UploadResult;
import dev.sandboxkit.docker.internal.files.LinuxFs.Errno;
import dev.sandboxkit.docker.internal.files.LinuxFs.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static dev.sandboxkit.docker.internal.files.FileRules.FILE_MODE;
import static dev.sandboxkit.docker.internal.files.FileRules.bytes;
import static dev.sandboxkit.docker.internal.files.FileRules.ioError;
import static dev.sandboxkit.docker.internal.files.FileRules.last;
import static dev.sandboxkit.docker.internal.files.FileRules.requireNotWorkdir;
import static dev.sandboxkit.docker.internal.files.FileRules.split;
import static dev.sandboxkit.docker.internal.files.FileRules.symlink;
import static dev.sandboxkit.docker.internal.files.FileRules.text;
import static dev.sandboxkit.docker.internal.files.FileRules.tooLarge;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;

/**
 * The files API of one Docker session workdir, done on the host, directly on the bind-mounted directory.
 *
 * <h2>Decision: host side, file-descriptor relative, through a few system calls</h2>
 * The two candidates were (a) working on the host directory and (b) going through the container (exec
 * {@code cat}/{@code tar}, or the engine's archive endpoint). Host side wins for Docker because it works while
 * the session is suspended (no container is started just to read a result), costs microseconds instead of
 * an exec (~50 ms) per call, needs nothing in the image (distroless images have no shell or tar), streams
 * large files without a second copy, and never competes with the agent's own execs. The engine's archive
 * endpoint was rejected too: it resolves container-controlled paths as root in the daemon, the code behind
 * several {@code docker cp} escapes. Drivers without a host directory (Kubernetes) would need (b); the
 * hook is {@link dev.sandboxkit.spi.SandboxDriver#files}.
 *
 * <p>The price of the host side is that the container controls every entry below the workdir and can
 * change any of them at any moment, and that its symbolic links resolve <em>on the host</em>. Pure JDK code
 * cannot close that race: {@code SecureDirectoryStream} gives {@code openat(O_NOFOLLOW)} but opens each
 * directory with plain {@code O_RDONLY}, so a directory swapped for a FIFO between the check and the open
 * blocks the host thread forever (the open is restarted on signals; no guard thread can reliably unblock it
 * once the FIFO is unlinked), and a device node swapped in is opened (a block device is the host's disk).
 * The JDK can neither open with {@code O_PATH}/{@code O_NONBLOCK} nor {@code fstat} a channel. So
 * {@link LinuxFs} binds the few missing calls through JNA, and every operation here follows one rule:
 *
 * <ol>
 *   <li><b>Walk, don't resolve.</b> The workdir is opened by its host path (it is the session's directory
 *       directly under the workspace root, which no container can reach or rename). Every component below it
 *       is opened with {@code openat(dirfd, name, O_PATH | O_NOFOLLOW)} relative to the previous descriptor
 *       and checked with {@code statx} on the new descriptor to be a directory. {@code O_PATH} never opens
 *       the file itself: no FIFO wait, no device driver call, no effect. A link is opened as the link and
 *       refused; {@code ..} and absolute paths never reach this class (the engine refuses them).</li>
 *   <li><b>Check the pinned inode, then reopen exactly it.</b> A file is read only after {@code statx} on
 *       its {@code O_PATH} descriptor says it is a regular file; it is then reopened through
 *       {@code /proc/self/fd/N}, which names that inode and nothing else, so a swap after the check changes
 *       nothing. FIFOs, sockets and devices are refused and never opened. Nothing here can block on what the
 *       container planted.</li>
 *   <li><b>Never write in place.</b> Content is written to a private staging directory beside the workdirs
 *       ({@code <root>/.sandboxkit-staging}, 0700, no container mounts it), given its mode and owner there,
 *       and {@code renameat}-ed into the pinned parent directory. Readers see the old or the new file, never
 *       half of one; a link, FIFO or hard link holding the name is replaced, never written through, so a
 *       hard link the container made to another file of the workdir cannot carry the write elsewhere.
 *       Directories are made with {@code mkdirat} and then owned through their pinned descriptor.</li>
 *   <li><b>Delete by name in a pinned directory</b> ({@code unlinkat}), which removes a link itself.</li>
 * </ol>
 *
 * <p>Hard links cannot reach outside: the container can only link inodes it can name, all inside the
 * bind mount ({@code link} across mounts fails with {@code EXDEV}); and since nothing is written in place,
 * a hard link never widens what a write touches. Owners and modes: files are written {@code 0644}
 * ({@code 0755} for executable entries of an upload), directories {@code 0755}, all owned by the sandbox
 * user (chowned when the JVM is root; otherwise the JVM is that user); setuid, setgid and sticky bits are
 * never set. The workdir itself stays {@code 0700}, so the group and other bits open nothing on the host.
 *
 * <p>This class holds the API's operations; the walk (rule 1) is {@link HostWalk}, the staging and renaming
 * (rule 3), tar extraction included, is {@link HostPlacer}.
 */
final class HostFiles implements SandboxFiles {
    private static final Logger log = LoggerFactory.getLogger(HostFiles.class);
    /** How the JDK encodes file names: used for the host paths handed to the system calls. */
    static final Charset PATH_CHARSET = pathCharset();

    private final Staging staging;
    private final FileLimits limits;
    private final HostWalk walk;
    private final HostPlacer placer;

    HostFiles(String workdir, Staging staging, long uid, long gid, boolean chown, FileLimits limits) {
        LinuxFs.require();
        this.staging = staging;
        this.limits = limits;
        this.walk = new HostWalk(workdir, uid, gid, chown, limits);
        this.placer = new HostPlacer(workdir, walk, staging, uid, gid, chown, limits);
    }

    // ================================================================== metadata

    @Override
    public FileInfo stat(String path) {
        String[] comps = split(path);
        if (comps.length == 0) {
            int fd = walk.openWorkdir();
            try {
                return info("", "", LinuxFs.stat(fd), -1, null);
            } catch (Errno e) {
                throw error(e, "");
            } finally {
                LinuxFs.closeQuietly(fd);
            }
        }
        int dir = walk.openDir(comps, comps.length - 1, false);
        try {
            byte[] name = bytes(last(comps));
            return info(path, last(comps), LinuxFs.lstat(dir, name), dir, name);
        } catch (Errno e) {
            throw error(e, path);
        } finally {
            LinuxFs.closeQuietly(dir);
        }
    }

    @Override
    public boolean exists(String path) {
        try {
            stat(path);
            return true;
        } catch (SandboxNotFoundException e) {
            return false;
        }
    }

    @Override
    public List<FileInfo> list(String path) {
        String[] comps = split(path);
        int dir = walk.openDir(comps, comps.length, false);
        try {
            List<byte[]> names = walk.names(dir, path);
            List<FileInfo> out = new ArrayList<>(names.size());
            for (byte[] name : names) {
                String n = text(name);
                try {
                    out.add(info(path.isEmpty() ? n : path + "/" + n, n, LinuxFs.lstat(dir, name), dir, name));
                } catch (Errno e) {
                    if (e.code != LinuxFs.ENOENT) { // removed since the listing: skip it
                        throw error(e, path + "/" + n);
                    }
                }
            }
            out.sort(Comparator.comparing(FileInfo::name));
            return out;
        } finally {
            LinuxFs.closeQuietly(dir);
        }
    }

    private FileInfo info(String path, String name, Stat st, int dir, byte[] rawName) throws Errno {
        FileType type = typeOf(st);
        String target = null;
        if (type == FileType.SYMLINK && dir >= 0) {
            try {
                target = text(LinuxFs.readlink(dir, rawName));
            } catch (Errno e) {
                target = null; // replaced meanwhile: report the link without its target
            }
        }
        return new FileInfo(path, name, type, st.size(), st.mode() & 07777,
                Instant.ofEpochSecond(st.mtimeSeconds(), st.mtimeNanos()), target);
    }

    private static FileType typeOf(Stat st) {
        return switch (st.type()) {
            case LinuxFs.S_IFREG -> FileType.FILE;
            case LinuxFs.S_IFDIR -> FileType.DIRECTORY;
            case LinuxFs.S_IFLNK -> FileType.SYMLINK;
            case LinuxFs.S_IFIFO -> FileType.FIFO;
            case LinuxFs.S_IFSOCK -> FileType.SOCKET;
            default -> FileType.DEVICE;
        };
    }

    // ================================================================== reading

    @Override
    public byte[] readBytes(String path) {
        long cap = Math.min(limits.maxFileBytes(), Integer.MAX_VALUE - 8);
        try (Reading r = openFile(path, cap)) {
            ByteArrayOutputStream out = new ByteArrayOutputStream((int) Math.min(r.size, cap));
            r.stream.transferTo(out);
            return out.toByteArray();
        } catch (IOException e) {
            throw ioError("read", path, e);
        }
    }

    @Override
    public InputStream newInputStream(String path) {
        return openFile(path, limits.maxFileBytes()).stream;
    }

    private record Reading(InputStream stream, long size) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            stream.close();
        }
    }

    /** Pins the file with O_PATH, checks it is a regular file within the limit, then reopens that inode. */
    private Reading openFile(String path, long cap) {
        String[] comps = split(path);
        if (comps.length == 0) {
            throw new SandboxFileException(Reason.IS_A_DIRECTORY, "'" + path + "' is the workdir, not a file");
        }
        int dir = walk.openDir(comps, comps.length - 1, false);
        int fd = -1;
        try {
            fd = LinuxFs.openPath(dir, bytes(last(comps)));
            Stat st = LinuxFs.stat(fd);
            requireRegular(st, path);
            if (st.size() > cap) {
                throw tooLarge(path, st.size(), cap);
            }
            FileChannel channel = FileChannel.open(LinuxFs.proc(fd), StandardOpenOption.READ);
            return new Reading(new CappedInput(channel, cap, path), st.size());
        } catch (Errno e) {
            throw error(e, path);
        } catch (IOException e) {
            throw ioError("open", path, e);
        } finally {
            LinuxFs.closeQuietly(fd);
            LinuxFs.closeQuietly(dir);
        }
    }

    private static void requireRegular(Stat st, String path) {
        FileRules.requireRegular(typeOf(st), path);
    }

    /** A file stream that fails once more than the limit has been read (the file grew after the check). */
    static final class CappedInput extends ChunkedInput {
        private final FileChannel channel;
        private final long cap;
        private final String path;
        private long read;

        CappedInput(FileChannel channel, long cap, String path) {
            this.channel = channel;
            this.cap = cap;
            this.path = path;
        }

        @Override
        int readChunk(byte[] b, int off, int len) throws IOException {
            int n = channel.read(ByteBuffer.wrap(b, off, len));
            if (n > 0) {
                read += n;
                if (read > cap) {
                    throw tooLarge(path, read, cap);
                }
            }
            return n;
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }

    // ================================================================== writing

    @Override
    public void write(String path, byte[] content) {
        if (content.length > limits.maxFileBytes()) {
            throw tooLarge(path, content.length, limits.maxFileBytes());
        }
        write(path, new ByteArrayInputStream(content));
    }

    @Override
    public long write(String path, InputStream content) {
        String[] comps = split(path);
        if (comps.length == 0) {
            throw new SandboxFileException(Reason.IS_A_DIRECTORY, "cannot write the workdir itself");
        }
        Path temp = staging.newTemp();
        try {
            long n;
            try (FileChannel out = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                n = FileRules.copyCapped(content, out, limits.maxFileBytes(), path);
                out.force(true);
            } catch (IOException e) {
                throw ioError("write", path, e);
            }
            placer.own(temp, FILE_MODE);
            placer.place(temp, comps, path);
            return n;
        } finally {
            staging.deleteQuietly(temp);
        }
    }

    @Override
    public void mkdirs(String path) {
        String[] comps = split(path);
        LinuxFs.closeQuietly(walk.openDir(comps, comps.length, true));
    }

    // ================================================================== deleting

    @Override
    public void delete(String path) {
        String[] comps = split(path);
        requireNotWorkdir(comps);
        int dir = walk.openDir(comps, comps.length - 1, false);
        try {
            byte[] name = bytes(last(comps));
            boolean directory = LinuxFs.lstat(dir, name).isDirectory();
            try {
                LinuxFs.unlink(dir, name, directory);
            } catch (Errno e) {
                // Swapped between the check and the unlink: try the other kind once.
                if (e.code == LinuxFs.EISDIR || (e.code == LinuxFs.ENOTDIR && directory)) {
                    LinuxFs.unlink(dir, name, !directory);
                } else {
                    throw e;
                }
            }
        } catch (Errno e) {
            if (e.code == LinuxFs.ENOTEMPTY || e.code == LinuxFs.EEXIST) {
                throw new SandboxFileException(Reason.NOT_EMPTY, "directory '" + path
                        + "' is not empty; use deleteRecursively");
            }
            throw error(e, path);
        } finally {
            LinuxFs.closeQuietly(dir);
        }
    }

    @Override
    public boolean deleteRecursively(String path) {
        String[] comps = split(path);
        requireNotWorkdir(comps);
        int dir;
        try {
            dir = walk.openDir(comps, comps.length - 1, false);
        } catch (SandboxNotFoundException e) {
            return false;
        }
        try {
            // The same walk that deletes whole workdirs: no depth or path-length limit, never follows.
            return HostTrees.remove(dir, bytes(last(comps)), path);
        } catch (HostTrees.Failure f) {
            throw deleteError(f);
        } finally {
            LinuxFs.closeQuietly(dir);
        }
    }

    private static SandboxException deleteError(HostTrees.Failure f) {
        return switch (f.errno) {
            case LinuxFs.ENOTEMPTY -> new SandboxFileException(Reason.NOT_EMPTY, f.getMessage());
            case LinuxFs.EACCES, LinuxFs.EPERM -> new SandboxFileException(Reason.PERMISSION_DENIED, f.getMessage()
                    + " (modes or attributes set inside the sandbox)");
            default -> new SandboxFileException(Reason.IO_ERROR, f.getMessage());
        };
    }

    // ================================================================== tar

    @Override
    public UploadResult uploadTar(String directory, InputStream tar) {
        return placer.extract(directory, tar, false);
    }

    /**
     * Writes the whole workdir as a tar stream with its symbolic links (as links, whatever their target) to
     * {@code out}, for the archive tier. Walked as {@link #downloadTar} walks.
     *
     * @param out where the archive goes; not closed
     * @throws IOException if writing fails
     */
    public void exportTree(java.io.OutputStream out) throws IOException {
        try (TarDownload t = TarDownload.ofDirectory(walk.openWorkdir(), "", limits, true)) {
            t.transferTo(out);
        }
    }

    /**
     * Extracts an archive written by {@link #exportTree} into the workdir: as {@link #uploadTar}, except that
     * links keep whatever target they had (they are never followed here, and inside the sandbox they resolve
     * in its own filesystem) and files keep their permission bits (setuid, setgid and sticky dropped).
     *
     * @param tar the archive, read to its end and not closed
     * @return what was extracted
     */
    public UploadResult importTree(InputStream tar) {
        return placer.extract("", tar, true);
    }

    @Override
    public InputStream downloadTar(String path) {
        String[] comps = split(path);
        int dir = comps.length == 0 ? walk.openWorkdir() : walk.openDir(comps, comps.length - 1, false);
        int fd = -1;
        try {
            if (comps.length == 0) {
                fd = dir;
                dir = -1;
            } else {
                fd = LinuxFs.openPath(dir, bytes(last(comps)));
            }
            Stat st = LinuxFs.stat(fd);
            if (st.isDirectory()) {
                TarDownload t = TarDownload.ofDirectory(fd, path, limits);
                fd = -1; // owned by the stream now
                return t;
            }
            requireRegular(st, path);
            if (st.size() > limits.maxFileBytes()) {
                throw tooLarge(path, st.size(), limits.maxFileBytes());
            }
            FileChannel channel = FileChannel.open(LinuxFs.proc(fd), StandardOpenOption.READ);
            return TarDownload.ofFile(channel, bytes(last(comps)), st, limits);
        } catch (Errno e) {
            throw error(e, path);
        } catch (IOException e) {
            throw ioError("download", path, e);
        } finally {
            LinuxFs.closeQuietly(fd);
            LinuxFs.closeQuietly(dir);
        }
    }

    // ================================================================== helpers

    /** Maps a failed system call to the API's exceptions, naming the workdir-relative path. */
    static SandboxException error(Errno e, String path) {
        String p = "'" + path + "'";
        return switch (e.code) {
            case LinuxFs.ENOENT -> FileRules.notFound(path);
            case LinuxFs.ENOTDIR -> new SandboxFileException(Reason.NOT_A_DIRECTORY, p + ": a component is not a directory");
            case LinuxFs.EISDIR -> new SandboxFileException(Reason.IS_A_DIRECTORY, p + " is a directory");
            case LinuxFs.ELOOP -> symlink(path);
            case LinuxFs.ENOTEMPTY -> new SandboxFileException(Reason.NOT_EMPTY, p + " is not empty");
            case LinuxFs.EACCES, LinuxFs.EPERM -> new SandboxFileException(Reason.PERMISSION_DENIED,
                    p + ": permission denied (modes set inside the sandbox)");
            case LinuxFs.ENAMETOOLONG -> new SandboxFileException(Reason.INVALID_PATH, p + ": name too long");
            case LinuxFs.ENOSPC -> new SandboxFileException(Reason.IO_ERROR, p + ": no space left on the host");
            default -> new SandboxFileException(Reason.IO_ERROR, p + ": " + e.getMessage());
        };
    }

    private static Charset pathCharset() {
        try {
            return Charset.forName(System.getProperty("sun.jnu.encoding", "UTF-8"));
        } catch (RuntimeException e) {
            return StandardCharsets.UTF_8;
        }
    }

    /**
     * The private directory where content is written before it is renamed into a workdir: beside the
     * workdirs, on the same filesystem, 0700, never mounted into a container. Its name starts with a dot,
     * which no session id or pool slot can. One per driver.
     */
    static final class Staging {
        static final String NAME = ".sandboxkit-staging";
        private static final Duration STALE = Duration.ofDays(1);
        final Path dir;
        private volatile boolean ready;

        Staging(Path root) {
            this.dir = root.resolve(NAME);
        }

        /** A new empty file, 0600, owned by the JVM user. */
        Path newTemp() {
            ensure();
            try {
                return Files.createTempFile(dir, "w", ".tmp");
            } catch (IOException e) {
                throw new SandboxFileException(Reason.IO_ERROR, "cannot create a staging file in " + dir + ": " + e, e);
            }
        }

        /** A fresh name in the staging directory, not created. */
        Path newName() {
            ensure();
            return dir.resolve("l" + UUID.randomUUID() + ".tmp");
        }

        void deleteQuietly(Path p) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException e) {
                log.debug("Could not delete staging entry {}: {}", p, e.toString());
            }
        }

        private synchronized void ensure() {
            if (ready) {
                return;
            }
            try {
                try {
                    Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(FileRules.permissions(0700)));
                } catch (java.nio.file.FileAlreadyExistsException e) {
                    // made by an earlier manager on this root
                }
                BasicFileAttributes a = Files.readAttributes(dir, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                if (!a.isDirectory() || a.isSymbolicLink()) {
                    throw new SandboxFileException(Reason.IO_ERROR, "staging directory " + dir + " is not a directory");
                }
                Files.setPosixFilePermissions(dir, FileRules.permissions(0700));
                removeStale();
            } catch (IOException e) {
                throw new SandboxFileException(Reason.IO_ERROR, "cannot prepare staging directory " + dir + ": " + e, e);
            }
            ready = true;
        }

        /** Leftovers of a crash; entries of live managers sharing the root are far younger than a day. */
        private void removeStale() throws IOException {
            Instant cutoff = Instant.now().minus(STALE);
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
                for (Path p : entries) {
                    BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                    if (!a.isDirectory() && a.lastModifiedTime().toInstant().isBefore(cutoff)) {
                        deleteQuietly(p);
                    }
                }
            }
        }
    }
}
