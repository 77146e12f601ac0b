package dev.sandboxkit.docker;

import com.github.dockerjava.api.DockerClient;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.SnapshotId;
import dev.sandboxkit.WarmPool;
import dev.sandboxkit.WorkspaceTemplate;
import dev.sandboxkit.docker.internal.files.FilesTestSupport;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Workdir templates through the public API on the real engine (issue 20, item 3): a new session starts with the
 * template's files and a resume never copies them again, a warm-pool slot is seeded before checkout, links in a
 * template are copied as links, a missing template fails cleanly; and forks racing onto one new id.
 */
@Tag("slow")
@DisplayName("Workdir templates on the real Docker engine")
class TemplatesOnDockerTest {
    private static final Duration TTL = Duration.ofMinutes(5);
    private static final Duration REAPER = Duration.ofSeconds(10);

    @TempDir
    Path tmp;
    private Path root;
    private Path template;
    private ManualClock clock;
    private ManualScheduler scheduler;
    private SessionStore store;
    private SandboxManager manager;
    private DockerClient docker;

    @BeforeEach
    void start() throws IOException {
        docker = ManagerOnDockerTest.EngineCheck.requireEngine();
        root = tmp.resolve("ws");
        template = Files.createDirectories(tmp.resolve("template"));
        Files.writeString(template.resolve("README.md"), "seeded\n");
        Files.createDirectories(template.resolve("src/pkg"));
        Files.writeString(template.resolve("src/pkg/main.py"), "print('hi')\n");
        Path run = Files.writeString(template.resolve("run.sh"), "#!/bin/sh\necho ran\n");
        Files.setPosixFilePermissions(run, PosixFilePermissions.fromString("rwxr-xr-x"));
        clock = new ManualClock();
        scheduler = new ManualScheduler(clock);
        store = SessionStore.inMemory();
        manager = newManager(List.of());
    }

    private SandboxManager newManager(List<WarmPool> pools) {
        SandboxManager.Builder b = SandboxManager.builder().driver("docker").workspaceRoot(root).store(store)
                .clock(clock).scheduler(scheduler).idleTimeout(TTL).reaperInterval(REAPER);
        pools.forEach(b::warmPool);
        return b.build();
    }

    @AfterEach
    void stop() {
        DockerTestSupport.closeAndCheckNothingLeft(manager, docker);
    }

    private static SandboxSpec.Builder spec() {
        return FilesTestSupport.spec();
    }

    private static String run(Sandbox sandbox, String script) {
        ExecResult r = sandbox.exec(ExecRequest.shell(script).withTimeout(Duration.ofMinutes(1)));
        assertThat(r.exitCode()).as("`%s` failed: %s%s", script, r.stdout(), r.stderr()).isZero();
        return r.stdout();
    }

    private List<String> containersOf(String sessionId) {
        return docker.listContainersCmd().withShowAll(true)
                .withLabelFilter(Map.of(SandboxLabels.SESSION, sessionId)).exec().stream()
                .map(com.github.dockerjava.api.model.Container::getId).toList();
    }

