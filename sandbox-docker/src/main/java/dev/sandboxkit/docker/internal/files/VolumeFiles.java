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

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.SequenceInputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;

/**
 * The files API of a workdir that is a named volume, with no host path: everything goes through the engine's
 * archive API on a helper container ({@link VolumeAccess}). Uploads go through the same {@link TarExtractor} and
 * {@link FileRules} as {@link HostFiles}, so the results match its contract (same errors, limits, modes and owners).
 *
 * <p>The engine resolves every component of a path but the last, following links (within the helper's own root
 * filesystem: never the host's, see docs/volume-workdirs.md). So no path is handed to it before each directory
 * component has been checked, one {@code HEAD} each, to be a real directory: a link is refused as
 * {@code SYMLINK}, whatever it points at. A sandbox swapping a checked directory for a link between the check and
 * the call can at worst redirect that one call into the helper's throwaway root filesystem (the image's files).
 * Uploads are validated on this side before anything reaches the engine: spooled to a private temporary file as
 * a clean archive (relative names, no {@code ..}, no hard links, devices or FIFOs, links inside the target
 * unless it is a whole-workdir import, owner and modes set here), then sent in one {@code PUT}; an entry the
 * engine would write through a link planted in the volume is refused, since every parent directory is either
 * checked or created by an entry of the same archive. Deletes, which the archive API cannot do, run {@code rm}
 * in a one-off container (the image needs {@code rm}, {@code rmdir} and, to empty a workdir, {@code sh}), as
 * does re-owning the tree for a changed user ({@link #claim}: {@code sh}, {@code find}, {@code chown}, {@code chgrp}).
 */
public final class VolumeFiles implements SandboxFiles {
    private static final int BUFFER = 64 * 1024;
    /** No caps for whole-workdir copies: the whole workdir goes, whatever the files API's limits. */
    public static final FileLimits UNLIMITED = new FileLimits(Long.MAX_VALUE / 2, Integer.MAX_VALUE);

    private final VolumeAccess access;
    private final String root;
    private final long uid;
    private final long gid;
    private final FileLimits limits;
    private final VolumePaths paths;
    private final VolumeUpload upload;
    private final VolumeOwner owner;

    /**
     * The files API on the volume mounted at {@code root} in the helper.
     *
     * @param access the engine calls on the helper
     * @param root   the absolute directory in the helper that is the workdir
     * @param uid    owner of what is written
     * @param gid    group of what is written
     * @param limits size and entry-count limits
     */
    public VolumeFiles(VolumeAccess access, String root, long uid, long gid, FileLimits limits) {
        this.access = access;
        this.root = root;
        this.uid = uid;
        this.gid = gid;
        this.limits = limits;
        this.paths = new VolumePaths(access, root, uid, gid);
        this.upload = new VolumeUpload(access, paths, root, uid, gid, limits);
        this.owner = new VolumeOwner(access, paths, root, uid, gid);
    }

    // ================================================================== metadata

    @Override
    public FileInfo stat(String path) {
        return access.quiesced(live -> statNow(path));
    }

