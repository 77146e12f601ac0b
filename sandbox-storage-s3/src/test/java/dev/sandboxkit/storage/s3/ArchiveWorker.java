package dev.sandboxkit.storage.s3;

import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.store.jdbc.JdbcSessionStore;

import java.nio.file.Path;
import java.time.Duration;

/**
 * A second JVM that archives: {@code schema root s3Port}. It prints {@code READY}, runs one archive pass and
 * prints {@code DONE n}; the test kills it with SIGKILL while its upload is stalled. Its lease (6 s, renewed
 * every 2 s) outlives the kill by at least 4 s, so the test sees resumes refused before it lapses.
 */
public final class ArchiveWorker {
    private ArchiveWorker() {
    }

    public static void main(String[] args) {
        String schema = args[0];
        Path root = Path.of(args[1]);
        int port = Integer.parseInt(args[2]);
        S3ArchiveStore archive = S3ArchiveStore.builder().client(S3Fixture.client(port)).bucket(S3Fixture.BUCKET)
                .build();
        try (SandboxManager m = SandboxManager.builder().driver("docker").workspaceRoot(root).instanceId("worker")
                .store(JdbcSessionStore.create(S3Fixture.dataSource(schema))).leaseDuration(Duration.ofSeconds(6))
                .archive(archive, Duration.ofMillis(1)).reconcileInterval(Duration.ofHours(1)).build()) {
            System.out.println("READY");
            System.out.println("DONE " + m.archiveIdle());
        }
    }
}
