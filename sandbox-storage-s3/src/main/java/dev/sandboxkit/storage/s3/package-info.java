/**
 * An {@link dev.sandboxkit.spi.ArchiveStore} on S3-compatible object storage, for the archive tier of
 * {@code SandboxManager.Builder.archive}: {@link dev.sandboxkit.storage.s3.S3ArchiveStore}.
 */
@NullMarked
package dev.sandboxkit.storage.s3;

import org.jspecify.annotations.NullMarked;
