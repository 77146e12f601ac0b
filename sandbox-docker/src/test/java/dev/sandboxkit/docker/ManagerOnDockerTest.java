package dev.sandboxkit.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.testsupport.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The foundation's behaviours through the public API, on the real Docker engine: acquire, exec,
 * idle reaping in real time, transparent resume, close, destroy, hardened defaults and errors.
 */
@Tag("slow")
@DisplayName("SandboxManager on the real Docker engine")
public class ManagerOnDockerTest {
    private static final String IMAGE = System.getProperty("sandboxkit.test.image", "sandboxkit-test:latest");
    private static final SandboxSpec SPEC = SandboxSpec.builder().image(IMAGE).pullPolicy(PullPolicy.NEVER).build();
    private static DockerClient docker;

    @TempDir
    Path root;
    private SandboxManager manager;

    @BeforeAll
    static void engine() {
        docker = EngineCheck.requireEngine();
    }

    @AfterAll
    static void closeEngine() throws Exception {
        if (docker != null) {
            docker.close();
        }
    }

    @BeforeEach
    void start() {
        manager = SandboxManager.builder().driver("docker").workspaceRoot(root)
                .idleTimeout(Duration.ofSeconds(2)).reaperInterval(Duration.ofMillis(200)).build();
    }

    @AfterEach
    void stop() {
        manager.close();
        // Belt and braces: nothing of this manager may survive close().
        List<Container> left = containersOf(SandboxLabels.OWNER, manager.instanceId());
        left.forEach(c -> docker.removeContainerCmd(c.getId()).withForce(true).exec());
        assertThat(left).as("containers left after close()").isEmpty();
    }

