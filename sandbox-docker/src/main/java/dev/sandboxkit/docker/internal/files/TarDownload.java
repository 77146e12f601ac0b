package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.FileLimits;
import dev.sandboxkit.docker.internal.files.LinuxFs.Errno;
import dev.sandboxkit.docker.internal.files.LinuxFs.Stat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;

/**
 * A tar archive of a workdir file or tree, produced on the reading thread as the caller reads: no thread,
 * no temporary file, memory bounded by one directory's names per level. The tree is walked like
 * {@link HostFiles} walks paths: each directory is an O_PATH no-follow descriptor checked with {@code statx},
 * each file is pinned, checked to be regular and reopened through {@code /proc/self/fd}. Links, FIFOs,
 * sockets and devices are left out without being opened; modes keep {@code 0777} only; a file that shrinks
 * while being read is padded with zeros and one that grows is cut at the size in its header, so the
 * archive stays well-formed.
 */
final class TarDownload extends ChunkedInput {
    private static final Comparator<byte[]> BY_BYTES = Arrays::compareUnsigned;

    /** One directory being walked: its pinned descriptor, its name in the archive, its sorted entries. */
    private static final class Frame {
        final int fd;
        final byte[] prefix;
        final List<byte[]> names;
        int next;

        Frame(int fd, byte[] prefix, List<byte[]> names) {
            this.fd = fd;
            this.prefix = prefix;
            this.names = names;
        }
    }

    private final FileLimits limits;
    private final String root;
    /** Whether symbolic links are written (as links, with their target): archives of a whole workdir. */
    private final boolean links;
    private final Deque<Frame> stack = new ArrayDeque<>();
    private ByteBuffer pending = ByteBuffer.allocate(0);
    private FileChannel file;
    private long fileRemaining;
    private int filePadding;
    private boolean eofInFile;
    private int entries;
    private boolean finished;
    private boolean closed;

    private TarDownload(FileLimits limits, String root, boolean links) {
        this.limits = limits;
        this.root = root;
        this.links = links;
    }

    /** A tree: takes ownership of {@code dirFd}, a pinned directory. */
    static TarDownload ofDirectory(int dirFd, String path, FileLimits limits) {
        return ofDirectory(dirFd, path, limits, false);
    }

    /** A tree, with its symbolic links when {@code links}: takes ownership of {@code dirFd}. */
    static TarDownload ofDirectory(int dirFd, String path, FileLimits limits, boolean links) {
        TarDownload t = new TarDownload(limits, path, links);
        try {
            t.stack.push(new Frame(dirFd, new byte[0], t.sortedNames(dirFd, path)));
        } catch (RuntimeException e) {
            LinuxFs.closeQuietly(dirFd);
            throw e;
        }
        return t;
    }

    /** One file, already checked and reopened. */
    static TarDownload ofFile(FileChannel channel, byte[] name, Stat st, FileLimits limits) {
        TarDownload t = new TarDownload(limits, FileRules.text(name), false);
        t.entries = 1;
        t.startFile(channel, name, st);
        return t;
    }

    @Override
    void checkOpen() throws IOException {
        if (closed) {
            throw new IOException("stream closed");
        }
    }

    @Override
    int readChunk(byte[] b, int off, int len) throws IOException {
        while (true) {
            if (pending.hasRemaining()) {
                int n = Math.min(len, pending.remaining());
                pending.get(b, off, n);
                return n;
            }
            if (file != null) {
                int n = readFile(b, off, len);
                if (n > 0) {
                    return n;
                }
                continue;
            }
            if (finished) {
                return -1;
            }
            advance();
        }
    }

    /** Content of the current file, exactly as many bytes as its header says. */
    private int readFile(byte[] b, int off, int len) throws IOException {
        if (fileRemaining == 0) {
            file.close();
            file = null;
            pending = ByteBuffer.wrap(new byte[filePadding]);
            return 0;
        }
        int want = (int) Math.min(len, fileRemaining);
        int n = eofInFile ? -1 : file.read(ByteBuffer.wrap(b, off, want));
        if (n < 0) {
            eofInFile = true; // shrank since the header was written: pad with zeros
            Arrays.fill(b, off, off + want, (byte) 0);
            n = want;
        }
        fileRemaining -= n;
        return n;
    }

