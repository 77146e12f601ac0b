package dev.sandboxkit.storage.s3;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.spi.ArchiveDigests;
import dev.sandboxkit.spi.ArchiveStore;
import org.jspecify.annotations.Nullable;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Archives on S3 or an S3-compatible server (MinIO, Ceph, s3proxy...), through a caller-supplied
 * {@link S3Client}: each archive is one object {@code <prefix><sessionId>/<sha256>.tar.gz}.
 *
 * <p>A put is verified twice before it returns, because the engine deletes its local copy next: the upload
 * carries {@code Content-MD5}, which the server checks before it stores anything, and a {@code HEAD} afterwards
 * must show the same length and the SHA-256 kept as the object's {@code sha256} metadata. The engine checks the
 * SHA-256 of what it fetches again before unpacking.
 *
 * <p>Errors: no connection, a timeout, throttling or a 5xx answer are {@link SandboxUnavailableException}
 * (retryable); a missing object is {@link SandboxNotFoundException}; 401/403 (credentials, policy) are
 * {@link SandboxConfigurationException}; anything else is a {@link SandboxException}.
 *
 * <p>The store never closes the client (the caller owns it). Thread-safe.
 *
 * <p>S3-compatible servers: SDK versions from 2.30 send CRC checksums with every request by default, which some
 * servers do not understand; build their client with
 * {@code requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)} and, for path-style servers,
 * {@code forcePathStyle(true)}.
 */
public final class S3ArchiveStore implements ArchiveStore {
    private static final Pattern PREFIX = Pattern.compile("([A-Za-z0-9._-]+/)*");
    private static final String SHA256 = "sha256";

    private final S3Client client;
    private final String bucket;
    private final String prefix;

    private S3ArchiveStore(Builder b) {
        this.client = Objects.requireNonNull(b.client, "client is required");
        this.bucket = Objects.requireNonNull(b.bucket, "bucket is required");
        this.prefix = b.prefix;
    }