    @Nested
    @DisplayName("acquire")
    class Acquire {
        @Test
        @DisplayName("starts one labelled, hardened container running sleep infinity under init, with the workdir at /workspace")
        void startsHardenedContainer() throws Exception {
            Sandbox sandbox = manager.acquire("chat-42", SPEC);
            String id = sandbox.info().sandboxId();

            InspectContainerResponse c = docker.inspectContainerCmd(id).exec();
            assertThat(c.getState().getRunning()).isTrue();
            assertThat(c.getConfig().getLabels()).containsEntry(SandboxLabels.MANAGED, "true")
                    .containsEntry(SandboxLabels.SESSION, "chat-42")
                    .containsEntry(SandboxLabels.OWNER, manager.instanceId());
            assertThat(c.getConfig().getEntrypoint()).containsExactly("sleep", "infinity");
            assertThat(c.getHostConfig().getInit()).isTrue();
            assertThat(c.getHostConfig().getNetworkMode()).isEqualTo("none");
            assertThat(c.getHostConfig().getCapDrop()).extracting(Object::toString).containsExactly("ALL");
            assertThat(c.getHostConfig().getSecurityOpts()).contains("no-new-privileges");
            assertThat(c.getHostConfig().getPidsLimit()).isEqualTo(512L);
            assertThat(c.getHostConfig().getMemory()).isEqualTo(512L * 1024 * 1024);
            assertThat(c.getConfig().getUser()).isNotBlank().doesNotStartWith("0");

            ExecResult ps = sandbox.exec(ExecRequest.shell("cat /proc/1/cmdline | tr '\\0' ' '; echo; ps -o comm | sort -u; id -u; pwd"));
            assertThat(ps.stdout()).contains("docker-init").contains("sleep").contains("/workspace");
            assertThat(ps.stdout()).doesNotContain("\n0\n"); // not root

            Path workdir = Path.of(sandbox.info().workspace());
            assertThat(workdir.getParent()).isEqualTo(root.toAbsolutePath());
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(workdir, LinkOption.NOFOLLOW_LINKS)))
                    .isEqualTo("rwx------");
            sandbox.exec(ExecRequest.shell("echo from-container > f.txt"));
            assertThat(Files.readString(workdir.resolve("f.txt"))).isEqualTo("from-container\n");
        }

        @Test
        @DisplayName("returns the live container again, even under concurrent acquires from many threads")
        void concurrentAcquires() throws Exception {
            int threads = 8;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            CyclicBarrier barrier = new CyclicBarrier(threads);
            try {
                List<Future<String>> ids = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    ids.add(pool.submit(() -> {
                        barrier.await();
                        return manager.acquire("crowd", SPEC).info().sandboxId();
                    }));
                }
                Set<String> distinct = new HashSet<>();
                for (Future<String> f : ids) {
                    distinct.add(f.get(60, TimeUnit.SECONDS));
                }
                assertThat(distinct).hasSize(1);
                assertThat(containersOf(SandboxLabels.SESSION, "crowd")).hasSize(1);
            } finally {
                pool.shutdownNow();
            }
        }

        @Test
        @DisplayName("an image that is missing and may not be pulled fails with an error naming it")
        void missingImage() {
            SandboxSpec spec = SandboxSpec.builder().image("sandboxkit-no-such-image:1").pullPolicy(PullPolicy.NEVER).build();
            assertThatThrownBy(() -> manager.acquire("no-image", spec)).isInstanceOf(SandboxAcquireException.class)
                    .hasMessageContaining("sandboxkit-no-such-image:1");
            assertThat(manager.session("no-image")).isEmpty();
        }
    }

    @Nested
    @DisplayName("exec")
    class Exec {
        @Test
        @DisplayName("through the handle and the manager: exit code, stdout and stderr apart, per-exec env, cwd, stdin")
        void semantics() {
            Sandbox sandbox = manager.acquire("exec", SPEC);
            ExecResult r = sandbox.exec(ExecRequest.shell("echo hi > note.txt && cat note.txt && echo oops >&2; exit 3"));
            assertThat(r.exitCode()).isEqualTo(3);
            assertThat(r.stdout()).isEqualTo("hi\n");
            assertThat(r.stderr()).isEqualTo("oops\n");

            assertThat(manager.exec("exec", ExecRequest.of("ls", "-la")).stdout()).contains("note.txt");
            assertThat(sandbox.exec(ExecRequest.shell("echo $SECRET").withEnv("SECRET", "s3")).stdout()).isEqualTo("s3\n");
            assertThat(sandbox.exec(ExecRequest.shell("echo \"[$SECRET]\"")).stdout()).isEqualTo("[]\n");
            sandbox.exec(ExecRequest.of("mkdir", "-p", "sub/dir"));
            assertThat(sandbox.exec(ExecRequest.of("pwd").withWorkingDir("sub/dir")).stdout()).isEqualTo("/workspace/sub/dir\n");
            assertThat(sandbox.exec(ExecRequest.of("cat").withStdin("to stdin")).stdout()).isEqualTo("to stdin");
            assertThat(sandbox.exec(ExecRequest.of("no-such-binary")).exitCode()).isIn(126, 127);
        }

        @Test
        @DisplayName("a timeout kills the process and the sandbox stays usable")
        void timeout() {
            Sandbox sandbox = manager.acquire("slow", SPEC);
            long t0 = System.nanoTime();
            ExecResult slow = sandbox.exec(ExecRequest.shell("sleep 30").withTimeout(Duration.ofSeconds(1)));
            // Killed at its timeout, not run to its end: far less than the command's 30 s, however loaded the machine.
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(20));
            assertThat(slow.timedOut()).isTrue();
            assertThat(sandbox.exec(ExecRequest.shell("ps -o args | grep -c '^sleep 30' || true")).stdout().trim())
                    .isEqualTo("0");
            assertThat(sandbox.exec("true").exitCode()).isZero();
        }

        @Test
        @DisplayName("output over the cap is cut and flagged")
        void caps() {
            ExecResult r = manager.acquire("caps", SPEC)
                    .exec(ExecRequest.shell("head -c 5000 /dev/zero").withOutputLimit(1000));
            assertThat(r.stdoutBytes()).hasSize(1000);
            assertThat(r.stdoutTruncated()).isTrue();
        }
    }

    @Nested
    @DisplayName("idle TTL and resume, in real time")
    class IdleAndResume {
        @Test
        @DisplayName("a 2 s TTL removes the container (checked by label); the next exec resumes in a new one with the file intact")
        void reapThenResume() throws Exception {
            Sandbox sandbox = manager.acquire("ttl", SPEC);
            String first = sandbox.info().sandboxId();
            sandbox.exec(ExecRequest.shell("echo kept > note.txt"));
            long idleSince = System.nanoTime();

            awaitNoContainer("ttl", Duration.ofSeconds(10));
            Duration reapedAfter = Duration.ofNanos(System.nanoTime() - idleSince);
            // Not before the TTL; how late depends on the machine (awaitNoContainer bounds it).
            assertThat(reapedAfter).isGreaterThanOrEqualTo(Duration.ofMillis(1900));
            SessionInfo suspended = manager.session("ttl").orElseThrow();
            assertThat(suspended.state()).isEqualTo(SessionState.SUSPENDED);
            assertThat(suspended.sandboxId()).isNull();
            assertThat(Files.readString(Path.of(suspended.workspace(), "note.txt"))).isEqualTo("kept\n");

            ExecResult r = sandbox.exec(ExecRequest.of("cat", "note.txt"));

            assertThat(r.stdout()).isEqualTo("kept\n");
            String second = sandbox.info().sandboxId();
            assertThat(second).isNotEqualTo(first);
            assertThat(containersOf(SandboxLabels.SESSION, "ttl")).extracting(Container::getId).containsExactly(second);
        }

        @Test
        @DisplayName("keepAlive and execs keep the container past the TTL")
        void activityKeepsAlive() throws Exception {
            Sandbox sandbox = manager.acquire("busy", SPEC);
            String id = sandbox.info().sandboxId();
            for (int i = 0; i < 8; i++) {
                Thread.sleep(500);
                if (i % 2 == 0) {
                    manager.keepAlive("busy");
                } else {
                    sandbox.exec("true");
                }
            }
            assertThat(sandbox.info().sandboxId()).isEqualTo(id);
            assertThat(containersOf(SandboxLabels.SESSION, "busy")).hasSize(1);
        }

        @Test
        @DisplayName("an exec still running counts as activity: never reaped mid-command")
        void runningExecIsActivity() {
            Sandbox sandbox = manager.acquire("long", SPEC);
            String id = sandbox.info().sandboxId();
            ExecResult r = sandbox.exec(ExecRequest.shell("sleep 4; echo survived"));
            assertThat(r.stdout()).isEqualTo("survived\n");
            assertThat(sandbox.info().sandboxId()).isEqualTo(id);
        }

        @Test
        @DisplayName("acquire on a reaped session resumes on the same workdir")
        void acquireResumes() throws Exception {
            manager.acquire("again", SPEC).exec(ExecRequest.shell("echo 1 > a"));
            awaitNoContainer("again", Duration.ofSeconds(10));
            Sandbox resumed = manager.acquire("again", SPEC);
            assertThat(resumed.exec(ExecRequest.of("cat", "a")).stdout()).isEqualTo("1\n");
        }
    }

    @Nested
    @DisplayName("close and destroy")
    class CloseDestroy {
        @Test
        @DisplayName("close() leaves no container of this manager and keeps the workdirs")
        void close() throws Exception {
            Sandbox a = manager.acquire("close-a", SPEC);
            manager.acquire("close-b", SPEC);
            a.exec(ExecRequest.shell("echo x > x"));
            Path workdir = Path.of(a.info().workspace());

            manager.close();

            assertThat(containersOf(SandboxLabels.OWNER, manager.instanceId())).isEmpty();
            assertThat(Files.readString(workdir.resolve("x"))).isEqualTo("x\n");
        }

        @Test
        @DisplayName("destroy removes the container and the workdir; the session is then 'not found'")
        void destroy() {
            Sandbox sandbox = manager.acquire("gone", SPEC);
            Path workdir = Path.of(sandbox.info().workspace());
            sandbox.exec(ExecRequest.shell("echo x > x"));

            manager.destroy("gone");

            assertThat(containersOf(SandboxLabels.SESSION, "gone")).isEmpty();
            assertThat(Files.exists(workdir, LinkOption.NOFOLLOW_LINKS)).isFalse();
            assertThatThrownBy(() -> sandbox.exec("true")).isInstanceOf(SandboxNotFoundException.class);
            assertThatThrownBy(() -> manager.exec("gone", ExecRequest.of("true"))).isInstanceOf(SandboxNotFoundException.class);
        }
    }

    @Nested
    @DisplayName("execs racing reap and destroy")
    class ExecRaces {
        @Test
        @DisplayName("an exec that races the idle reap runs, before it or resumed after it; never a runtime error")
        void execRacingReap() throws Exception {
            Sandbox sandbox = manager.acquire("race-reap", SPEC);
            List<String> outcomes = new ArrayList<>();
            int resumed = 0;
            // Milliseconds after the last activity: clearly before the reap (TTL 2 s), clearly after it (the
            // reaper scans every 200 ms), and around the scan that reaps, where exec and reap race.
            long[] offsets = {1_500, 3_000, 1_950, 2_000, 2_050, 2_100, 2_150, 2_200, 2_250, 2_300};
            for (long at : offsets) {
                sandbox.exec("true");
                long idleSince = System.nanoTime();
                String before = sandbox.info().sandboxId();
                if (at == 3_000) {
                    // Clearly after the reap: once it happened, however late a loaded machine ran it.
                    awaitNoContainer("race-reap", Duration.ofSeconds(30));
                }
                long[] latestStart = {0};
                List<Future<String>> racing = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    long jitter = ThreadLocalRandom.current().nextLong(0, 20);
                    racing.add(threads.submit(() -> {
                        sleepUntil(idleSince, at + jitter);
                        synchronized (latestStart) {
                            latestStart[0] = Math.max(latestStart[0], System.nanoTime() - idleSince);
                        }
                        return outcome(() -> sandbox.exec(ExecRequest.of("echo", "ran")), "ran\n");
                    }));
                }
                for (Future<String> f : racing) {
                    outcomes.add(at + " ms: " + f.get(60, TimeUnit.SECONDS));
                }
                boolean replaced = !before.equals(sandbox.info().sandboxId());
                resumed += replaced ? 1 : 0;
                // Before the TTL only if the execs really started before it: a loaded machine may wake them late.
                if (at == 1_500 && latestStart[0] < TimeUnit.MILLISECONDS.toNanos(1_800)) {
                    assertThat(replaced).as("execs before the TTL keep the container").isFalse();
                } else if (at == 3_000) {
                    assertThat(replaced).as("execs after the reap resume in a fresh container").isTrue();
                }
            }
            // The engine orders a reap and an exec on the session's state: an exec either keeps the container
            // or finds the session suspended and resumes it, so the driver never sees this race.
            System.out.println("execs racing the reap: " + outcomes + "; rounds that reaped and resumed: " + resumed);
            assertThat(outcomes).as("outcomes").allMatch(o -> o.endsWith(": EXITED"));
        }

        @Test
        @DisplayName("execs that race destroy end with their result, KILLED, or 'not found'; never a runtime error")
        void execsRacingDestroy() throws Exception {
            List<String> outcomes = new ArrayList<>();
            int[] round = {0};
            // Five rounds, and on until one exec was killed under way (the race happened), within a deadline.
            Await.repeatUntil(Duration.ofSeconds(90), () -> round[0] >= 5 && outcomes.contains("KILLED"),
                    () -> round[0] + " rounds: " + outcomes + " (wanted 5 rounds and one exec KILLED)", () -> {
                String session = "race-destroy-" + round[0]++;
                Sandbox sandbox = manager.acquire(session, SPEC);
                sandbox.exec("true");
                CyclicBarrier go = new CyclicBarrier(5);
                List<Future<String>> racing = new ArrayList<>();
                racing.add(threads.submit(() -> {
                    go.await(30, TimeUnit.SECONDS);
                    return outcome(() -> sandbox.exec(ExecRequest.shell("sleep 60; echo slept")), "slept\n");
                }));
                for (int i = 0; i < 3; i++) {
                    long offset = ThreadLocalRandom.current().nextLong(0, 50);
                    racing.add(threads.submit(() -> {
                        go.await(30, TimeUnit.SECONDS);
                        Thread.sleep(offset);
                        return outcome(() -> sandbox.exec(ExecRequest.of("echo", "ran")), "ran\n");
                    }));
                }
                go.await(30, TimeUnit.SECONDS);
                Thread.sleep(ThreadLocalRandom.current().nextLong(10, 60));
                manager.destroy(session);
                for (int i = 0; i < racing.size(); i++) {
                    String o = racing.get(i).get(60, TimeUnit.SECONDS);
                    outcomes.add(o);
                    if (i == 0) {
                        assertThat(o).as("the 60 s command, destroyed under way").isIn("KILLED", "NOT_FOUND");
                    }
                }
            });
            System.out.println("execs racing destroy: " + outcomes);
            assertThat(outcomes).as("outcomes").allMatch(o -> o.equals("EXITED") || o.equals("KILLED")
                    || o.equals("NOT_FOUND"));
        }

        private final ExecutorService threads = Executors.newCachedThreadPool();

        @AfterEach
        void stopThreads() {
            threads.shutdownNow();
        }

        private String outcome(java.util.function.Supplier<ExecResult> exec, String expectedStdout) {
            try {
                ExecResult r = exec.get();
                if (r.termination() == ExecResult.Termination.KILLED) {
                    return "KILLED";
                }
                return r.isSuccess() && r.stdout().equals(expectedStdout) ? "EXITED"
                        : r + " stdout=" + r.stdout() + " stderr=" + r.stderr();
            } catch (SandboxNotFoundException e) {
                return "NOT_FOUND";
            } catch (RuntimeException e) {
                return e.toString();
            }
        }

        private void sleepUntil(long startNanos, long millis) throws InterruptedException {
            long left = startNanos + TimeUnit.MILLISECONDS.toNanos(millis) - System.nanoTime();
            if (left > 0) {
                TimeUnit.NANOSECONDS.sleep(left);
            }
        }
    }

    @Nested
    @DisplayName("discovery and errors")
    class DiscoveryErrors {
        @Test
        @DisplayName("without a driver name, ServiceLoader finds the Docker driver")
        void serviceLoader() {
            try (SandboxManager m = SandboxManager.builder().workspaceRoot(root).build()) {
                assertThat(m.driverName()).isEqualTo("docker");
            }
        }

        @Test
        @DisplayName("a detected driver whose socket is missing names the setting it came from, not a module to add")
        void detectedWithAMissingSocket() {
            assertThatThrownBy(() -> SandboxManager.builder().workspaceRoot(root)
                    .driverProperty("docker.host", "unix:///nonexistent/docker.sock").build())
                    .isInstanceOf(SandboxConfigurationException.class)
                    .hasMessageContaining("docker: no Docker socket at /nonexistent/docker.sock (from driverProperty(\"docker.host\")")
                    .hasMessageNotContaining("-Dsandboxkit.docker.host")
                    .hasMessageNotContaining("sandbox-docker");
        }

        @Test
        @DisplayName("an unreachable engine is a retryable 'unavailable' error naming the endpoint")
        void unreachable() {
            assertThatThrownBy(() -> SandboxManager.builder().driver("docker").workspaceRoot(root)
                    .driverProperty("docker.host", "unix:///nonexistent/docker.sock").build())
                    .isInstanceOf(SandboxUnavailableException.class)
                    .hasMessageContaining("/nonexistent/docker.sock")
                    .matches(e -> ((SandboxUnavailableException) e).isRetryable());
        }
    }

    private void awaitNoContainer(String sessionId, Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!containersOf(SandboxLabels.SESSION, sessionId).isEmpty()) {
            assertThat(System.nanoTime()).as("container of %s still there after %s", sessionId, limit).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    private List<Container> containersOf(String label, String value) {
        return docker.listContainersCmd().withShowAll(true)
                .withLabelFilter(Map.of(SandboxLabels.MANAGED, "true", label, value)).exec().stream()
                .filter(c -> !label.equals(SandboxLabels.SESSION) || manager == null
                        || manager.instanceId().equals(c.getLabels().get(SandboxLabels.OWNER)))
                .toList();
    }

    /** Fails (never skips) when the engine is missing, unless skipping was asked for outside CI. */
    public static final class EngineCheck {
        private EngineCheck() {
        }

        public static DockerClient requireEngine() {
            String host = System.getenv().getOrDefault("DOCKER_HOST", "unix:///var/run/docker.sock");
            DefaultDockerClientConfig config = DefaultDockerClientConfig.createDefaultConfigBuilder().withDockerHost(host).build();
            DockerClient client = DockerClientImpl.getInstance(config,
                    new ZerodepDockerHttpClient.Builder().dockerHost(URI.create(host)).build());
            try {
                client.pingCmd().exec();
                client.inspectImageCmd(IMAGE).exec();
                return client;
            } catch (RuntimeException e) {
                boolean skip = Boolean.getBoolean("sandboxkit.skipDockerTests") && !"true".equals(System.getenv("CI"));
                org.junit.jupiter.api.Assumptions.assumeFalse(skip, "Docker tests skipped on request: " + e);
                throw new AssertionError("Docker engine at " + host + " with image " + IMAGE + " is required for these "
                        + "tests (run scripts/setup-docker.sh, which starts the engine and builds the image, or -Dsandboxkit.skipDockerTests=true outside CI): " + e, e);
            }
        }

        /** Fails (never skips in CI) unless the engine lists the OCI runtime, as {@code scripts/setup-env.sh} registers it. */
        public static void requireRuntime(String runtime) {
            DockerTestSupport.requireRuntime(runtime);
        }
    }
}
