package dev.sandboxkit.storage.s3;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.ArchiveDigests;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.store.jdbc.JdbcSessionStore;
import org.gaul.s3proxy.S3Proxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Object;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The archive tier against a real S3 server (s3proxy on loopback) and a shared PostgreSQL store (issue 20). Two
 * managers with their own workspace roots stand in for two hosts: a session idles on A, is archived, resumes on
 * B with every file intact (hash of the tree), and is archived again from B. Failures: the uploading JVM killed
 * mid-upload, the object store down during a restore, a corrupted archive. Each ends with the workdir intact
 * somewhere and, where the caller sees it, a typed retryable error.
 */
@Tag("s3")
@DisplayName("S3 archive tier (s3proxy + PostgreSQL + Docker)")
class S3ArchiveTest {
    private static final Duration TIMEOUT = Duration.ofMinutes(2);
    /** Every entry's type and mode, each link's target and each file's hash, sorted (directory sizes vary by filesystem). */
    private static final String TREE_HASH = "cd /workspace && find . -mindepth 1 | sort | while read -r p; do"
            + " if [ -L \"$p\" ]; then echo \"$p -> $(readlink \"$p\")\"; else stat -c '%n %F %a' \"$p\"; fi;"
            + " if [ -f \"$p\" ] && [ ! -L \"$p\" ]; then md5sum < \"$p\"; fi; done | sha256sum";
    private static final String TREE = "cd /workspace && mkdir -p app/lib/deep empty && chmod 700 app/lib"
            + " && dd if=/dev/urandom of=app/blob bs=1024 count=3000 2>/dev/null"
            + " && i=0; while [ $i -lt 200 ]; do echo \"file $i\" > app/lib/deep/f$i; i=$((i+1)); done"
            + " && ln -s lib/deep/f1 app/link && ln -s /usr/bin/env app/abs && echo '#!/bin/sh' > app/run"
            + " && chmod 755 app/run";

