package dev.sandboxkit;

/**
 * What a tar upload ({@link SandboxFiles#uploadTar}) created or replaced.
 *
 * @param files       regular files written
 * @param directories directories created or found already present
 * @param symlinks    symbolic links created
 * @param bytes       content bytes written
 */
public record UploadResult(int files, int directories, int symlinks, long bytes) {
}
