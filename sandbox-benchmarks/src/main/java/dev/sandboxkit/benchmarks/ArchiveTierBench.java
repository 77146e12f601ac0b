package dev.sandboxkit.benchmarks;

import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.storage.s3.S3ArchiveStore;
import org.gaul.s3proxy.AuthenticationType;
import org.gaul.s3proxy.S3Proxy;
import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStoreContext;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.core.sync.ResponseTransformer;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Object;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

/**
 * B11: the archive tier against its floor, the same tree packed with {@code tar | gzip -6} and put with the same
 * S3 client into the same s3proxy, restored by a get and {@code gunzip | tar -x}. Interleaved, the order
 * alternating every round.
 */
final class ArchiveTierBench {
    private static final String BUCKET = "b11";
    private static final String ACCESS = "bench-access";
    private static final String SECRET = "bench-secret";
    private static final int FILE_BYTES = 8 * 1024;
    private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    private final Report report;
    private final Path scratch;
    private final SandboxManager.Builder builder;
    private final SandboxSpec spec;
    private final int files;
    private final int rounds;

    ArchiveTierBench(Report report, Path scratch, SandboxManager.Builder builder, SandboxSpec spec, boolean quick) {
        this.report = report;
        this.scratch = scratch;
        this.builder = builder;
        this.spec = spec;
        this.files = quick ? 1_280 : 12_800; // 8 KiB each: 10 MiB in quick mode, 100 MiB in full
        this.rounds = quick ? 3 : 5; // a full round moves 100 MiB four times: minutes on a loaded machine
    }

