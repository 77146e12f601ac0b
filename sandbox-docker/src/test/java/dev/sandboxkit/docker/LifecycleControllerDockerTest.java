package dev.sandboxkit.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Container;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.WarmPool;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.spi.SessionStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue #6 on the real engine: single-use sandboxes, the lifetime janitor, the warm pool and the rule that
 * another live manager's containers are never touched. Checked from outside with docker-java by label.
 */
@Tag("slow")
@DisplayName("Ephemeral sandboxes, lifetime janitor, warm pool and orphan safety on the real engine")
class LifecycleControllerDockerTest {
    private static final String IMAGE = System.getProperty("sandboxkit.test.image", "sandboxkit-test:latest");
    private static final SandboxSpec SPEC = SandboxSpec.builder().image(IMAGE).pullPolicy(PullPolicy.NEVER).build();
    private static DockerClient docker;

    @TempDir
    Path root;

    @BeforeAll
    static void engine() {
        docker = ManagerOnDockerTest.EngineCheck.requireEngine();
    }

    @AfterAll
    static void closeEngine() throws Exception {
        docker.close();
    }

    private SandboxManager.Builder manager() {
        return SandboxManager.builder().driver("docker").workspaceRoot(root).fleet("ctl-" + UUID.randomUUID()
                .toString().substring(0, 8));
    }

    @Test
    @DisplayName("releasing an ephemeral sandbox hard-kills it and purges its workdir; reuse is refused")
    void ephemeral() throws Exception {
        try (SandboxManager m = manager().build()) {
            SandboxSpec once = SPEC.toBuilder().ephemeral().build();
            Path workdir;
            String container;
            try (Sandbox task = m.acquire("task-1", once)) {
                task.exec(ExecRequest.shell("echo secret-output > result.txt; sleep 300 &"));
                workdir = Path.of(task.info().workspace());
                container = task.info().sandboxId();
                assertThat(Files.exists(workdir.resolve("result.txt"))).isTrue();
            } // close() = release = hard kill + purge

            assertThat(containers(SandboxLabels.SESSION, "task-1", m)).isEmpty();
            assertThat(docker.listContainersCmd().withShowAll(true).exec()).extracting(Container::getId)
                    .doesNotContain(container);
            assertThat(Files.exists(workdir, LinkOption.NOFOLLOW_LINKS)).isFalse();
            assertThatThrownBy(() -> m.acquire("task-1", once)).isInstanceOf(SandboxAcquireException.class)
                    .hasMessageContaining("single-use");
            assertThatThrownBy(() -> m.exec("task-1", ExecRequest.of("true"))).isInstanceOf(SandboxNotFoundException.class);
        }
    }

    @Test
    @DisplayName("a sandbox running `sleep 600` is killed at its lifetime limit; the exec says so; the session resumes")
    void lifetime() throws Exception {
        try (SandboxManager m = manager().idleTimeout(Duration.ofMinutes(10)).reaperInterval(Duration.ofMillis(100))
                .build()) {
            Sandbox s = m.acquire("long", SPEC.toBuilder().maxLifetime(Duration.ofSeconds(3)).build());
            s.exec(ExecRequest.shell("echo kept > note.txt"));
            String first = s.info().sandboxId();
            long t0 = System.nanoTime();

            ExecResult r = s.exec(ExecRequest.of("sleep", "600"));

            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            assertThat(r.lifetimeExceeded()).as(r.toString()).isTrue();
            // Killed at the 3 s limit, not run to its 600 s end: bounded generously, a loaded machine is slow.
            assertThat(took).isLessThan(Duration.ofSeconds(60));
            // The exec returns as soon as the kill closes its stream; the janitor finishes its bookkeeping just after.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while ((m.stats().lifetimeKilled() == 0 || !containers(SandboxLabels.SESSION, "long", m).isEmpty())
                    && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(m.stats().lifetimeKilled()).isEqualTo(1);
            assertThat(containers(SandboxLabels.SESSION, "long", m)).extracting(Container::getId).doesNotContain(first);
            assertThat(m.session("long").orElseThrow().state()).isEqualTo(SessionState.SUSPENDED);
            assertThat(s.exec(ExecRequest.of("cat", "note.txt")).stdout()).isEqualTo("kept\n"); // resumed, workdir kept
        }
    }