    /**
     * The workspace root's entries, by name, but the library's own (names starting with '.', which no session id can
     * take: the in-memory store's liveness lock under .sandboxkit, for one).
     */
    private List<String> rootEntries() throws IOException {
        if (!Files.exists(root)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(root)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> !n.startsWith(".")).sorted().toList();
        }
    }

    @Test
    @DisplayName("a new session starts with the template's files; a resume after a reap keeps the session's changes")
    void seedsOnceNeverOnResume() {
        SandboxSpec withTemplate = spec().template(WorkspaceTemplate.directory(template)).build();
        Sandbox s = manager.acquire("tmpl-once", withTemplate);

        assertThat(run(s, "cat /workspace/README.md /workspace/src/pkg/main.py")).isEqualTo("seeded\nprint('hi')\n");
        assertThat(run(s, "/workspace/run.sh")).isEqualTo("ran\n");
        // Owned by the sandbox user, who can change and delete it.
        run(s, "cd /workspace && test \"$(stat -c %u README.md)\" = \"$(id -u)\" && echo changed > README.md"
                + " && rm src/pkg/main.py && echo own > mine.txt");
        String first = s.info().sandboxId();

        scheduler.advance(TTL.plus(REAPER).plus(REAPER));
        assertThat(manager.session("tmpl-once").orElseThrow().state()).isEqualTo(SessionState.SUSPENDED);
        assertThat(containersOf("tmpl-once")).isEmpty();

        // The next exec resumes in a new container on the same workdir: nothing is copied again.
        assertThat(run(s, "cat /workspace/README.md /workspace/mine.txt")).isEqualTo("changed\nown\n");
        assertThat(s.exec(ExecRequest.shell("test -e /workspace/src/pkg/main.py")).exitCode()).isNotZero();
        assertThat(s.info().sandboxId()).isNotEqualTo(first);
        // A change to the template reaches new sessions only.
        assertThat(manager.acquire("tmpl-once", withTemplate).info().sandboxId()).isEqualTo(s.info().sandboxId());
        assertThat(run(s, "cat /workspace/README.md")).isEqualTo("changed\n");
    }

    @Test
    @DisplayName("a kept snapshot seeds new sessions, also on another manager sharing the store")
    void snapshotTemplate() {
        Sandbox golden = manager.acquire("tmpl-golden", spec().build());
        run(golden, "cd /workspace && mkdir -p deps && echo v1 > deps/lock && ln -s deps/lock lock-link");
        SnapshotId snap = manager.snapshot("tmpl-golden");
        manager.keepSnapshot(snap, true);
        manager.destroy("tmpl-golden"); // the kept snapshot outlives its session

        SandboxSpec fromSnapshot = spec().template(WorkspaceTemplate.snapshot(snap)).build();
        Sandbox a = manager.acquire("tmpl-snap-a", fromSnapshot);
        assertThat(run(a, "cat /workspace/deps/lock && readlink /workspace/lock-link")).isEqualTo("v1\ndeps/lock\n");
        run(a, "echo a > /workspace/deps/lock");

        // Another manager on the same store reads the template back from the stored spec.
        manager.close();
        manager = newManager(List.of());
        assertThat(manager.session("tmpl-snap-a").orElseThrow().spec().template())
                .isEqualTo(WorkspaceTemplate.snapshot(snap));
        Sandbox b = manager.acquire("tmpl-snap-b", fromSnapshot);
        assertThat(run(b, "cat /workspace/deps/lock")).isEqualTo("v1\n");
        assertThat(run(manager.acquire("tmpl-snap-a", fromSnapshot), "cat /workspace/deps/lock")).isEqualTo("a\n");
        manager.deleteSnapshot(snap);
    }

    @Test
    @DisplayName("a warm-pool slot holds the template's files before it is checked out")
    void poolSlotsAreSeeded() throws IOException {
        SandboxSpec withTemplate = spec().template(WorkspaceTemplate.directory(template)).build();
        manager.close();
        manager = newManager(List.of(WarmPool.of(withTemplate, 1)));
        assertThat(manager.stats().poolSize()).isEqualTo(1);
        List<String> slots = rootEntries().stream().filter(n -> n.startsWith("_pool.")).toList();
        assertThat(slots).hasSize(1);
        assertThat(Files.readString(root.resolve(slots.get(0)).resolve("README.md"))).isEqualTo("seeded\n");

        Sandbox s = manager.acquire("tmpl-pooled", withTemplate);

        assertThat(manager.stats().poolHits()).isEqualTo(1);
        assertThat(run(s, "cat /workspace/README.md && ls /workspace/src/pkg")).isEqualTo("seeded\nmain.py\n");
        // A spec without the template is another pool's (its fingerprint differs): a cold start, empty workdir.
        Sandbox plain = manager.acquire("tmpl-plain", spec().build());
        assertThat(manager.stats().poolHits()).isEqualTo(1);
        assertThat(run(plain, "ls -A /workspace")).isEmpty();
    }

    @Test
    @DisplayName("links in a template are copied as links and never followed; FIFOs are left out")
    void templateLinksAreNeverFollowed() throws Exception {
        Files.createSymbolicLink(template.resolve("etc"), Path.of("/etc"));
        Files.createSymbolicLink(template.resolve("passwd"), Path.of("/etc/passwd"));
        Files.createSymbolicLink(template.resolve("up"), Path.of("../.."));
        Process mkfifo = new ProcessBuilder("mkfifo", template.resolve("pipe").toString()).start();
        assertThat(mkfifo.waitFor()).isZero();

        Sandbox s = manager.acquire("tmpl-links", spec().template(WorkspaceTemplate.directory(template)).build());

        Path ws = Path.of(s.info().workspace());
        assertThat(Files.readSymbolicLink(ws.resolve("etc"))).isEqualTo(Path.of("/etc"));
        assertThat(Files.readSymbolicLink(ws.resolve("passwd"))).isEqualTo(Path.of("/etc/passwd"));
        assertThat(Files.readSymbolicLink(ws.resolve("up"))).isEqualTo(Path.of("../.."));
        assertThat(ws.resolve("pipe")).doesNotExist();
        try (Stream<Path> all = Files.walk(ws)) { // walk does not follow links: nothing of /etc came in
            assertThat(all.count()).isEqualTo(9); // ws, README.md, src, src/pkg, main.py, run.sh, etc, passwd, up
        }
        assertThat(run(s, "readlink /workspace/etc")).isEqualTo("/etc\n");

        // A template that is itself a link is refused, not followed.
        Path linked = Files.createSymbolicLink(tmp.resolve("linked-template"), template);
        assertThatThrownBy(() -> manager.acquire("tmpl-linked", spec().template(WorkspaceTemplate.directory(linked))
                .build())).isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("symbolic link");
        assertThat(manager.session("tmpl-linked")).isEmpty();
        assertThat(rootEntries()).doesNotContain("tmpl-linked");
    }

    @Test
    @DisplayName("a missing template fails the acquire with a configuration error and leaves nothing behind")
    void missingTemplateFailsCleanly() throws IOException {
        SandboxSpec noDir = spec().template(WorkspaceTemplate.directory(tmp.resolve("no-such-dir"))).build();
        assertThatThrownBy(() -> manager.acquire("tmpl-missing-dir", noDir))
                .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("no-such-dir");

        SnapshotId gone = SnapshotId.random();
        SandboxSpec noSnapshot = spec().template(WorkspaceTemplate.snapshot(gone)).build();
        assertThatThrownBy(() -> manager.acquire("tmpl-missing-snap", noSnapshot))
                .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining(gone.value())
                .hasMessageContaining("keepSnapshot");

        for (String id : List.of("tmpl-missing-dir", "tmpl-missing-snap")) {
            assertThat(manager.session(id)).as(id).isEmpty();
            assertThat(containersOf(id)).as(id).isEmpty();
        }
        assertThat(rootEntries()).isEmpty();
        assertThat(manager.stats().active()).isZero();
        // Once the template exists, the same id is created normally.
        Files.createDirectories(tmp.resolve("no-such-dir"));
        Files.writeString(tmp.resolve("no-such-dir/late.txt"), "late\n");
        assertThat(run(manager.acquire("tmpl-missing-dir", noDir), "cat /workspace/late.txt")).isEqualTo("late\n");
    }

    @Test
    @DisplayName("forks racing onto one new id, and a fork racing an acquire: one wins, nothing leaks")
    void forksRacingOntoOneId() throws Exception {
        Sandbox one = manager.acquire("race-src-1", spec().build());
        Sandbox two = manager.acquire("race-src-2", spec().build());
        run(one, "echo one > /workspace/origin && mkdir /workspace/only-one");
        run(two, "echo two > /workspace/origin && mkdir /workspace/only-two");

        for (int round = 0; round < 3; round++) {
            String target = "race-fork-" + round;
            List<Object> outcomes = race(() -> manager.fork("race-src-1", target),
                    () -> manager.fork("race-src-2", target));
            assertThat(outcomes.stream().filter(o -> o instanceof Sandbox)).as("winners").hasSize(1);
            assertThat(outcomes.stream().filter(o -> o instanceof SandboxAcquireException))
                    .as("losers, told that the session exists").hasSize(1)
                    .allSatisfy(o -> assertThat(((Exception) o)).hasMessageContaining("exists already"));
            Sandbox fork = (Sandbox) outcomes.stream().filter(o -> o instanceof Sandbox).findFirst().orElseThrow();
            // The fork is a whole copy of one source, never a mix of both.
            String origin = run(fork, "cat /workspace/origin").trim();
            assertThat(run(fork, "ls -A /workspace")).isEqualTo("only-" + origin + "\norigin\n");
            assertThat(containersOf(target)).hasSize(1);
        }

        String target = "race-fork-acquire";
        List<Object> outcomes = race(() -> manager.fork("race-src-1", target),
                () -> manager.acquire(target, spec().label("race", "acquire").build()));
        assertThat(outcomes.get(1)).as("the acquire always gets the session").isInstanceOf(Sandbox.class);
        Sandbox acquired = (Sandbox) outcomes.get(1);
        if (outcomes.get(0) instanceof Sandbox) {
            // The fork came first; the acquire then replaced its container on the forked workdir.
            assertThat(run(acquired, "cat /workspace/origin")).isEqualTo("one\n");
        } else {
            assertThat(outcomes.get(0)).isInstanceOf(SandboxAcquireException.class);
            assertThat(run(acquired, "ls -A /workspace")).isEmpty();
        }
        assertThat(containersOf(target)).hasSize(1);

        // No extra workdir, slot or snapshot anywhere.
        assertThat(rootEntries()).containsExactlyInAnyOrder("race-src-1", "race-src-2", "race-fork-0", "race-fork-1",
                "race-fork-2", target);
        assertThat(manager.snapshots("race-src-1")).isEmpty();
        assertThat(manager.snapshots("race-src-2")).isEmpty();
        assertThat(manager.stats().active()).isEqualTo(6);
    }

    /** Runs both at once; each outcome is the call's result or the exception it threw. */
    private static List<Object> race(Supplier<Sandbox> a, Supplier<Sandbox> b) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        CyclicBarrier go = new CyclicBarrier(2);
        try {
            List<Future<Object>> futures = new ArrayList<>();
            for (Supplier<Sandbox> call : List.of(a, b)) {
                futures.add(pool.submit(() -> {
                    go.await(30, TimeUnit.SECONDS);
                    try {
                        return call.get();
                    } catch (RuntimeException e) {
                        return e;
                    }
                }));
            }
            List<Object> outcomes = new ArrayList<>();
            for (Future<Object> f : futures) {
                outcomes.add(f.get(2, TimeUnit.MINUTES));
            }
            return outcomes;
        } finally {
            pool.shutdownNow();
        }
    }
}