    /**
     * Starts a builder.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void put(String key, Path file, String sha256) {
        MessageDigest md5 = digest("MD5");
        MessageDigest sha = digest("SHA-256");
        long size;
        try (InputStream in = new DigestInputStream(new DigestInputStream(Files.newInputStream(file), md5), sha)) {
            size = in.transferTo(java.io.OutputStream.nullOutputStream());
        } catch (IOException e) {
            throw new SandboxException("cannot read the archive to upload " + file + ": " + e, e);
        }
        String actual = HexFormat.of().formatHex(sha.digest());
        if (!actual.equals(sha256)) {
            throw new SandboxException("the archive to upload " + file + " has SHA-256 " + actual + ", not " + sha256);
        }
        put(key, file, new ArchiveDigests(size, sha256, HexFormat.of().formatHex(md5.digest())));
    }

    @Override
    public void put(String key, Path file, ArchiveDigests digests) {
        String objectKey = prefix + key;
        long size = digests.bytes();
        String sha256 = digests.sha256();
        String md5 = Base64.getEncoder().encodeToString(HexFormat.of().parseHex(digests.md5()));
        call("upload", objectKey, () -> client.putObject(r -> r.bucket(bucket).key(objectKey).contentLength(size)
                .contentMD5(md5).contentType("application/gzip").metadata(Map.of(SHA256, sha256)),
                RequestBody.fromFile(file)));
        HeadObjectResponse head = call("check", objectKey, () -> client.headObject(r -> r.bucket(bucket).key(objectKey)));
        if (head.contentLength() == null || head.contentLength() != size || !sha256.equals(head.metadata().get(SHA256))) {
            throw new SandboxUnavailableException("the upload of s3://" + bucket + "/" + objectKey + " did not verify: "
                    + head.contentLength() + " bytes, sha256 " + head.metadata().get(SHA256) + "; expected " + size
                    + " bytes, sha256 " + sha256, null);
        }
    }

    @Override
    public void get(String key, Path file) {
        String objectKey = prefix + key;
        try (ResponseInputStream<GetObjectResponse> in = call("download", objectKey,
                () -> client.getObject(r -> r.bucket(bucket).key(objectKey)))) {
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new SandboxUnavailableException("the download of s3://" + bucket + "/" + objectKey + " broke off: "
                    + e, e);
        }
    }

    @Override
    public void delete(String key) {
        String objectKey = prefix + key;
        call("delete", objectKey, () -> client.deleteObject(r -> r.bucket(bucket).key(objectKey)));
    }

    @Override
    public String describe() {
        return "s3://" + bucket + "/" + prefix;
    }

    @Override
    public String toString() {
        return "S3ArchiveStore[" + describe() + "]";
    }

    private <T> T call(String what, String objectKey, java.util.function.Supplier<T> request) {
        try {
            return request.get();
        } catch (NoSuchKeyException e) {
            throw new SandboxNotFoundException("no archive at s3://" + bucket + "/" + objectKey, e);
        } catch (S3Exception e) {
            String where = what + " of s3://" + bucket + "/" + objectKey + " failed: " + e.getMessage();
            int status = e.statusCode();
            if (status == 404 && "check".equals(what)) {
                throw new SandboxNotFoundException("no archive at s3://" + bucket + "/" + objectKey, e);
            }
            if (status == 401 || status == 403) {
                throw new SandboxConfigurationException(where + " (check the credentials and the bucket policy)", e);
            }
            if (status >= 500 || status == 429 || e.isThrottlingException()) {
                throw new SandboxUnavailableException(where, e);
            }
            throw new SandboxException(where, e);
        } catch (SdkClientException e) {
            // No answer: connection refused or reset, timeout, a body cut short.
            throw new SandboxUnavailableException(what + " of s3://" + bucket + "/" + objectKey
                    + " could not reach the store: " + e.getMessage(), e);
        } catch (SdkException e) {
            throw new SandboxException(what + " of s3://" + bucket + "/" + objectKey + " failed: " + e.getMessage(), e);
        }
    }

    private static MessageDigest digest(String algorithm) {
        try {
            return MessageDigest.getInstance(algorithm);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has " + algorithm, e);
        }
    }

    /** Options of an {@link S3ArchiveStore}; each can be set once. */
    public static final class Builder {
        private @Nullable S3Client client;
        private @Nullable String bucket;
        private String prefix = "sandboxkit/";
        private boolean prefixSet;

        private Builder() {
        }

        /**
         * The client to use (required); the store never closes it.
         *
         * @param s3 the client
         * @return this builder
         * @throws IllegalStateException if this option was set already
         */
        public Builder client(S3Client s3) {
            if (client != null) {
                throw new IllegalStateException("client was already set");
            }
            this.client = Objects.requireNonNull(s3, "s3");
            return this;
        }

        /**
         * The bucket (required); it must exist.
         *
         * @param name the bucket's name
         * @return this builder
         * @throws IllegalStateException if this option was set already
         */
        public Builder bucket(String name) {
            if (bucket != null) {
                throw new IllegalStateException("bucket was already set");
            }
            if (Objects.requireNonNull(name, "name").isBlank()) {
                throw new IllegalArgumentException("bucket must not be blank");
            }
            this.bucket = name;
            return this;
        }

        /**
         * The key prefix, default {@code sandboxkit/}: empty, or segments of {@code [A-Za-z0-9._-]} each ending
         * in {@code /}. Give each fleet its own, or its own bucket.
         *
         * @param keyPrefix the prefix
         * @return this builder
         * @throws IllegalStateException if this option was set already
         */
        public Builder prefix(String keyPrefix) {
            if (prefixSet) {
                throw new IllegalStateException("prefix was already set");
            }
            if (!PREFIX.matcher(Objects.requireNonNull(keyPrefix, "keyPrefix")).matches()) {
                throw new IllegalArgumentException("prefix must be empty or end in '/', segments of [A-Za-z0-9._-]: "
                        + keyPrefix);
            }
            this.prefix = keyPrefix;
            this.prefixSet = true;
            return this;
        }

        /**
         * Builds the store.
         *
         * @return the store
         * @throws NullPointerException if the client or the bucket is missing
         */
        public S3ArchiveStore build() {
            return new S3ArchiveStore(this);
        }
    }
}