    private FileInfo statNow(String path) {
        String[] comps = FileRules.split(path);
        if (comps.length == 0) {
            VolumeAccess.PathStat st = access.stat(root);
            if (st == null) {
                throw new SandboxNotFoundException("the session's workdir no longer exists");
            }
            return info("", "", st);
        }
        paths.walk(comps, comps.length - 1, false);
        VolumeAccess.PathStat st = access.stat(paths.abs(comps, comps.length));
        if (st == null) {
            throw FileRules.notFound(path);
        }
        return info(path, FileRules.last(comps), st);
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

    private FileInfo info(String path, String name, VolumeAccess.PathStat st) {
        String target = st.type() == FileType.SYMLINK ? linkTarget(path) : null;
        return new FileInfo(path, name, st.type(), st.size(), st.mode(), st.mtime(), target);
    }

    /** The link's own target, as written: the stat header has the engine's resolution of it instead. */
    private String linkTarget(String path) {
        try (InputStream in = access.get(paths.abs(FileRules.split(path), FileRules.split(path).length))) {
            TarFormat.Entry e = new TarFormat.Reader(in).next();
            return e != null && e.type() == TarFormat.SYMLINK ? FileRules.text(e.link()) : null;
        } catch (IOException | SandboxException e) {
            return null; // replaced meanwhile: report the link without its target
        }
    }

    @Override
    public List<FileInfo> list(String path) {
        return access.quiesced(live -> listNow(path));
    }

    private List<FileInfo> listNow(String path) {
        String[] comps = FileRules.split(path);
        paths.walk(comps, comps.length, false);
        List<FileInfo> out = new ArrayList<>();
        // The archive of the directory is the only listing the engine offers: its direct entries are read, the
        // rest is skipped (so listing a directory costs a read of what is below it).
        try (InputStream in = access.get(paths.abs(comps, comps.length))) {
            TarFormat.Reader reader = new TarFormat.Reader(in);
            for (TarFormat.Entry e = reader.next(); e != null; e = reader.next()) {
                String n = FileRules.text(e.name());
                int slash = n.indexOf('/');
                String rest = slash < 0 ? "" : n.substring(slash + 1);
                if (rest.endsWith("/")) {
                    rest = rest.substring(0, rest.length() - 1);
                }
                if (rest.isEmpty() || rest.indexOf('/') >= 0) {
                    continue; // the directory itself, or deeper
                }
                if (out.size() >= limits.maxEntries()) {
                    throw FileRules.tooMany("directory '" + path + "'", limits.maxEntries());
                }
                out.add(entryInfo(path.isEmpty() ? rest : path + "/" + rest, rest, e));
            }
        } catch (IOException e) {
            throw FileRules.ioError("list", path, e);
        }
        out.sort(Comparator.comparing(FileInfo::name));
        return out;
    }

    private FileInfo entryInfo(String path, String name, TarFormat.Entry e) {
        if (e.type() == TarFormat.HARDLINK) {
            // A second name of a file: the entry carries neither size nor mode, the stat does.
            VolumeAccess.PathStat st = access.stat(root + "/" + path);
            if (st != null) {
                return new FileInfo(path, name, st.type(), st.size(), st.mode(), st.mtime(), null);
            }
        }
        FileType type = switch (e.type()) {
            case TarFormat.DIRECTORY -> FileType.DIRECTORY;
            case TarFormat.SYMLINK -> FileType.SYMLINK;
            case TarFormat.FIFO -> FileType.FIFO;
            case TarFormat.CHAR_DEVICE, TarFormat.BLOCK_DEVICE -> FileType.DEVICE;
            default -> FileType.FILE;
        };
        return new FileInfo(path, name, type, e.size(), e.mode() & 07777, Instant.ofEpochSecond(e.mtime()),
                type == FileType.SYMLINK ? FileRules.text(e.link()) : null);
    }

    // ================================================================== reading

    @Override
    public byte[] readBytes(String path) {
        long cap = Math.min(limits.maxFileBytes(), Integer.MAX_VALUE - 8);
        return access.quiesced(live -> {
            try (InputStream in = openFile(path, cap)) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                in.transferTo(out);
                return out.toByteArray();
            } catch (IOException e) {
                throw FileRules.ioError("read", path, e);
            }
        });
    }

    @Override
    public InputStream newInputStream(String path) {
        return access.quiesced(live -> live ? spooled(openFile(path, limits.maxFileBytes()), path)
                : openFile(path, limits.maxFileBytes()));
    }

