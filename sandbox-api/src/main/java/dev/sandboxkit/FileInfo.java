package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

import java.time.Instant;
import java.util.Objects;

/**
 * One entry of a session's workdir, as seen without following links.
 *
 * @param path         the path relative to {@value SandboxSpec#WORKSPACE}, {@code ""} for the workdir itself
 * @param name         the last path component, {@code ""} for the workdir itself
 * @param type         what the entry is
 * @param size         size in bytes (for a symbolic link: the length of its target)
 * @param permissions  the permission bits, {@code mode & 07777} (setuid, setgid and sticky included, as found)
 * @param lastModified last modification time
 * @param linkTarget   the target of a symbolic link, as stored (never resolved), or {@code null}
 */
public record FileInfo(String path, String name, FileType type, long size, int permissions, Instant lastModified,
                       @Nullable String linkTarget) {

    /** Validates. */
    public FileInfo {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(lastModified, "lastModified");
    }

    /**
     * Whether this is a regular file.
     *
     * @return {@code true} for {@link FileType#FILE}
     */
    public boolean isFile() {
        return type == FileType.FILE;
    }

    /**
     * Whether this is a directory.
     *
     * @return {@code true} for {@link FileType#DIRECTORY}
     */
    public boolean isDirectory() {
        return type == FileType.DIRECTORY;
    }
}
