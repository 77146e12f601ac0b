package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFileException.Reason;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.docker.internal.files.LinuxFs.Errno;
import dev.sandboxkit.docker.internal.files.LinuxFs.Stat;

import static dev.sandboxkit.docker.internal.files.FileRules.DIR_MODE;
import static dev.sandboxkit.docker.internal.files.FileRules.MAX_DEPTH;
import static dev.sandboxkit.docker.internal.files.FileRules.bytes;
import static dev.sandboxkit.docker.internal.files.FileRules.permissions;
import static dev.sandboxkit.docker.internal.files.FileRules.symlink;
import static dev.sandboxkit.docker.internal.files.FileRules.tooDeep;
import static dev.sandboxkit.docker.internal.files.FileRules.tooMany;
import static dev.sandboxkit.docker.internal.files.HostFiles.PATH_CHARSET;
import static dev.sandboxkit.docker.internal.files.HostFiles.error;

import java.io.IOException;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;

/**
 * Walks down one host workdir as {@link HostFiles} says ("walk, don't resolve"): opens the workdir by its host
 * path, then each component below it {@code O_PATH | O_NOFOLLOW} relative to the previous descriptor, checked
 * to be a directory; makes missing directories when asked, owned by the sandbox user.
 */
final class HostWalk {
    private final String workdir;
    private final byte[] workdirBytes;
    private final long uid;
    private final long gid;
    private final boolean chown;
    private final FileLimits limits;

    HostWalk(String workdir, long uid, long gid, boolean chown, FileLimits limits) {
        this.workdir = workdir;
        this.workdirBytes = workdir.getBytes(PATH_CHARSET);
        this.uid = uid;
        this.gid = gid;
        this.chown = chown;
        this.limits = limits;
    }

    int openWorkdir() {
        try {
            return LinuxFs.open(LinuxFs.AT_FDCWD, workdirBytes, LinuxFs.O_PATH | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW);
        } catch (Errno e) {
            if (e.code == LinuxFs.ENOENT) {
                throw new SandboxNotFoundException("the session's workdir no longer exists");
            }
            throw new SandboxFileException(Reason.IO_ERROR, "cannot open the session's workdir " + workdir + " (errno "
                    + e.code + ")");
        }
    }

    /**
     * Opens the directory {@code comps[0..count)} below the workdir, one O_PATH no-follow step per component,
     * each checked to be a directory; with {@code create}, missing ones are made (0755, sandbox owner).
     *
     * @return an O_PATH descriptor the caller closes
     */
    int openDir(String[] comps, int count, boolean create) {
        if (count > MAX_DEPTH) {
            throw tooDeep(String.join("/", comps));
        }
        int fd = openWorkdir();
        try {
            for (int i = 0; i < count; i++) {
                int next = openChildDir(fd, bytes(comps[i]), String.join("/", Arrays.copyOf(comps, i + 1)), create);
                LinuxFs.closeQuietly(fd);
                fd = next;
            }
            int result = fd;
            fd = -1;
            return result;
        } finally {
            LinuxFs.closeQuietly(fd);
        }
    }

    private int openChildDir(int dir, byte[] name, String shown, boolean create) {
        boolean created = false;
        for (int attempt = 0; ; attempt++) {
            int fd;
            try {
                fd = LinuxFs.openPath(dir, name);
            } catch (Errno e) {
                if (e.code == LinuxFs.ENOENT && create && attempt < 3) {
                    try {
                        LinuxFs.mkdir(dir, name, DIR_MODE);
                        created = true;
                    } catch (Errno m) {
                        if (m.code != LinuxFs.EEXIST) {
                            throw error(m, shown);
                        }
                    }
                    continue;
                }
                throw error(e, shown);
            }
            try {
                Stat st = LinuxFs.stat(fd);
                if (!st.isDirectory()) {
                    throw st.isSymlink() ? symlink(shown) : new SandboxFileException(Reason.NOT_A_DIRECTORY,
                            "'" + shown + "' is not a directory");
                }
                if (created) {
                    ownDirectory(fd, shown);
                }
                int result = fd;
                fd = -1;
                return result;
            } catch (Errno e) {
                throw error(e, shown);
            } finally {
                LinuxFs.closeQuietly(fd);
            }
        }
    }

    /** Mode and owner of a directory this class made, through its pinned descriptor. */
    private void ownDirectory(int fd, String shown) {
        try {
            if (chown) {
                LinuxFs.chown(fd, uid, gid);
            }
            Files.setPosixFilePermissions(LinuxFs.proc(fd), permissions(DIR_MODE)); // the umask may have narrowed it
        } catch (Errno | IOException e) {
            throw new SandboxFileException(Reason.IO_ERROR, "cannot set the owner of new directory '" + shown + "': "
                    + e, e);
        }
    }

    List<byte[]> names(int dir, String path) {
        try {
            List<byte[]> names = LinuxFs.names(dir, limits.maxEntries());
            if (names.size() > limits.maxEntries()) {
                throw tooMany("directory '" + path + "'", limits.maxEntries());
            }
            return names;
        } catch (Errno e) {
            throw error(e, path);
        }
    }
}
