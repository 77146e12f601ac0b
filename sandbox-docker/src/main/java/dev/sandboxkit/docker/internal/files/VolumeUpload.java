package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.FileLimits;
import dev.sandboxkit.FileType;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFileException.Reason;
import dev.sandboxkit.UploadResult;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Uploads and imports into one volume workdir: spools what {@link TarExtractor} accepted as a clean archive
 * (relative names, owner and modes set here, every parent directory checked in the volume or made by the same
 * archive), then sends it in one {@code PUT}.
 */
final class VolumeUpload {
    private final VolumeAccess access;
    private final VolumePaths paths;
    private final String root;
    private final long uid;
    private final long gid;
    private final FileLimits limits;

    VolumeUpload(VolumeAccess access, VolumePaths paths, String root, long uid, long gid, FileLimits limits) {
        this.access = access;
        this.paths = paths;
        this.root = root;
        this.uid = uid;
        this.gid = gid;
        this.limits = limits;
    }

    /** Where an entry of the spooled archive stands: made by it, or found in the volume. */
    private enum Kind { NEW_DIR, OLD_DIR, FILE, LINK }

    UploadResult extract(String directory, InputStream tar, boolean archive) {
        String[] base = FileRules.split(directory);
        List<VolumeAccess.PathStat> baseStats = paths.walk(base, base.length, true);
        // Extracted at the helper's "/" with full names: the engine refuses a link whose target leaves the
        // directory it extracts into, and a workdir's archive may hold such links (kept as data, never followed).
        String prefix = paths.abs(base, base.length).substring(1) + "/";
        long now = Instant.now().getEpochSecond();
        Path spool = VolumePaths.tempFile();
        try {
            UploadResult result;
            try (FileChannel out = FileChannel.open(spool, StandardOpenOption.WRITE)) {
                // Every directory above the entries as an entry of its own, mode unchanged: the engine would make
                // one that vanished meanwhile (a sandbox renaming it) as root, which the sandbox could not remove.
                String[] rootParts = root.substring(1).split("/");
                for (int i = 1; i <= rootParts.length; i++) {
                    String dir = "/" + String.join("/", Arrays.copyOf(rootParts, i));
                    VolumeAccess.PathStat st = access.stat(dir);
                    write(out, TarFormat.header(FileRules.bytes(dir.substring(1) + "/"), TarFormat.DIRECTORY,
                            st == null ? FileRules.DIR_MODE : st.mode() & 0777, 0, uid, gid, now, null));
                }
                for (int i = 0; i < base.length; i++) {
                    write(out, TarFormat.header(dirName(paths.abs(base, 0).substring(1) + "/", Arrays.copyOf(base, i + 1)),
                            TarFormat.DIRECTORY, baseStats.get(i).mode() & 0777, 0, uid, gid, now, null));
                }
                result = TarExtractor.extract(tar, base, limits, archive, new Spool(base, prefix, out, now));
                write(out, TarFormat.endOfArchive());
            }
            paths.put("/", Files.newInputStream(spool), Files.size(spool), directory);
            return result;
        } catch (IOException e) {
            throw FileRules.ioError("upload into", directory, e);
        } finally {
            VolumePaths.deleteQuietly(spool);
        }
    }

    /**
     * Writes what {@link TarExtractor} accepted as a clean archive for one {@code PUT}, owner and modes set here;
     * every parent directory is either checked in the volume or made by the same archive.
     */
    private final class Spool implements TarExtractor.Target<RuntimeException> {
        private final String[] base;
        private final String prefix;
        private final FileChannel out;
        private final long now;
        private final Map<String, Kind> seen = new HashMap<>();

        Spool(String[] base, String prefix, FileChannel out, long now) {
            this.base = base;
            this.prefix = prefix;
            this.out = out;
            this.now = now;
            seen.put("", Kind.OLD_DIR);
        }

