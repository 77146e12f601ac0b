package dev.sandboxkit.spi;

import java.nio.file.Path;

/**
 * Object storage for the archive tier: whole objects put, fetched and deleted by key. The engine packs a
 * workdir suspended for long enough into one compressed tar, puts it here under a key that names the session
 * and the content's SHA-256, and deletes the local copy only once {@link #put} has returned; the next use of
 * the session, from any manager on the shared store and any host, fetches it and checks the hash before
 * unpacking. {@code sandbox-storage-s3} implements it for S3-compatible servers; {@link #directory} for a
 * directory that every host mounts.
 *
 * <p>Implementations are thread-safe. Failures are {@link dev.sandboxkit.SandboxUnavailableException} when the
 * store cannot be reached or answers with a server error (retryable), or another
 * {@link dev.sandboxkit.SandboxException}.
 */
public interface ArchiveStore extends AutoCloseable {

    /**
     * A store in a directory, one file per object (key {@code a/b} is {@code dir/a/b}); files are written under
     * a temporary name, synced and renamed into place. For hosts that share a filesystem, and for tests.
     *
     * @param directory the directory; created if missing
     * @return the store
     */
    static ArchiveStore directory(Path directory) {
        return new DirectoryArchiveStore(directory);
    }

    /**
     * Stores a file under a key, replacing any object there. Returns only once the store holds exactly these
     * bytes: an implementation has the server check a digest of the upload, or reads back what it stored, and
     * fails otherwise.
     *
     * @param key    the key: segments of {@code [A-Za-z0-9._-]} separated by {@code /}
     * @param file   the content
     * @param sha256 the content's SHA-256 in lowercase hex, which implementations may keep as metadata
     */
    void put(String key, Path file, String sha256);

    /**
     * Stores a file whose size and digests the engine computed while packing it; the engine calls this one, with
     * the same guarantee as {@link #put(String, Path, String)}. Stores whose servers check an upload's digest
     * override it, so as not to read the file once more before sending it. Default:
     * {@code put(key, file, digests.sha256())}.
     *
     * @param key     the key: segments of {@code [A-Za-z0-9._-]} separated by {@code /}
     * @param file    the content
     * @param digests the file's size and digests
     */
    default void put(String key, Path file, ArchiveDigests digests) {
        put(key, file, digests.sha256());
    }

    /**
     * Copies an object into a file, replacing the file.
     *
     * @param key  the key
     * @param file where the content goes
     * @throws dev.sandboxkit.SandboxNotFoundException if no object has that key
     */
    void get(String key, Path file);

    /**
     * Deletes an object. Idempotent: a missing object is fine.
     *
     * @param key the key
     */
    void delete(String key);

    /**
     * Where the objects go, for logs: {@code s3://bucket/prefix}, a directory.
     *
     * @return a short description
     */
    String describe();

    /** Releases the store's resources. Default: nothing to release. */
    @Override
    default void close() {
    }
}
