package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.FileType;

import java.io.InputStream;
import java.time.Instant;
import java.util.List;

/**
 * What {@link VolumeFiles} needs from the engine to reach one named volume without a host path: the archive API
 * on a helper container that mounts the volume (never started), and one-off commands for what that API cannot do
 * (deleting, re-owning). Paths are absolute in the helper. The engine resolves every component but the last one,
 * following links within the helper's own root filesystem, so callers check components with {@link #stat} first.
 */
public interface VolumeAccess {

    /**
     * {@code HEAD /containers/{id}/archive}: the entry at {@code path}, its last component not followed.
     *
     * @param path absolute path in the helper
     * @return the entry, or {@code null} when nothing is there
     */
    PathStat stat(String path);

    /**
     * {@code GET /containers/{id}/archive}: a tar stream of {@code path} (the entry named by its last component,
     * a directory with everything below it); the caller closes it.
     *
     * @param path absolute path in the helper
     * @return the tar stream
     * @throws dev.sandboxkit.SandboxNotFoundException if nothing is there
     */
    InputStream get(String path);

    /**
     * The first {@code max} bytes of {@link #get}'s archive, the rest never sent (the engine's tar is ended):
     * for the first entry's header, whatever the size of the tree.
     *
     * @param path absolute path in the helper
     * @param max  how many bytes at most
     * @return the archive's first bytes
     * @throws dev.sandboxkit.SandboxNotFoundException if nothing is there
     */
    byte[] getPrefix(String path, int max);

    /**
     * {@code PUT /containers/{id}/archive} with {@code noOverwriteDirNonDir}: extracts {@code tar} into the
     * directory {@code dir}, owners and modes as the headers say.
     *
     * @param dir    absolute directory in the helper
     * @param tar    the archive, read to its end and closed
     * @param length its length in bytes
     */
    void put(String dir, InputStream tar, long length);

    /**
     * Runs {@code body} with every running container on the volume frozen, so that nothing in a sandbox changes
     * the tree between the checks of a files call and the engine's call (a FIFO swapped in there would block the
     * engine's open for good). Reentrant. A stream the engine answers while frozen must be read before
     * {@code body} returns.
     *
     * @param body the calls; told whether anything was frozen (else nothing runs on the volume)
     * @param <T>  its result
     * @return its result
     */
    <T> T quiesced(Quiesced<T> body);

    /**
     * Calls made by {@link #quiesced}.
     *
     * @param <T> their result
     */
    @FunctionalInterface
    interface Quiesced<T> {
        /**
         * Makes the calls.
         *
         * @param live whether containers were frozen for them (streams must then be read before returning)
         * @return the result
         */
        T run(boolean live);
    }

    /**
     * Runs {@code argv} in a one-off container on the volume (same image, the sandbox user, no network, no
     * capabilities) and waits for it.
     *
     * @param argv the command
     * @return its exit code and output
     */
    Run run(List<String> argv);

    /**
     * As {@link #run}, but as root ({@code 0:0}) with only {@code capabilities} (engine names such as
     * {@code CHOWN}): for re-owning the tree, which the sandbox user cannot do.
     *
     * @param argv         the command
     * @param capabilities the capabilities it gets (every other one is dropped)
     * @return its exit code and output
     */
    Run runAsRoot(List<String> argv, List<String> capabilities);

    /**
     * A finished one-off command.
     *
     * @param exitCode its exit code
     * @param output   what it printed (stdout and stderr)
     */
    record Run(int exitCode, String output) {
    }

    /**
     * An entry as the engine's {@code X-Docker-Container-Path-Stat} header describes it.
     *
     * @param name   its last component
     * @param size   its size
     * @param goMode Go's {@code os.FileMode} bits
     * @param mtime  its modification time
     */
    record PathStat(String name, long size, long goMode, Instant mtime) {
        static final long DIR = 1L << 31;
        static final long SYMLINK = 1L << 27;
        static final long DEVICE = 1L << 26;
        static final long PIPE = 1L << 25;
        static final long SOCKET = 1L << 24;
        static final long SETUID = 1L << 23;
        static final long SETGID = 1L << 22;
        static final long CHAR_DEVICE = 1L << 21;
        static final long STICKY = 1L << 20;
        static final long IRREGULAR = 1L << 19;

        /**
         * The entry's type.
         *
         * @return its type
         */
        public FileType type() {
            if ((goMode & DIR) != 0) {
                return FileType.DIRECTORY;
            }
            if ((goMode & SYMLINK) != 0) {
                return FileType.SYMLINK;
            }
            if ((goMode & PIPE) != 0) {
                return FileType.FIFO;
            }
            if ((goMode & SOCKET) != 0) {
                return FileType.SOCKET;
            }
            if ((goMode & (DEVICE | CHAR_DEVICE | IRREGULAR)) != 0) {
                return FileType.DEVICE;
            }
            return FileType.FILE;
        }

        /**
         * The POSIX permission bits, setuid, setgid and sticky included.
         *
         * @return {@code 07777} bits
         */
        public int mode() {
            int m = (int) (goMode & 0777);
            m |= (goMode & SETUID) != 0 ? 04000 : 0;
            m |= (goMode & SETGID) != 0 ? 02000 : 0;
            m |= (goMode & STICKY) != 0 ? 01000 : 0;
            return m;
        }
    }
}