        @Override
        public void directory(String[] rel, String[] comps, int mode) throws IOException {
            if (rel.length == 0) {
                return;
            }
            parents(rel);
            if (ensureDir(rel, mode) == Kind.OLD_DIR && mode >= 0) {
                // An existing directory gets the archive's mode, as the host import gives it.
                write(out, TarFormat.header(dirName(prefix, rel), TarFormat.DIRECTORY, mode, 0, uid, gid, now, null));
            }
        }

        @Override
        public long file(String[] rel, String[] comps, String path, int mode, long size, TarFormat.Reader content)
                throws IOException {
            parents(rel);
            claim(rel, Kind.FILE, path);
            write(out, TarFormat.header(name(prefix, rel), TarFormat.REGULAR, mode, size, uid, gid, now, null));
            long n = content.copyContent(out);
            write(out, new byte[TarFormat.padding(n)]);
            return n;
        }

        @Override
        public void symlink(String[] rel, String[] comps, String path, byte[] target) throws IOException {
            parents(rel);
            claim(rel, Kind.LINK, path);
            write(out, TarFormat.header(name(prefix, rel), TarFormat.SYMLINK, 0777, 0, uid, gid, now, target));
        }

        /** Makes sure every parent of {@code rel} is a directory, made by this archive or checked in the volume. */
        private void parents(String[] rel) throws IOException {
            for (int i = 1; i < rel.length; i++) {
                ensureDir(Arrays.copyOf(rel, i), -1);
            }
        }

        /**
         * The directory {@code rel}: known from this archive, else looked up in the volume (a link there is
         * refused) unless a parent was made by this archive, and written as an entry when missing ({@code mode}
         * -1: 0755).
         */
        private Kind ensureDir(String[] rel, int mode) throws IOException {
            String key = String.join("/", rel);
            String shown = String.join("/", FileRules.concat(base, rel));
            Kind k = seen.get(key);
            if (k == null) {
                Kind parent = seen.getOrDefault(String.join("/", Arrays.copyOf(rel, rel.length - 1)), Kind.OLD_DIR);
                VolumeAccess.PathStat st = parent == Kind.NEW_DIR ? null : access.stat(root + "/" + shown);
                if (st == null) {
                    write(out, TarFormat.header(dirName(prefix, rel), TarFormat.DIRECTORY,
                            mode < 0 ? FileRules.DIR_MODE : mode, 0, uid, gid, now, null));
                    k = Kind.NEW_DIR;
                } else if (st.type() == FileType.DIRECTORY) {
                    // Written with its own mode, for the reason given in extract.
                    write(out, TarFormat.header(dirName(prefix, rel), TarFormat.DIRECTORY, st.mode() & 0777, 0, uid,
                            gid, now, null));
                    k = Kind.OLD_DIR;
                } else if (st.type() == FileType.SYMLINK) {
                    throw FileRules.symlink(shown);
                } else {
                    throw new SandboxFileException(Reason.NOT_A_DIRECTORY, "'" + shown + "' is not a directory");
                }
                seen.put(key, k);
                return k;
            }
            if (k == Kind.LINK) {
                throw FileRules.symlink(shown);
            }
            if (k == Kind.FILE) {
                throw new SandboxFileException(Reason.NOT_A_DIRECTORY, "'" + shown + "' is not a directory");
            }
            return k;
        }

        /** A file or link of the archive replaces a file or link, never a directory (as the host upload refuses). */
        private void claim(String[] rel, Kind kind, String path) {
            Kind before = seen.put(String.join("/", rel), kind);
            if (before == Kind.NEW_DIR || before == Kind.OLD_DIR) {
                throw new SandboxFileException(Reason.IS_A_DIRECTORY, "'" + path + "' is a directory");
            }
        }
    }

    private static byte[] name(String prefix, String[] rel) {
        return FileRules.bytes(prefix + String.join("/", rel));
    }

    private static byte[] dirName(String prefix, String[] rel) {
        return FileRules.bytes(prefix + String.join("/", rel) + "/");
    }

    private static void write(FileChannel out, byte[] b) throws IOException {
        ByteBuffer bb = ByteBuffer.wrap(b);
        while (bb.hasRemaining()) {
            out.write(bb);
        }
    }
}
