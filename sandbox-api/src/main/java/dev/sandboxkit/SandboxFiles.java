package dev.sandboxkit;

import java.io.InputStream;
import java.util.List;

/**
 * Host-side access to one session's durable workdir ({@value SandboxSpec#WORKSPACE}), for the application
 * that drives the agent: put input files in, take results out. Get it from {@link Sandbox#files()} or
 * {@link SandboxManager#files(String)}. Thread-safe. The model never sees this API; it sees the same files
 * through its commands.
 *
 * <p><b>Paths</b> are relative to the workdir: {@code "a/b.txt"}, {@code "/workspace/a/b.txt"} and
 * {@code "./a//b.txt"} name the same file; {@code ""}, {@code "."} and {@code "/workspace"} name the workdir
 * itself. Any other absolute path and any {@code ..} component are refused
 * ({@link SandboxFileException.Reason#INVALID_PATH}).
 *
 * <p><b>Nothing is followed.</b> The sandbox may plant symbolic links, FIFOs, device nodes, hard links and
 * setuid files in its workdir, and may swap entries while a call runs. No call ever leaves the workdir or
 * blocks on what it finds: a symbolic link anywhere in a path is refused
 * ({@link SandboxFileException.Reason#SYMLINK}), FIFOs, sockets and devices are never opened
 * ({@link SandboxFileException.Reason#NOT_A_REGULAR_FILE}), and a write replaces whatever entry holds the
 * name (a link is replaced, never written through). How a driver guarantees this is described on its
 * implementation; drivers without a files API throw {@link SandboxFileException.Reason#UNSUPPORTED}.
 *
 * <p><b>Writes</b> are atomic (a reader sees the old content or the new, never half a file), create
 * missing parent directories, and leave files owned by the sandbox user with mode {@code 0644}
 * ({@code 0755} when executable in an upload) and directories with {@code 0755}; setuid, setgid and sticky
 * bits are never created.
 *
 * <p><b>Sessions.</b> A suspended session's workdir is accessible too: no call starts a container. Calls
 * on a live session count as activity (they reset its idle clock). A destroyed or unknown session is
 * {@link SandboxNotFoundException}, as is a missing path.
 *
 * <p><b>Limits</b> ({@link SandboxManager.Builder#fileLimits(long, int)}) cap file sizes and entry counts;
 * exceeding one is {@link SandboxFileException.Reason#TOO_LARGE} or
 * {@link SandboxFileException.Reason#TOO_MANY_ENTRIES}. Large files stream: nothing here holds a whole
 * file in memory except {@link #readBytes(String)} and {@link #write(String, byte[])}.
 */
public interface SandboxFiles {

    /**
     * Describes an entry without following links.
     *
     * @param path the entry
     * @return its description
     * @throws SandboxNotFoundException if it does not exist
     * @throws SandboxFileException     if a parent component is a link or not a directory
     */
    FileInfo stat(String path);

    /**
     * Whether an entry exists (of any type, links included).
     *
     * @param path the entry
     * @return {@code true} if something is there
     * @throws SandboxFileException if a parent component is a link or not a directory
     */
    boolean exists(String path);

    /**
     * The entries of a directory, sorted by name, without following links.
     *
     * @param path the directory
     * @return its direct children
     * @throws SandboxNotFoundException if it does not exist
     * @throws SandboxFileException     if it is not a directory, or has more than {@link FileLimits#maxEntries()}
     *                                  entries
     */
    List<FileInfo> list(String path);

    /**
     * Reads a whole regular file into memory.
     *
     * @param path the file
     * @return its content
     * @throws SandboxNotFoundException if it does not exist
     * @throws SandboxFileException     if it is not a regular file, or exceeds {@link FileLimits#maxFileBytes()}
     */
    byte[] readBytes(String path);

    /**
     * Opens a regular file for streaming. The file is opened before this method returns, so a later rename
     * or swap inside the sandbox does not change what the stream reads. Reading past
     * {@link FileLimits#maxFileBytes()} (the file grew) throws {@link SandboxFileException}. Close it.
     *
     * @param path the file
     * @return a stream of its content
     * @throws SandboxNotFoundException if it does not exist
     * @throws SandboxFileException     if it is not a regular file, or exceeds the size limit
     */
    InputStream newInputStream(String path);

    /**
     * Writes a file atomically, replacing what holds the name (a file, or a link: the link itself is
     * replaced). Missing parent directories are created.
     *
     * @param path    the file
     * @param content the new content
     * @throws SandboxFileException if the name is a directory, a parent is a link or not a directory, or the
     *                              content exceeds the size limit
     */
    void write(String path, byte[] content);

    /**
     * Writes a file atomically from a stream, which is read to its end (and not closed). Nothing is visible
     * in the workdir until the whole content has arrived; a failure, or content over the size limit, leaves
     * the old file in place.
     *
     * @param path    the file
     * @param content the new content
     * @return the number of bytes written
     * @throws SandboxFileException as {@link #write(String, byte[])}
     */
    long write(String path, InputStream content);

    /**
     * Creates a directory and its missing parents. Existing directories are fine.
     *
     * @param path the directory
     * @throws SandboxFileException if a component exists and is not a directory, or is a link
     */
    void mkdirs(String path);

    /**
     * Deletes a file, link (the link itself), FIFO, socket, device node or empty directory.
     *
     * @param path the entry
     * @throws SandboxNotFoundException if it does not exist
     * @throws SandboxFileException     if it is a non-empty directory, or the workdir itself
     */
    void delete(String path);

    /**
     * Deletes an entry and, for a directory, everything below it, never following links.
     *
     * @param path the entry
     * @return {@code false} if nothing was there
     * @throws SandboxFileException if it is the workdir itself, or an entry cannot be deleted (the message
     *                              names it; for example the tree keeps changing while it is deleted)
     */
    boolean deleteRecursively(String path);

    /**
     * Extracts a tar stream into a directory (created if missing), entry by entry: each file is written
     * atomically like {@link #write(String, InputStream)}. Supported entries: regular files, directories and
     * symbolic links whose target is relative and stays inside the workdir. The archive is refused
     * ({@link SandboxFileException.Reason#INVALID_ARCHIVE}) at the first entry that is absolute, contains
     * {@code ..}, is a hard link, device, FIFO or other special entry, or is a link pointing out; entries
     * before it stay extracted. Ownership in the archive is ignored; setuid, setgid and sticky bits are
     * dropped. GNU and PAX long names are understood.
     *
     * @param directory where to extract
     * @param tar       the archive; read to its end-of-archive marker, not closed
     * @return what was written
     * @throws SandboxFileException on a forbidden entry, a malformed archive, or a limit exceeded
     */
    UploadResult uploadTar(String directory, InputStream tar);

    /**
     * Streams a tar archive of a file or directory tree, produced as the caller reads. Entry names are
     * relative to {@code path} (for a single file: its name). Only directories and regular files are
     * included; symbolic links, FIFOs, sockets and devices are left out and never opened. Modes keep the
     * permission bits only: setuid, setgid and sticky bits are stripped. Hard-linked files appear as
     * independent files. The stream throws {@link SandboxFileException} if the tree exceeds a limit.
     *
     * @param path the file or directory
     * @return the archive; close it
     * @throws SandboxNotFoundException if it does not exist
     */
    InputStream downloadTar(String path);
}