    /** Emits the next entry's header (and opens its content), or the end of the archive. */
    private void advance() throws IOException {
        while (!stack.isEmpty()) {
            Frame f = stack.peek();
            if (f.next >= f.names.size()) {
                stack.pop();
                LinuxFs.closeQuietly(f.fd);
                continue;
            }
            byte[] name = f.names.get(f.next++);
            if (emit(f, name)) {
                return;
            }
        }
        pending = ByteBuffer.wrap(TarFormat.endOfArchive());
        finished = true;
    }

    /** Emits one entry of a directory; false if it was skipped (special file, vanished). */
    private boolean emit(Frame f, byte[] name) throws IOException {
        byte[] entryName = concat(f.prefix, name);
        String shown = root + (root.isEmpty() ? "" : "/") + FileRules.text(entryName);
        int fd;
        try {
            fd = LinuxFs.openPath(f.fd, name);
        } catch (Errno e) {
            if (e.code == LinuxFs.ENOENT) {
                return false;
            }
            throw HostFiles.error(e, shown);
        }
        boolean keep = false;
        try {
            Stat st = LinuxFs.stat(fd);
            if (links && st.isSymlink()) {
                if (++entries > limits.maxEntries()) {
                    throw FileRules.tooMany("'" + root + "'", limits.maxEntries());
                }
                // Read from the parent by name, never resolved; the link is data, like a file's content.
                byte[] target = LinuxFs.readlink(f.fd, name);
                pending = ByteBuffer.wrap(TarFormat.header(entryName, TarFormat.SYMLINK, 0777, 0, st.uid(), st.gid(),
                        st.mtimeSeconds(), target));
                return true;
            }
            if (!st.isRegular() && !st.isDirectory()) {
                return false; // links, FIFOs, sockets, devices: left out, never opened
            }
            if (++entries > limits.maxEntries()) {
                throw FileRules.tooMany("'" + root + "'", limits.maxEntries());
            }
            if (st.isDirectory()) {
                if (stack.size() >= FileRules.MAX_DEPTH) {
                    throw FileRules.tooDeep(shown);
                }
                byte[] dirName = concat(entryName, new byte[] {'/'});
                List<byte[]> children = sortedNames(fd, shown);
                stack.push(new Frame(fd, dirName, children));
                keep = true;
                pending = ByteBuffer.wrap(TarFormat.header(dirName, TarFormat.DIRECTORY, st.mode() & 0777, 0,
                        st.uid(), st.gid(), st.mtimeSeconds(), null));
                return true;
            }
            if (st.size() > limits.maxFileBytes()) {
                throw FileRules.tooLarge(shown, st.size(), limits.maxFileBytes());
            }
            startFile(FileChannel.open(LinuxFs.proc(fd), StandardOpenOption.READ), entryName, st);
            return true;
        } catch (Errno e) {
            throw HostFiles.error(e, shown);
        } finally {
            if (!keep) {
                LinuxFs.closeQuietly(fd);
            }
        }
    }

    private void startFile(FileChannel channel, byte[] entryName, Stat st) {
        file = channel;
        fileRemaining = st.size();
        filePadding = TarFormat.padding(st.size());
        eofInFile = false;
        // Permission bits only: setuid, setgid and sticky never leave the sandbox.
        pending = ByteBuffer.wrap(TarFormat.header(entryName, TarFormat.REGULAR, st.mode() & 0777, st.size(),
                st.uid(), st.gid(), st.mtimeSeconds(), null));
    }

    private List<byte[]> sortedNames(int dirFd, String shown) {
        try {
            int budget = Math.max(0, limits.maxEntries() - entries);
            List<byte[]> names = LinuxFs.names(dirFd, budget);
            if (names.size() > budget) {
                throw FileRules.tooMany("'" + root + "'", limits.maxEntries());
            }
            names.sort(BY_BYTES);
            return names;
        } catch (Errno e) {
            throw HostFiles.error(e, shown);
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** Releases the open file and every directory descriptor still held. Idempotent. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        while (!stack.isEmpty()) {
            LinuxFs.closeQuietly(stack.pop().fd);
        }
        if (file != null) {
            file.close();
            file = null;
        }
    }
}