    /**
     * Reads {@code in} to its end into a private temporary file, while the sandbox is frozen, and streams that
     * file instead (deleted when closed): the caller may read at its own pace, and the sandbox runs meanwhile.
     */
    private static InputStream spooled(InputStream in, String path) {
        Path temp = VolumePaths.tempFile();
        try (InputStream from = in) {
            Files.copy(from, temp, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            return Files.newInputStream(temp, StandardOpenOption.DELETE_ON_CLOSE);
        } catch (IOException e) {
            VolumePaths.deleteQuietly(temp);
            throw FileRules.ioError("read", path, e);
        } catch (RuntimeException e) {
            VolumePaths.deleteQuietly(temp);
            throw e;
        }
    }

    /** Checks the path, then streams the one file entry of its archive (refused if it is no longer a file). */
    private InputStream openFile(String path, long cap) {
        String[] comps = FileRules.split(path);
        if (comps.length == 0) {
            throw new SandboxFileException(Reason.IS_A_DIRECTORY, "'" + path + "' is the workdir, not a file");
        }
        paths.walk(comps, comps.length - 1, false);
        VolumeAccess.PathStat st = access.stat(paths.abs(comps, comps.length));
        if (st == null) {
            throw FileRules.notFound(path);
        }
        FileRules.requireRegular(st.type(), path);
        if (st.size() > cap) {
            throw FileRules.tooLarge(path, st.size(), cap);
        }
        InputStream in = access.get(paths.abs(comps, comps.length));
        try {
            TarFormat.Reader reader = new TarFormat.Reader(in);
            TarFormat.Entry e = reader.next();
            if (e == null) {
                throw FileRules.notFound(path);
            }
            FileRules.requireRegular(typeOf(e.type()), path); // swapped since the stat
            if (e.size() > cap) {
                throw FileRules.tooLarge(path, e.size(), cap);
            }
            return new ChunkedInput() {
                @Override
                int readChunk(byte[] b, int off, int len) throws IOException {
                    return reader.readContent(b, off, len);
                }

                @Override
                public void close() throws IOException {
                    in.close();
                }
            };
        } catch (IOException e) {
            closeQuietly(in);
            throw FileRules.ioError("open", path, e);
        } catch (RuntimeException e) {
            closeQuietly(in);
            throw e;
        }
    }

    private static FileType typeOf(byte tarType) {
        return switch (tarType) {
            case TarFormat.REGULAR, TarFormat.REGULAR_OLD, TarFormat.CONTIGUOUS, TarFormat.HARDLINK -> FileType.FILE;
            case TarFormat.DIRECTORY -> FileType.DIRECTORY;
            case TarFormat.SYMLINK -> FileType.SYMLINK;
            default -> FileType.DEVICE;
        };
    }

    // ================================================================== writing

    @Override
    public void write(String path, byte[] content) {
        if (content.length > limits.maxFileBytes()) {
            throw FileRules.tooLarge(path, content.length, limits.maxFileBytes());
        }
        write(path, new ByteArrayInputStream(content));
    }

    @Override
    public long write(String path, InputStream content) {
        String[] comps = FileRules.split(path);
        if (comps.length == 0) {
            throw new SandboxFileException(Reason.IS_A_DIRECTORY, "cannot write the workdir itself");
        }
        // The header needs the size: the content is staged in a private temporary file first.
        Path temp = VolumePaths.tempFile();
        try {
            long n;
            try (FileChannel out = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                n = FileRules.copyCapped(content, out, limits.maxFileBytes(), path);
            } catch (IOException e) {
                throw FileRules.ioError("write", path, e);
            }
            // Staged before the freeze: the caller's stream may be slow.
            return access.quiesced(live -> putFile(comps, path, temp, n));
        } finally {
            VolumePaths.deleteQuietly(temp);
        }
    }

    private long putFile(String[] comps, String path, Path temp, long n) {
        paths.walk(comps, comps.length - 1, true);
        VolumeAccess.PathStat st = access.stat(paths.abs(comps, comps.length));
        if (st != null && st.type() == FileType.DIRECTORY) {
            throw new SandboxFileException(Reason.IS_A_DIRECTORY, "'" + path + "' is a directory");
        }
        // The engine removes whatever holds the name (a link, a FIFO) and creates the file: never written through.
        byte[] header = TarFormat.header(FileRules.bytes(FileRules.last(comps)), TarFormat.REGULAR,
                FileRules.FILE_MODE, n, uid, gid, Instant.now().getEpochSecond(), null);
        byte[] tail = VolumePaths.concat(new byte[TarFormat.padding(n)], TarFormat.endOfArchive());
        try {
            InputStream body = new SequenceInputStream(Collections.enumeration(List.of(
                    new ByteArrayInputStream(header), Files.newInputStream(temp), new ByteArrayInputStream(tail))));
            paths.put(paths.abs(comps, comps.length - 1), body, header.length + n + tail.length, path);
        } catch (IOException e) {
            throw FileRules.ioError("write", path, e);
        }
        return n;
    }

    @Override
    public void mkdirs(String path) {
        String[] comps = FileRules.split(path);
        access.quiesced(live -> paths.walk(comps, comps.length, true));
    }

    // ================================================================== deleting

    @Override
    public void delete(String path) {
        String[] comps = FileRules.split(path);
        FileRules.requireNotWorkdir(comps);
        paths.walk(comps, comps.length - 1, false);
        String target = paths.abs(comps, comps.length);
        VolumeAccess.PathStat st = access.stat(target);
        if (st == null) {
            throw FileRules.notFound(path);
        }
        boolean directory = st.type() == FileType.DIRECTORY;
        VolumeAccess.Run r = access.run(directory ? List.of("rmdir", "--", target) : List.of("rm", "-f", "--", target));
        if (r.exitCode() != 0) {
            if (directory && r.output().toLowerCase(java.util.Locale.ROOT).contains("not empty")) {
                throw new SandboxFileException(Reason.NOT_EMPTY, "directory '" + path
                        + "' is not empty; use deleteRecursively");
            }
            throw commandFailed("delete", path, r);
        }
    }

    @Override
    public boolean deleteRecursively(String path) {
        String[] comps = FileRules.split(path);
        FileRules.requireNotWorkdir(comps);
        try {
            paths.walk(comps, comps.length - 1, false);
        } catch (SandboxNotFoundException e) {
            return false;
        }
        String target = paths.abs(comps, comps.length);
        if (access.stat(target) == null) {
            return false;
        }
        // rm -r unlinks links, never follows them.
        VolumeAccess.Run r = access.run(List.of("rm", "-rf", "--", target));
        if (r.exitCode() != 0) {
            throw commandFailed("delete", path, r);
        }
        return true;
    }

    /**
     * Empties the workdir (a restore replaces all of it).
     */
    public void clear() {
        VolumeAccess.Run r = access.run(List.of("sh", "-c", "rm -rf -- \"$0\"/* \"$0\"/.[!.]* \"$0\"/..?*", root));
        if (r.exitCode() != 0) {
            throw commandFailed("empty", "", r);
        }
    }

    private static SandboxFileException commandFailed(String what, String path, VolumeAccess.Run r) {
        String out = r.output().strip();
        String lower = out.toLowerCase(java.util.Locale.ROOT);
        Reason reason = lower.contains("permission denied") || lower.contains("not permitted")
                ? Reason.PERMISSION_DENIED : Reason.IO_ERROR;
        return new SandboxFileException(reason, "cannot " + what + " '" + path + "' (exit " + r.exitCode() + "): "
                + (out.length() > 500 ? out.substring(0, 500) : out));
    }

    // ================================================================== tar

    @Override
    public UploadResult uploadTar(String directory, InputStream tar) {
        return access.quiesced(live -> upload.extract(directory, tar, false));
    }

    @Override
    public InputStream downloadTar(String path) {
        return access.quiesced(live -> {
            InputStream t = downloadNow(path);
            return live ? spooled(t, path) : t;
        });
    }

    private InputStream downloadNow(String path) {
        String[] comps = FileRules.split(path);
        if (comps.length > 0) {
            paths.walk(comps, comps.length - 1, false);
        }
        String target = paths.abs(comps, comps.length);
        VolumeAccess.PathStat st = access.stat(target);
        if (st == null) {
            throw comps.length == 0 ? new SandboxNotFoundException("the session's workdir no longer exists")
                    : FileRules.notFound(path);
        }
        boolean tree = st.type() == FileType.DIRECTORY;
        if (!tree) {
            FileRules.requireRegular(st.type(), path);
            if (st.size() > limits.maxFileBytes()) {
                throw FileRules.tooLarge(path, st.size(), limits.maxFileBytes());
            }
        }
        return new VolumeTarFilter(access.get(target), tree, false, limits, path,
                rel -> access.get(target + "/" + rel));
    }

    /**
     * Writes the whole workdir as a tar stream with its links, in {@link HostFiles#exportTree}'s layout.
     *
     * @param out where the archive goes; not closed
     * @throws IOException if writing fails
     */
    public void exportTree(OutputStream out) throws IOException {
        try {
            access.quiesced(live -> {
                if (access.stat(root) == null) {
                    throw new SandboxNotFoundException("the workdir no longer exists");
                }
                try (InputStream t = new VolumeTarFilter(access.get(root), true, true, limits, "",
                        rel -> access.get(root + "/" + rel))) {
                    t.transferTo(out);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                return null;
            });
        } catch (java.io.UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /**
     * Extracts an archive written by {@link #exportTree} (or {@link HostFiles#exportTree}): as {@link #uploadTar},
     * except that links keep their target and files and directories their permission bits.
     *
     * @param tar the archive, read to its end and not closed
     * @return what was extracted
     */
    public UploadResult importTree(InputStream tar) {
        return access.quiesced(live -> upload.extract("", tar, true));
    }

    /**
     * Gives the workdir's top directory to the owner, mode 0700, as a host workdir is made.
     */
    public void ownRoot() {
        owner.ownRoot();
    }

    /**
     * Makes an existing workdir the owner's before a container starts on it, as the host backend's claim does:
     * when its top directory has another owner (the session's user changed), every entry of the previous owner
     * (the top's uid) is given to the new one and every entry in the previous group to the new group, links and
     * special files as themselves; other owners' entries are left alone. Then the top, last, as {@link #ownRoot}
     * does, so an interrupted run is completed by the next one. The re-owning runs {@code sh}, {@code find},
     * {@code chown} and {@code chgrp} in a one-off root container with only the capabilities {@code CHOWN} and
     * {@code DAC_READ_SEARCH}; the image needs them. The sandbox is frozen meanwhile if it runs (it should not: this precedes its start).
     *
     * @param shown how to name the workdir in errors
     * @return whether entries were re-owned (the previous owner differed)
     * @throws SandboxException if the tree could not be re-owned (the top keeps its previous owner then)
     */
    public boolean claim(String shown) {
        return owner.claim(shown);
    }

    /**
     * A host directory (a spec's template) as a whole-workdir tar stream, walked as {@link HostFiles#exportTree}
     * walks: links as links, never followed (nor the directory itself, opened {@code O_NOFOLLOW}).
     *
     * @param directory the directory
     * @return the archive; the caller closes it
     * @throws dev.sandboxkit.SandboxConfigurationException if it does not exist, is a link or is not a directory
     */
    public static InputStream hostTree(Path directory) {
        LinuxFs.require();
        int fd;
        try {
            fd = LinuxFs.open(LinuxFs.AT_FDCWD, directory.toString().getBytes(HostFiles.PATH_CHARSET),
                    LinuxFs.O_PATH | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW);
        } catch (LinuxFs.Errno e) {
            throw new dev.sandboxkit.SandboxConfigurationException("template " + directory + " does not exist, is a "
                    + "symbolic link (never followed) or is not a directory: " + e.getMessage(), e);
        }
        return TarDownload.ofDirectory(fd, "", UNLIMITED, true);
    }

    // ================================================================== helpers

    private static void closeQuietly(InputStream in) {
        try {
            in.close();
        } catch (IOException ignored) {
            // nothing more to do
        }
    }
}