    void run() throws Exception {
        String load0 = BenchmarkMain.Machine.loadAverage();
        Samples libArchive = new Samples("library archiveIdle() (pack + SHA-256 + MD5 + put + HEAD + local delete)");
        Samples floorArchive = new Samples("floor: `tar -cf - . | gzip -6` to a file + put");
        Samples floorPack = new Samples("floor, part: `tar | gzip -6` alone");
        Samples floorPut = new Samples("floor, part: put alone");
        Samples libRestore = new Samples("library restore: the resume's `archive-restore` phase");
        Samples libAcquire = new Samples("library acquire of the archived session (restore + container start)");
        Samples floorRestore = new Samples("floor: get to a file + `gzip -dc | tar -xf -` into an empty dir");
        Samples floorGet = new Samples("floor, part: get alone");
        Samples floorUnpack = new Samples("floor, part: `gzip -dc | tar -x` alone");
        Samples rm = new Samples("reference: `rm -rf` of the unpacked tree (the library's archive deletes its workdir, "
                + "the floor does not)");
        Path s3dir = Files.createDirectories(scratch.resolve("b11-s3"));
        S3Proxy proxy = startS3(s3dir);
        long libBytes = -1;
        long floorBytes = -1;
        try (S3Client client = client(proxy.getPort())) {
            client.createBucket(r -> r.bucket(BUCKET));
            S3ArchiveStore store = S3ArchiveStore.builder().client(client).bucket(BUCKET).prefix("lib/").build();
            Path source = scratch.resolve("b11-floor-src");
            writeTree(source);
            BenchmarkMain.JumpClock clock = new BenchmarkMain.JumpClock();
            Duration ttl = Duration.ofHours(1);
            List<SandboxEvent> events = new CopyOnWriteArrayList<>();
            try (SandboxManager m = builder.clock(clock).idleTimeout(ttl).reaperInterval(Duration.ofMillis(20))
                    .reconcileInterval(Duration.ofHours(1)) // no periodic archive pass: only the timed one
                    .archive(store, Duration.ofMillis(1)).listener(events::add).build()) {
                m.acquire("b11", spec);
                Path workdir = Path.of(m.session("b11").orElseThrow().workspace());
                writeTree(workdir);
                for (int round = -1; round < rounds; round++) { // round -1 warms up and is not counted
                    boolean count = round >= 0;
                    long reaped = events.stream().filter(e -> e instanceof SandboxEvent.IdleReaped).count();
                    clock.jump(ttl.plusSeconds(1)); // the session idles past its TTL and is suspended
                    while (events.stream().filter(e -> e instanceof SandboxEvent.IdleReaped).count() == reaped) {
                        Thread.sleep(5);
                    }
                    Path packed = scratch.resolve("b11-floor.tar.gz");
                    BenchmarkMain.ThrowingRunnable lib = () -> {
                        long t = BenchmarkMain.timeChecked(() -> {
                            if (m.archiveIdle() != 1) {
                                throw new IllegalStateException("archiveIdle did not archive the session");
                            }
                        });
                        if (count) {
                            libArchive.add(t);
                        }
                    };
                    BenchmarkMain.ThrowingRunnable floor = () -> {
                        long t0 = System.nanoTime();
                        sh("tar -C '" + source + "' -cf - . | gzip -6 > '" + packed + "'");
                        long t1 = System.nanoTime();
                        long size = Files.size(packed);
                        client.putObject(r -> r.bucket(BUCKET).key("floor/tree.tar.gz").contentLength(size)
                                .contentType("application/gzip"), RequestBody.fromFile(packed));
                        long t2 = System.nanoTime();
                        if (count) {
                            floorArchive.add(t2 - t0);
                            floorPack.add(t1 - t0);
                            floorPut.add(t2 - t1);
                        }
                    };
                    alternate(round, lib, floor);
                    if (Files.exists(workdir)) {
                        throw new IllegalStateException("the archived workdir is still there: " + workdir);
                    }
                    floorBytes = Files.size(packed);
                    Files.delete(packed);
                    libBytes = client.listObjectsV2(r -> r.bucket(BUCKET).prefix("lib/")).contents().stream()
                            .filter(o -> !o.key().endsWith("/")).mapToLong(S3Object::size).sum();

                    Path got = scratch.resolve("b11-floor-got.tar.gz");
                    Path into = scratch.resolve("b11-floor-out");
                    lib = () -> {
                        int before = events.size();
                        long t = BenchmarkMain.timeChecked(() -> m.acquire("b11", spec));
                        Duration phase = events.subList(before, events.size()).stream()
                                .filter(e -> e instanceof SandboxEvent.Resumed).map(e -> (SandboxEvent.Resumed) e)
                                .map(e -> e.phases().get("archive-restore")).filter(p -> p != null).findFirst()
                                .orElseThrow(() -> new IllegalStateException("no archive-restore phase"));
                        if (count) {
                            libAcquire.add(t);
                            libRestore.add(phase.toNanos());
                        }
                    };
                    floor = () -> {
                        Files.createDirectories(into);
                        long t0 = System.nanoTime();
                        client.getObject(r -> r.bucket(BUCKET).key("floor/tree.tar.gz"), ResponseTransformer.toFile(got));
                        long t1 = System.nanoTime();
                        sh("gzip -dc '" + got + "' | tar -C '" + into + "' -xf -");
                        long t2 = System.nanoTime();
                        if (count) {
                            floorRestore.add(t2 - t0);
                            floorGet.add(t1 - t0);
                            floorUnpack.add(t2 - t1);
                        }
                    };
                    alternate(round, lib, floor);
                    if (round == -1) { // both restores are whole: as many files and bytes as written
                        check(workdir);
                        check(into);
                    }
                    Files.delete(got);
                    long t = BenchmarkMain.timeChecked(() -> sh("rm -rf '" + into + "'"));
                    if (count) {
                        rm.add(t);
                    }
                }
                m.destroy("b11");
            } finally {
                deleteTree(source);
            }
        } finally {
            proxy.stop();
            deleteTree(s3dir);
        }
        long raw = (long) files * FILE_BYTES;
        report.note(String.format(Locale.ROOT, "B11: %d files of %d KiB (%.0f MiB) in %d directories two levels deep; "
                        + "content random base64 text (6 bits of entropy a byte), which gzip -6 packs to %.0f%% "
                        + "(floor: %.1f MiB, library: %.1f MiB). s3proxy 2.6.0 with the filesystem backend in this JVM, "
                        + "AWS SDK v2 UrlConnectionHttpClient on loopback. The library's archive also computes the MD5 "
                        + "for Content-MD5, HEADs the object and deletes the local workdir; the floor does none of that.",
                files, FILE_BYTES / 1024, raw / 1048576.0, files / 128 + files / 1280, 100.0 * floorBytes / raw,
                floorBytes / 1048576.0, libBytes / 1048576.0));
        report.section("B11 archive tier: " + (raw >> 20) + " MiB of " + files + " small files to S3 (s3proxy) and back",
                "Library archive and restore each ≤ 1.2× the floor (`tar | gzip -6` + put; get + `gunzip | tar -x`). "
                        + BenchmarkMain.loadText(load0),
                List.of(libArchive, floorArchive, floorPack, floorPut, libRestore, libAcquire, floorRestore, floorGet,
                        floorUnpack, rm),
                List.of(Report.goal("library archive / floor", libArchive, floorArchive, 1.2),
                        Report.goal("library restore phase / floor", libRestore, floorRestore, 1.2)));
    }

