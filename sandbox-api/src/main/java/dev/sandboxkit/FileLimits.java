package dev.sandboxkit;

/**
 * Limits on what one {@link SandboxFiles} call may move, so that a hostile or runaway workdir cannot
 * exhaust the host's memory, disk or time through the files API. Exceeding a limit fails the call with
 * a {@link SandboxFileException} whose reason is {@link SandboxFileException.Reason#TOO_LARGE} or
 * {@link SandboxFileException.Reason#TOO_MANY_ENTRIES}.
 *
 * @param maxFileBytes largest single file that may be read, written, uploaded or downloaded, in bytes
 * @param maxEntries   most entries one listing, tar upload or tar download may contain
 */
public record FileLimits(long maxFileBytes, int maxEntries) {

    /** 1 GiB per file, 100 000 entries per listing or archive. */
    public static final FileLimits DEFAULT = new FileLimits(1L << 30, 100_000);

    /** Validates. */
    public FileLimits {
        if (maxFileBytes <= 0) {
            throw new IllegalArgumentException("maxFileBytes must be positive, got: " + maxFileBytes);
        }
        if (maxEntries <= 0) {
            throw new IllegalArgumentException("maxEntries must be positive, got: " + maxEntries);
        }
    }
}