    @Test
    @DisplayName("pooled sandboxes go to exactly one session each, with their own workdir, and the pool is drained on close")
    void poolNeverShared() throws Exception {
        String owner;
        try (SandboxManager m = manager().warmPool(WarmPool.of(SPEC, 3)).build()) {
            owner = m.instanceId();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (m.stats().poolSize() < 3 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(m.stats().poolSize()).isEqualTo(3);
            ExecutorService threads = Executors.newFixedThreadPool(6);
            try {
                List<Future<String>> ids = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    String session = "pooled-" + i;
                    ids.add(threads.submit(() -> {
                        Sandbox s = m.acquire(session, SPEC);
                        s.exec(ExecRequest.shell("echo " + session + " > who"));
                        return s.info().sandboxId() + " " + s.info().workspace();
                    }));
                }
                Set<String> containers = new HashSet<>();
                Set<String> workdirs = new HashSet<>();
                for (Future<String> f : ids) {
                    String[] parts = f.get(120, TimeUnit.SECONDS).split(" ");
                    containers.add(parts[0]);
                    workdirs.add(parts[1]);
                }
                assertThat(containers).hasSize(6);
                assertThat(workdirs).hasSize(6);
                for (int i = 0; i < 6; i++) {
                    String session = "pooled-" + i;
                    Path workdir = Path.of(m.session(session).orElseThrow().workspace());
                    assertThat(workdir.getFileName().toString()).isEqualTo(session);
                    assertThat(Files.readString(workdir.resolve("who"))).isEqualTo(session + "\n");
                }
            } finally {
                threads.shutdownNow();
            }
            assertThat(m.stats().poolHits()).isGreaterThanOrEqualTo(3);
        }
        assertThat(containers(SandboxLabels.OWNER, owner, null)).isEmpty(); // sessions suspended, pool drained
    }

    @Test
    @DisplayName("the orphan sweep never touches the containers of another live manager, even one with its own store")
    void otherLiveManagerUntouched() throws Exception {
        String fleet = "shared-" + UUID.randomUUID().toString().substring(0, 8);
        SessionStore shared = SessionStore.inMemory();
        try (SandboxManager a = SandboxManager.builder().driver("docker").workspaceRoot(root).fleet(fleet)
                .store(shared).build();
             SandboxManager stranger = SandboxManager.builder().driver("docker").workspaceRoot(root.resolve("x"))
                     .build()) {
            String mine = a.acquire("a-1", SPEC).info().sandboxId();
            String theirs = stranger.acquire("s-1", SPEC).info().sandboxId();
            try (SandboxManager b = SandboxManager.builder().driver("docker").workspaceRoot(root).fleet(fleet)
                    .store(shared).build()) {
                assertThat(b.reconcile()).isZero();
            }
            assertThat(a.reconcile()).isZero();
            assertThat(stranger.reconcile()).isZero();
            assertThat(docker.inspectContainerCmd(mine).exec().getState().getRunning()).isTrue();
            assertThat(docker.inspectContainerCmd(theirs).exec().getState().getRunning()).isTrue();
        }
    }

    private List<Container> containers(String label, String value, SandboxManager m) {
        Map<String, String> filter = m == null ? Map.of(SandboxLabels.MANAGED, "true", label, value)
                : Map.of(SandboxLabels.MANAGED, "true", label, value, SandboxLabels.OWNER, m.instanceId());
        return docker.listContainersCmd().withShowAll(true).withLabelFilter(filter).exec();
    }
}