    @TempDir
    Path tmp;
    private S3Proxy s3;
    private int s3Port;
    private S3Client client;
    private S3ArchiveStore archive;
    private String schema;
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final List<SandboxEvent> events = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        s3 = S3Fixture.startS3(tmp.resolve("s3"), 0);
        s3Port = s3.getPort();
        client = S3Fixture.client(s3Port);
        client.createBucket(r -> r.bucket(S3Fixture.BUCKET));
        archive = S3ArchiveStore.builder().client(client).bucket(S3Fixture.BUCKET).prefix("fleet-1/").build();
        PGSimpleDataSource ds = S3Fixture.freshSchema();
        schema = ds.getCurrentSchema();
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        client.close();
        s3.stop();
    }

    private JdbcSessionStore store() {
        JdbcSessionStore store = JdbcSessionStore.create(S3Fixture.dataSource(schema));
        toClose.add(store);
        return store;
    }

    private SandboxManager manager(String host, Duration archiveAfter) {
        SandboxManager m = SandboxManager.builder().driver("docker").workspaceRoot(tmp.resolve("root-" + host))
                .instanceId("host-" + host).store(store()).archive(archive, archiveAfter)
                .leaseDuration(Duration.ofSeconds(2)).reconcileInterval(Duration.ofHours(1)).listener(events::add)
                .build();
        toClose.add(m);
        return m;
    }

    private static String run(Sandbox sandbox, String script) {
        ExecResult r = sandbox.exec(ExecRequest.shell(script).withTimeout(TIMEOUT));
        assertThat(r.exitCode()).as("`%s` failed: %s%s", script, r.stdout(), r.stderr()).isZero();
        return r.stdout();
    }

    private SessionRecord record(String sessionId) {
        try (JdbcSessionStore s = JdbcSessionStore.create(S3Fixture.dataSource(schema))) {
            return s.find(sessionId).orElseThrow();
        }
    }

    private List<String> objects() {
        return client.listObjectsV2(r -> r.bucket(S3Fixture.BUCKET)).contents().stream().map(S3Object::key)
                .filter(k -> !k.endsWith("/")).toList(); // s3proxy's filesystem backend lists its directories too
    }

    /** Writes the tree, then closes the manager (the session is suspended) and returns the tree's hash. */
    private String idle(SandboxManager m, String sessionId) {
        Sandbox s = m.acquire(sessionId, S3Fixture.SPEC);
        run(s, TREE);
        String hash = run(s, TREE_HASH);
        m.close();
        assertThat(record(sessionId).state()).isEqualTo(SessionState.SUSPENDED);
        return hash;
    }

    @Test
    @DisplayName("a session idles on A, is archived to S3, resumes on B byte for byte and is archived again from B")
    void handOffAcrossHosts() {
        String hash = idle(manager("a", Duration.ofMillis(1)), "s3-move");
        SandboxManager a = manager("a", Duration.ofMillis(1));
        assertThat(a.archiveIdle()).isEqualTo(1);
        assertThat(tmp.resolve("root-a").resolve("s3-move")).doesNotExist();
        SessionRecord archived = record("s3-move");
        assertThat(objects()).containsExactly("fleet-1/s3-move/" + archived.attributes().get("archive.sha256")
                + ".tar.gz");
        assertThat(client.headObject(r -> r.bucket(S3Fixture.BUCKET).key(objects().get(0))).metadata())
                .containsEntry("sha256", archived.attributes().get("archive.sha256"));

        SandboxManager b = manager("b", Duration.ofMillis(1));
        Sandbox onB = b.acquire("s3-move", S3Fixture.SPEC);
        assertThat(run(onB, TREE_HASH)).isEqualTo(hash);
        assertThat(record("s3-move").workspace()).startsWith(tmp.resolve("root-b").toString());
        assertThat(objects()).isEmpty();
        assertThat(events.stream().filter(SandboxEvent.Resumed.class::isInstance).map(SandboxEvent.Resumed.class::cast)
                .filter(e -> e.sessionId().equals("s3-move")).findFirst().orElseThrow().phases())
                .containsKey("archive-restore");

        run(onB, "echo from-b > /workspace/app/b");
        String changed = run(onB, TREE_HASH);
        b.close();
        SandboxManager b2 = manager("b", Duration.ofMillis(1));
        assertThat(b2.archiveIdle()).isEqualTo(1);
        assertThat(tmp.resolve("root-b").resolve("s3-move")).doesNotExist();
        assertThat(objects()).hasSize(1);
        assertThat(run(manager("a", Duration.ofHours(1)).acquire("s3-move", S3Fixture.SPEC), TREE_HASH))
                .isEqualTo(changed);
    }

    @Test
    @DisplayName("the store down during a restore: a retryable error, the archive stays; it resumes once the store is back")
    void storeDownDuringRestore() throws Exception {
        String hash = idle(manager("a", Duration.ofMillis(1)), "s3-down");
        assertThat(manager("a", Duration.ofMillis(1)).archiveIdle()).isEqualTo(1);
        SandboxManager b = manager("b", Duration.ofHours(1));

        s3.stop();
        for (int i = 0; i < 2; i++) {
            assertThatThrownBy(() -> b.acquire("s3-down", S3Fixture.SPEC))
                    .isInstanceOf(SandboxUnavailableException.class)
                    .satisfies(e -> assertThat(((SandboxUnavailableException) e).isRetryable()).isTrue());
            assertThat(record("s3-down").attributes()).containsEntry("archive.state", "archived");
            assertThat(record("s3-down").owner()).isNull();
        }
        s3 = S3Fixture.startS3(tmp.resolve("s3"), s3Port);

        assertThat(run(b.acquire("s3-down", S3Fixture.SPEC), TREE_HASH)).isEqualTo(hash);
    }

    @Test
    @DisplayName("a corrupted archive (wrong hash) is refused with a retryable error and never unpacked")
    void corruptedArchive() {
        String hash = idle(manager("a", Duration.ofMillis(1)), "s3-corrupt");
        assertThat(manager("a", Duration.ofMillis(1)).archiveIdle()).isEqualTo(1);
        String key = objects().get(0);
        byte[] good = client.getObjectAsBytes(r -> r.bucket(S3Fixture.BUCKET).key(key)).asByteArray();
        byte[] bad = good.clone();
        bad[bad.length / 3] ^= 0x21;
        client.putObject(r -> r.bucket(S3Fixture.BUCKET).key(key), RequestBody.fromBytes(bad));
        SandboxManager b = manager("b", Duration.ofHours(1));

        assertThatThrownBy(() -> b.acquire("s3-corrupt", S3Fixture.SPEC))
                .isInstanceOf(SandboxUnavailableException.class).hasMessageContaining("SHA-256")
                .satisfies(e -> assertThat(((SandboxUnavailableException) e).isRetryable()).isTrue());
        assertThat(record("s3-corrupt").attributes()).containsEntry("archive.state", "archived");
        assertThat(tmp.resolve("root-b").resolve("s3-corrupt")).doesNotExist();

        client.putObject(r -> r.bucket(S3Fixture.BUCKET).key(key), RequestBody.fromBytes(good));
        assertThat(run(b.acquire("s3-corrupt", S3Fixture.SPEC), TREE_HASH)).isEqualTo(hash);
    }

    @Test
    @DisplayName("the uploading JVM killed mid-upload (kill -9): the workdir stays, the session resumes once its lease lapses")
    void uploaderKilledMidUpload() throws Exception {
        String hash = idle(manager("a", Duration.ofHours(1)), "s3-kill");
        Path root = tmp.resolve("root-a");
        try (StallingProxy proxy = new StallingProxy(s3Port, 1 << 20)) {
            String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            Process worker = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", classpath, ArchiveWorker.class.getName(), schema, root.toString(),
                    Integer.toString(proxy.port())).redirectErrorStream(true).start();
            try {
                List<String> output = new CopyOnWriteArrayList<>();
                Thread reader = new Thread(() -> new BufferedReader(new InputStreamReader(worker.getInputStream(),
                        StandardCharsets.UTF_8)).lines().forEach(output::add));
                reader.setDaemon(true);
                reader.start();
                assertThat(proxy.stalled().await(60, TimeUnit.SECONDS)).as("upload started: %s", output).isTrue();
                assertThat(record("s3-kill").attributes()).containsEntry("archive.state", "uploading");
                worker.destroyForcibly(); // SIGKILL: no shutdown hook, no cleanup
                assertThat(worker.waitFor(30, TimeUnit.SECONDS)).isTrue();
                assertThat(output).as("the worker's output").noneMatch(l -> l.startsWith("DONE"));
            } finally {
                worker.destroyForcibly();
            }
        }
        assertThat(root.resolve("s3-kill").resolve("app").resolve("blob")).exists();
        assertThat(record("s3-kill").owner()).isEqualTo("worker");

        SandboxManager a = manager("a", Duration.ofHours(1));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Sandbox resumed = null;
        int refused = 0;
        while (resumed == null) {
            try {
                resumed = a.acquire("s3-kill", S3Fixture.SPEC);
            } catch (SandboxAcquireException leaseStillLive) {
                refused++;
                assertThat(leaseStillLive.isRetryable()).isTrue();
                assertThat(leaseStillLive).hasMessageContaining("workdir of session s3-kill is being archived by"
                        + " live manager worker");
                assertThat(System.nanoTime() - until).as("the dead uploader's lease lapses").isNegative();
                Thread.sleep(200);
            }
        }
        assertThat(refused).as("acquires refused while the dead uploader's lease ran").isPositive();
        assertThat(run(resumed, TREE_HASH)).isEqualTo(hash);
        assertThat(record("s3-kill").attributes()).doesNotContainKeys("archive.state", "archive.key");
        assertThat(objects()).as("no partial object").isEmpty();
    }

    @Test
    @DisplayName("destroying an archived session deletes its object")
    void destroyDeletesTheObject() {
        idle(manager("a", Duration.ofMillis(1)), "s3-destroy");
        assertThat(manager("a", Duration.ofMillis(1)).archiveIdle()).isEqualTo(1);
        assertThat(objects()).hasSize(1);
        manager("b", Duration.ofHours(1)).destroy("s3-destroy");
        assertThat(record("s3-destroy").state()).isEqualTo(SessionState.DESTROYED);
        assertThat(objects()).isEmpty();
    }

    @Test
    @DisplayName("a put is checked by the server: a Content-MD5 that does not match stores nothing; the put without digests computes them")
    void putIsVerifiedByTheServer() throws Exception {
        byte[] bytes = new byte[300_000];
        new java.util.Random(7).nextBytes(bytes);
        Path file = tmp.resolve("object.bin");
        java.nio.file.Files.write(file, bytes);
        java.util.HexFormat hex = java.util.HexFormat.of();
        String sha = hex.formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(bytes));
        String md5 = hex.formatHex(java.security.MessageDigest.getInstance("MD5").digest(bytes));

        archive.put("t/plain", file, sha);
        archive.put("t/digests", file, new ArchiveDigests(bytes.length, sha, md5));
        for (String key : List.of("t/plain", "t/digests")) {
            Path back = tmp.resolve("back");
            archive.get(key, back);
            assertThat(java.nio.file.Files.readAllBytes(back)).as(key).isEqualTo(bytes);
        }
        String wrongMd5 = "0".repeat(32);
        assertThatThrownBy(() -> archive.put("t/bad-md5", file, new ArchiveDigests(bytes.length, sha, wrongMd5)))
                .isInstanceOf(SandboxException.class).hasMessageContaining("upload");
        assertThatThrownBy(() -> archive.put("t/bad-sha", file, "0".repeat(64)))
                .isInstanceOf(SandboxException.class).hasMessageContaining("has SHA-256 " + sha);
        assertThat(objects()).containsExactlyInAnyOrder("fleet-1/t/plain", "fleet-1/t/digests");
    }
}
