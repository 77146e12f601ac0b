package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.FileLimits;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.function.Function;

/**
 * Rewrites a tar stream the engine wrote for {@code GET /archive} into what {@link TarDownload} would have written
 * for the same tree: names relative to the requested directory (the engine prefixes its last component), modes
 * {@code 0777} only, FIFOs, sockets and devices left out, links left out or kept as links, and each hard link
 * (the engine writes the second name of a file as a link to the first) fetched again as a file of its own. The
 * engine's stream is untrusted like any other: every header goes through {@link TarFormat.Reader}, names that
 * leave the root are refused. Produced on the reading thread as the caller reads.
 */
final class VolumeTarFilter extends ChunkedInput {
    private final Deque<byte[]> hardLinks = new ArrayDeque<>();
    private final Function<String, InputStream> refetch;
    private final boolean stripRoot;
    private final boolean links;
    private final FileLimits limits;
    private final String shownRoot;
    private InputStream source;
    private TarFormat.Reader reader;
    /** The name the current refetched hard link gets, or {@code null} while reading the main stream. */
    private byte[] refetchName;
    private ByteBuffer pending = ByteBuffer.allocate(0);
    private long contentLeft;
    private int padding;
    private int entries;
    private boolean finished;

    /**
     * @param engineTar the engine's stream; owned (closed) by this one
     * @param stripRoot whether entries are below a directory entry named like the requested path (a tree), not
     *                  the one file entry of a file
     * @param links     whether symbolic links are written (archives of a whole workdir)
     * @param refetch   a relative name to a new engine stream of that one file
     */
    VolumeTarFilter(InputStream engineTar, boolean stripRoot, boolean links, FileLimits limits, String shownRoot,
            Function<String, InputStream> refetch) {
        this.source = engineTar;
        this.reader = new TarFormat.Reader(engineTar);
        this.stripRoot = stripRoot;
        this.links = links;
        this.limits = limits;
        this.shownRoot = shownRoot;
        this.refetch = refetch;
    }

    @Override
    int readChunk(byte[] b, int off, int len) throws IOException {
        while (true) {
            if (pending.hasRemaining()) {
                int n = Math.min(len, pending.remaining());
                pending.get(b, off, n);
                return n;
            }
            if (contentLeft > 0) {
                int n = reader.readContent(b, off, (int) Math.min(len, contentLeft));
                contentLeft -= n;
                if (contentLeft == 0) {
                    pending = ByteBuffer.wrap(new byte[padding]);
                }
                return n;
            }
            if (finished) {
                return -1;
            }
            advance();
        }
    }

    /** Queues the next entry's header, or the end of the archive. */
    private void advance() throws IOException {
        while (true) {
            TarFormat.Entry e = reader.next();
            if (e == null) {
                if (!nextHardLink()) {
                    pending = ByteBuffer.wrap(TarFormat.endOfArchive());
                    finished = true;
                    return;
                }
                continue;
            }
            byte[] name = refetchName != null ? refetchName : relative(e.name());
            if (name == null) {
                continue; // the requested directory itself
            }
            switch (e.type()) {
                case TarFormat.DIRECTORY -> {
                    count();
                    byte[] dir = name[name.length - 1] == '/' ? name : append(name, (byte) '/');
                    pending = ByteBuffer.wrap(TarFormat.header(dir, TarFormat.DIRECTORY, e.mode() & 0777, 0, e.uid(),
                            e.gid(), e.mtime(), null));
                    return;
                }
                case TarFormat.REGULAR, TarFormat.REGULAR_OLD, TarFormat.CONTIGUOUS -> {
                    count();
                    if (e.size() > limits.maxFileBytes()) {
                        throw FileRules.tooLarge(shown(name), e.size(), limits.maxFileBytes());
                    }
                    // Permission bits only: setuid, setgid and sticky never leave the sandbox.
                    pending = ByteBuffer.wrap(TarFormat.header(name, TarFormat.REGULAR, e.mode() & 0777, e.size(),
                            e.uid(), e.gid(), e.mtime(), null));
                    contentLeft = e.size();
                    padding = TarFormat.padding(e.size());
                    return;
                }
                case TarFormat.SYMLINK -> {
                    if (links && refetchName == null) {
                        count();
                        pending = ByteBuffer.wrap(TarFormat.header(name, TarFormat.SYMLINK, 0777, 0, e.uid(), e.gid(),
                                e.mtime(), e.link()));
                        return;
                    }
                }
                case TarFormat.HARDLINK -> {
                    if (refetchName == null) {
                        hardLinks.add(name); // its content comes once the main stream is through
                    }
                }
                default -> {
                    // FIFOs, sockets, devices: left out
                }
            }
        }
    }

    /** Switches to the next hard link's own stream; false when there is none left. */
    private boolean nextHardLink() throws IOException {
        source.close();
        refetchName = null;
        while (!hardLinks.isEmpty()) {
            byte[] name = hardLinks.poll();
            try {
                source = refetch.apply(new String(name, StandardCharsets.UTF_8));
            } catch (dev.sandboxkit.SandboxNotFoundException gone) {
                continue; // removed since: as a walk would not have seen it
            }
            reader = new TarFormat.Reader(source);
            refetchName = name;
            return true;
        }
        return false;
    }

    /** The entry's name below the root, or {@code null} for the root itself; refuses names that leave it. */
    private byte[] relative(byte[] raw) {
        byte[] name = raw;
        if (stripRoot) {
            int slash = indexOf(raw, (byte) '/');
            if (slash < 0 || slash == raw.length - 1) {
                return null;
            }
            name = Arrays.copyOfRange(raw, slash + 1, raw.length);
        }
        boolean dir = name[name.length - 1] == '/';
        String[] comps = FileRules.entryComponents(name, new String(name, StandardCharsets.UTF_8));
        if (comps.length == 0) {
            return null;
        }
        byte[] clean = String.join("/", comps).getBytes(StandardCharsets.UTF_8);
        return dir ? append(clean, (byte) '/') : clean;
    }

    private void count() {
        if (++entries > limits.maxEntries()) {
            throw FileRules.tooMany("'" + shownRoot + "'", limits.maxEntries());
        }
    }

    private String shown(byte[] name) {
        String n = new String(name, StandardCharsets.UTF_8);
        return shownRoot.isEmpty() || !stripRoot ? n : shownRoot + "/" + n;
    }

    private static int indexOf(byte[] b, byte c) {
        for (int i = 0; i < b.length; i++) {
            if (b[i] == c) {
                return i;
            }
        }
        return -1;
    }

    private static byte[] append(byte[] a, byte c) {
        byte[] out = Arrays.copyOf(a, a.length + 1);
        out[a.length] = c;
        return out;
    }

    @Override
    public void close() throws IOException {
        finished = true;
        source.close();
    }
}
