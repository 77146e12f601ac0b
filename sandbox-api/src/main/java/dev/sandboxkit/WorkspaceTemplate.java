package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.util.Objects;

/**
 * What a new session's workdir starts with ({@link SandboxSpec.Builder#template}): a copy of a host directory or of a
 * snapshot, made once, when the session is first created (and when a warm-pool slot for the spec is started), never
 * when a suspended session resumes. Create one with {@link #directory(Path)} or {@link #snapshot(SnapshotId)}.
 *
 * <p>The copy follows no link: symbolic links are copied as links, FIFOs, sockets and devices are left out, and the
 * files are given to the sandbox user, as for {@link SandboxManager#restore}. A template that does not exist (any
 * more) when a session is created fails that acquire with {@link SandboxConfigurationException}, and the session is
 * not created. A snapshot template must therefore outlive the sessions created from it: keep it
 * ({@link SandboxManager#keepSnapshot}), since an unkept snapshot is deleted with its session.
 *
 * <p>A final class rather than a record, so that other kinds of templates can be added.
 */
public final class WorkspaceTemplate {
    private final @Nullable Path directory;
    private final @Nullable SnapshotId snapshot;

    private WorkspaceTemplate(@Nullable Path directory, @Nullable SnapshotId snapshot) {
        this.directory = directory;
        this.snapshot = snapshot;
    }

    /**
     * A host directory, copied as it is when each session (or pool slot) is created. Needs a driver whose workdirs
     * it can copy into (Docker; {@code WorkspaceCapability.DIRECTORY_TEMPLATES}). The directory itself must not be a
     * symbolic link.
     *
     * @param directory an absolute path on the manager's host (another manager sharing the store must see the same
     *                  directory there)
     * @return the template
     * @throws IllegalArgumentException if the path is relative or not of the default file system
     */
    public static WorkspaceTemplate directory(Path directory) {
        Objects.requireNonNull(directory, "directory");
        if (directory.getFileSystem() != FileSystems.getDefault() || !directory.isAbsolute()) {
            throw new IllegalArgumentException("a template directory must be an absolute path on the host: " + directory);
        }
        return new WorkspaceTemplate(directory.normalize(), null);
    }

    /**
     * A snapshot taken by {@link SandboxManager#snapshot}; keep it ({@link SandboxManager#keepSnapshot}) as long as
     * sessions may be created from it.
     *
     * @param snapshot the snapshot
     * @return the template
     */
    public static WorkspaceTemplate snapshot(SnapshotId snapshot) {
        return new WorkspaceTemplate(null, Objects.requireNonNull(snapshot, "snapshot"));
    }

    /**
     * The host directory, or {@code null} for a snapshot template.
     *
     * @return the absolute, normalized directory, or {@code null}
     */
    public @Nullable Path directory() {
        return directory;
    }

    /**
     * The snapshot, or {@code null} for a directory template.
     *
     * @return the snapshot, or {@code null}
     */
    public @Nullable SnapshotId snapshot() {
        return snapshot;
    }

    @Override
    public boolean equals(Object other) {
        return this == other || (other instanceof WorkspaceTemplate o && Objects.equals(directory, o.directory)
                && Objects.equals(snapshot, o.snapshot));
    }

    @Override
    public int hashCode() {
        return Objects.hash(directory, snapshot);
    }

    @Override
    public String toString() {
        return directory != null ? "directory " + directory : "snapshot " + snapshot;
    }
}
