/**
 * The S3 archive tier: exports {@link dev.sandboxkit.storage.s3}.
 */
module dev.sandboxkit.storage.s3 {
    requires transitive dev.sandboxkit;
    // The AWS SDK's jars carry Automatic-Module-Names (stable, set by the SDK). Transitive: the builder takes an S3Client.
    requires transitive software.amazon.awssdk.services.s3;
    requires software.amazon.awssdk.core;
    requires software.amazon.awssdk.awscore;
    requires org.slf4j;

    exports dev.sandboxkit.storage.s3;
}
