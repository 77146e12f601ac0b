package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFileException.Reason;
import dev.sandboxkit.UploadResult;
import dev.sandboxkit.docker.internal.files.LinuxFs.Errno;

import static dev.sandboxkit.docker.internal.files.FileRules.bytes;
import static dev.sandboxkit.docker.internal.files.FileRules.ioError;
import static dev.sandboxkit.docker.internal.files.FileRules.last;
import static dev.sandboxkit.docker.internal.files.FileRules.permissions;
import static dev.sandboxkit.docker.internal.files.FileRules.split;
import static dev.sandboxkit.docker.internal.files.FileRules.symlink;
import static dev.sandboxkit.docker.internal.files.HostFiles.PATH_CHARSET;
import static dev.sandboxkit.docker.internal.files.HostFiles.error;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Puts content into one host workdir as {@link HostFiles} says ("never write in place"): an entry staged
 * privately gets its mode and owner, then is renamed into its pinned parent directory. Does so for single
 * files and for each entry {@link TarExtractor} accepts from an uploaded or imported archive.
 */
final class HostPlacer {
    private final String workdir;
    private final HostWalk walk;
    private final HostFiles.Staging staging;
    private final long uid;
    private final long gid;
    private final boolean chown;
    private final FileLimits limits;

    HostPlacer(String workdir, HostWalk walk, HostFiles.Staging staging, long uid, long gid, boolean chown,
               FileLimits limits) {
        this.workdir = workdir;
        this.walk = walk;
        this.staging = staging;
        this.uid = uid;
        this.gid = gid;
        this.chown = chown;
        this.limits = limits;
    }

    /** Mode and owner of a staged entry, set while only this JVM can see it. */
    void own(Path staged, int mode) {
        try {
            Files.setPosixFilePermissions(staged, permissions(mode));
            if (chown) {
                LinuxFs.lchown(LinuxFs.AT_FDCWD, staged.toString().getBytes(PATH_CHARSET), uid, gid);
            }
        } catch (IOException | Errno e) {
            throw new SandboxFileException(Reason.IO_ERROR, "cannot set the owner of a staged file: " + e, e);
        }
    }

    /** Renames a staged entry over the name, in the pinned parent directory (created if missing). */
    void place(Path staged, String[] comps, String path) {
        int dir = walk.openDir(comps, comps.length - 1, true);
        try {
            placeIn(dir, staged, comps, path);
        } finally {
            LinuxFs.closeQuietly(dir);
        }
    }

    /** Renames a staged entry over the last component, in {@code dir}, its pinned parent directory. */
    private void placeIn(int dir, Path staged, String[] comps, String path) {
        try {
            LinuxFs.rename(LinuxFs.AT_FDCWD, staged.toString().getBytes(PATH_CHARSET), dir, bytes(last(comps)));
        } catch (Errno e) {
            if (e.code == LinuxFs.EISDIR || e.code == LinuxFs.ENOTEMPTY || e.code == LinuxFs.EEXIST) {
                throw new SandboxFileException(Reason.IS_A_DIRECTORY, "'" + path + "' is a directory");
            }
            if (e.code == LinuxFs.EXDEV) {
                throw new SandboxFileException(Reason.IO_ERROR, "cannot move a file into the workdir: the workspace "
                        + "root must be a single filesystem (" + staging.dir + " and " + workdir + " differ)");
            }
            throw error(e, path);
        }
    }

    /**
     * The parent directory of the entry placed last, kept open: a tar lists a directory's entries together, and
     * walking down from the workdir for each costs a few system calls per component. Safe to reuse: the
     * descriptor pins the directory itself, and an extraction only ever adds entries (a link cannot be renamed
     * over a directory).
     */
    private final class Parents implements AutoCloseable {
        private String[] comps = new String[0];
        private int fd = -1;

        int of(String[] entry) {
            int n = entry.length - 1;
            if (fd < 0 || comps.length != n || !Arrays.equals(comps, 0, n, entry, 0, n)) {
                close();
                fd = walk.openDir(entry, n, true);
                comps = Arrays.copyOf(entry, n);
            }
            return fd;
        }

        @Override
        public void close() {
            LinuxFs.closeQuietly(fd);
            fd = -1;
        }
    }

    /** A directory's permission bits, applied after the extraction. */
    private record DirMode(String[] comps, int mode) {
    }

    UploadResult extract(String directory, InputStream tar, boolean archive) {
        String[] base = split(directory);
        LinuxFs.closeQuietly(walk.openDir(base, base.length, true));
        try (Extraction into = new Extraction()) {
            UploadResult result = TarExtractor.extract(tar, base, limits, archive, into);
            into.applyDirModes();
            return result;
        } catch (Errno e) {
            throw error(e, directory);
        } catch (IOException e) {
            throw ioError("upload into", directory, e);
        }
    }

    /** Places what {@link TarExtractor} accepted: staged privately, then renamed into its pinned parent. */
    private final class Extraction implements TarExtractor.Target<Errno>, AutoCloseable {
        private final Parents parents = new Parents();
        private final List<DirMode> dirModes = new ArrayList<>();

        @Override
        public void directory(String[] rel, String[] comps, int mode) {
            LinuxFs.closeQuietly(walk.openDir(comps, comps.length, true));
            if (mode >= 0 && rel.length > 0) {
                dirModes.add(new DirMode(comps, mode));
            }
        }

        @Override
        public long file(String[] rel, String[] comps, String path, int mode, long size, TarFormat.Reader content)
                throws IOException {
            Path temp = staging.newTemp();
            try {
                long n;
                try (FileChannel out = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                    n = content.copyContent(out);
                }
                own(temp, mode);
                placeIn(parents.of(comps), temp, comps, path);
                return n;
            } finally {
                staging.deleteQuietly(temp);
            }
        }

        @Override
        public void symlink(String[] rel, String[] comps, String path, byte[] target) throws Errno {
            Path temp = staging.newName();
            try {
                byte[] tempBytes = temp.toString().getBytes(PATH_CHARSET);
                LinuxFs.symlink(target, LinuxFs.AT_FDCWD, tempBytes);
                if (chown) {
                    LinuxFs.lchown(LinuxFs.AT_FDCWD, tempBytes, uid, gid);
                }
                placeIn(parents.of(comps), temp, comps, path);
            } finally {
                staging.deleteQuietly(temp);
            }
        }

        /** Deepest first, once everything is in: a 0555 directory could not have been filled. */
        void applyDirModes() throws Errno {
            for (int i = dirModes.size() - 1; i >= 0; i--) {
                DirMode d = dirModes.get(i);
                int fd = walk.openDir(d.comps(), d.comps().length, false);
                try {
                    LinuxFs.chmod(fd, d.mode());
                } finally {
                    LinuxFs.closeQuietly(fd);
                }
            }
        }

        @Override
        public void close() {
            parents.close();
        }
    }
}
