package dev.sandboxkit.spi;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * What the engine computed while packing an archive file, handed to {@link ArchiveStore#put} so that a store
 * need not read the file again before it sends it: its size and two digests of its bytes.
 *
 * @param bytes  the file's size in bytes, zero or more
 * @param sha256 its SHA-256 in lowercase hex (64 digits): the archive's identity, checked again on every fetch
 * @param md5    its MD5 in lowercase hex (32 digits), for stores whose servers check an upload with it
 *               ({@code Content-MD5} on S3); not a security check
 */
public record ArchiveDigests(long bytes, String sha256, String md5) {
    private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");
    private static final Pattern MD5 = Pattern.compile("[0-9a-f]{32}");

    /** Validates the values. */
    public ArchiveDigests {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes must not be negative: " + bytes);
        }
        if (!SHA256.matcher(Objects.requireNonNull(sha256, "sha256")).matches()) {
            throw new IllegalArgumentException("sha256 must be 64 lowercase hex digits: " + sha256);
        }
        if (!MD5.matcher(Objects.requireNonNull(md5, "md5")).matches()) {
            throw new IllegalArgumentException("md5 must be 32 lowercase hex digits: " + md5);
        }
    }
}