    /** Runs the two in turns, the library first on even rounds. */
    static void alternate(int round, BenchmarkMain.ThrowingRunnable lib, BenchmarkMain.ThrowingRunnable floor)
            throws Exception {
        if (Math.floorMod(round, 2) == 0) {
            lib.run();
            floor.run();
        } else {
            floor.run();
            lib.run();
        }
    }

    private void writeTree(Path root) throws IOException {
        writeTree(root, files);
    }

    /** {@code files} files of 8 KiB random base64 text, 128 to a directory, ten directories to a parent. */
    static void writeTree(Path root, int files) throws IOException {
        byte[] buf = new byte[FILE_BYTES];
        for (int i = 0; i < files; i++) {
            SplittableRandom random = new SplittableRandom(i); // the same tree each time it is written
            for (int k = 0; k < buf.length; k++) {
                buf[k] = k % 77 == 76 ? (byte) '\n' : (byte) ALPHABET.charAt(random.nextInt(64));
            }
            Path dir = root.resolve(String.format(Locale.ROOT, "d%02d/e%d", i / 1280, (i / 128) % 10));
            if (i % 128 == 0) {
                Files.createDirectories(dir);
            }
            try (OutputStream out = Files.newOutputStream(dir.resolve(String.format(Locale.ROOT, "f%05d.txt", i)))) {
                out.write(buf);
            }
        }
    }

    private void check(Path root) throws IOException {
        check(root, files);
    }

    /** Checks that {@code root} holds {@code files} regular files of 8 KiB, wherever they are. */
    static void check(Path root, int files) throws IOException {
        long[] seen = new long[2];
        try (Stream<Path> walk = Files.walk(root)) {
            walk.filter(Files::isRegularFile).forEach(p -> {
                seen[0]++;
                seen[1] += p.toFile().length();
            });
        }
        if (seen[0] != files || seen[1] != (long) files * FILE_BYTES) {
            throw new IllegalStateException(root + " holds " + seen[0] + " files, " + seen[1] + " bytes; expected "
                    + files + " files");
        }
    }

    static void sh(String script) throws Exception {
        Process p = new ProcessBuilder("sh", "-c", "set -e; " + script).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            throw new IllegalStateException("`" + script + "` failed: " + out);
        }
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            List<Path> all = new ArrayList<>(walk.sorted(Comparator.reverseOrder()).toList());
            for (Path p : all) {
                Files.delete(p);
            }
        }
    }

    private static S3Proxy startS3(Path dir) throws Exception {
        Properties p = new Properties();
        p.setProperty("jclouds.filesystem.basedir", dir.toString());
        BlobStoreContext context = ContextBuilder.newBuilder("filesystem").overrides(p).build(BlobStoreContext.class);
        S3Proxy proxy = S3Proxy.builder().blobStore(context.getBlobStore()).endpoint(URI.create("http://127.0.0.1:0"))
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

    private static S3Client client(int port) {
        return S3Client.builder().endpointOverride(URI.create("http://127.0.0.1:" + port)).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS, SECRET)))
                .forcePathStyle(true).httpClient(UrlConnectionHttpClient.create())
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED).build();
    }
}
