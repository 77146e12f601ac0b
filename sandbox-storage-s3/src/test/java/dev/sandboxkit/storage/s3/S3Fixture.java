package dev.sandboxkit.storage.s3;

import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxSpec;
import org.gaul.s3proxy.AuthenticationType;
import org.gaul.s3proxy.S3Proxy;
import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStoreContext;
import org.postgresql.ds.PGSimpleDataSource;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

import java.net.URI;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What the S3 tests run against, all real and on loopback: s3proxy (a Java S3 server, filesystem backend) in this
 * JVM, and the test PostgreSQL of scripts/setup-postgres.sh (unreachable: the test fails).
 */
final class S3Fixture {
    static final String BUCKET = "archives";
    static final String ACCESS = "test-access";
    static final String SECRET = "test-secret";
    static final SandboxSpec SPEC = SandboxSpec.builder()
            .image(System.getProperty("sandboxkit.test.image", "sandboxkit-test:latest")).pullPolicy(PullPolicy.NEVER)
            .build();
    private static final String PG_URL = setting("sandboxkit.test.postgres.url", "SANDBOXKIT_PG_URL",
            "jdbc:postgresql://127.0.0.1:54329/sandboxkit_test");
    private static final String PG_USER = setting("sandboxkit.test.postgres.user", "SANDBOXKIT_PG_USER", "postgres");
    private static final String PG_PASSWORD = setting("sandboxkit.test.postgres.password", "SANDBOXKIT_PG_PASSWORD",
            "sandboxkit");
    private static final AtomicInteger SCHEMAS = new AtomicInteger();

    private S3Fixture() {
    }

    private static String setting(String property, String env, String fallback) {
        String value = System.getProperty(property);
        if (value == null || value.isBlank()) {
            value = System.getenv(env);
        }
        return value == null || value.isBlank() ? fallback : value;
    }

    /** Starts s3proxy on {@code port} (0: any) over the objects in {@code dir}. */
    static S3Proxy startS3(Path dir, int port) throws Exception {
        Properties p = new Properties();
        p.setProperty("jclouds.filesystem.basedir", dir.toString());
        BlobStoreContext context = ContextBuilder.newBuilder("filesystem").overrides(p).build(BlobStoreContext.class);
        S3Proxy proxy = S3Proxy.builder().blobStore(context.getBlobStore())
                .endpoint(URI.create("http://127.0.0.1:" + port))
                .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS, SECRET)
                .v4MaxNonChunkedRequestSize(1L << 30).build();
        proxy.start();
        long until = System.nanoTime() + 30_000_000_000L;
        while (!"STARTED".equals(proxy.getState())) {
            if (System.nanoTime() > until) {
                throw new IllegalStateException("s3proxy did not start: " + proxy.getState());
            }
            Thread.sleep(10);
        }
        return proxy;
    }

    /** A client for an S3-compatible server on loopback (path style, checksums only when required). */
    static S3Client client(int port) {
        return S3Client.builder().endpointOverride(URI.create("http://127.0.0.1:" + port)).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS, SECRET)))
                .forcePathStyle(true).httpClient(UrlConnectionHttpClient.create())
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED).build();
    }

    static String pgUrl() {
        return PG_URL;
    }

    /** A data source on a fresh schema of the test PostgreSQL. */
    static PGSimpleDataSource freshSchema() {
        String schema = "s3_" + ProcessHandle.current().pid() + "_" + SCHEMAS.incrementAndGet();
        PGSimpleDataSource admin = dataSource(null);
        try (Connection c = admin.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            s.execute("CREATE SCHEMA " + schema);
        } catch (SQLException e) {
            throw new AssertionError("PostgreSQL is not reachable at " + PG_URL + " as " + PG_USER
                    + " (start it with scripts/setup-postgres.sh): " + e.getMessage(), e);
        }
        return dataSource(schema);
    }

    static PGSimpleDataSource dataSource(String schema) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(PG_URL);
        ds.setUser(PG_USER);
        ds.setPassword(PG_PASSWORD);
        ds.setConnectTimeout(5);
        if (schema != null) {
            ds.setCurrentSchema(schema);
        }
        return ds;
    }
}
