package dev.sandboxkit.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.HostConfig;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SandboxLabels;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The manager end to end on Podman's Docker API (the driver pointed at {@code /run/sandboxkit-podman.sock}): idle reap and
 * transparent resume on the same workdir, Podman's init, workdir ownership, the orphan sweep by label. Checked from
 * outside with docker-java on Podman's socket (and on Docker's, which must see none of it).
 */
@Tag("podman")
@DisplayName("SandboxManager on Podman")
class ManagerOnPodmanTest {
    private static final SandboxSpec SPEC = SandboxSpec.builder().image(DockerTestSupport.IMAGE)
            .pullPolicy(PullPolicy.NEVER).build();
    private static DockerClient podman;

    @TempDir
    Path root;
    private SandboxManager manager;

    @BeforeAll
    static void podmanServing() {
        PodmanSupport.require();
        podman = PodmanSupport.dockerClient();
    }

    @AfterAll
    static void closeClient() throws Exception {
        if (podman != null) {
            podman.close();
        }
    }

    @BeforeEach
    void start() {
        manager = manager("podman-" + UUID.randomUUID().toString().substring(0, 8)).idleTimeout(Duration.ofSeconds(2))
                .reaperInterval(Duration.ofMillis(200)).build();
    }

    @AfterEach
    void stop() {
        manager.close();
        List<Container> left = containers(Map.of(SandboxLabels.OWNER, manager.instanceId()));
        left.forEach(c -> podman.removeContainerCmd(c.getId()).withForce(true).exec());
        assertThat(left).as("containers left on Podman after close()").isEmpty();
    }

    private SandboxManager.Builder manager(String fleet) {
        return SandboxManager.builder().driver("docker").driverProperty("docker.host", PodmanSupport.HOST)
                .workspaceRoot(root).fleet(fleet);
    }

    @Test
    @DisplayName("a 2 s TTL removes the Podman container; the next exec resumes in a fresh one on the same workdir, file intact")
    void reapThenResume() throws Exception {
        Sandbox sandbox = manager.acquire("ttl", SPEC);
        SessionInfo before = sandbox.info();
        String first = before.sandboxId();
        assertThat(containerIds("ttl")).as("on Podman").containsExactly(first);
        try (DockerClient docker = DockerTestSupport.dockerClient()) {
            assertThat(docker.listContainersCmd().withShowAll(true).withIdFilter(List.of(first)).exec())
                    .as("not on Docker").isEmpty();
        }
        assertThat(sandbox.exec(ExecRequest.shell("echo kept > note.txt && cat note.txt")).stdout()).isEqualTo("kept\n");
        long idleSince = System.nanoTime();

        awaitReaped("ttl", Duration.ofSeconds(15));
        Duration reapedAfter = Duration.ofNanos(System.nanoTime() - idleSince);
        // Not before the TTL; how late depends on the machine (awaitReaped bounds it).
        assertThat(reapedAfter).isGreaterThanOrEqualTo(Duration.ofMillis(1900));
        SessionInfo suspended = manager.session("ttl").orElseThrow();
        assertThat(suspended.state()).isEqualTo(SessionState.SUSPENDED);
        assertThat(suspended.sandboxId()).isNull();
        assertThat(Files.readString(Path.of(suspended.workspace(), "note.txt"))).isEqualTo("kept\n");

        ExecResult r = sandbox.exec(ExecRequest.of("cat", "note.txt"));

        assertThat(r.exitCode()).isZero();
        assertThat(r.stdout()).isEqualTo("kept\n");
        SessionInfo after = sandbox.info();
        assertThat(after.sandboxId()).isNotEqualTo(first);
        assertThat(after.workspace()).isEqualTo(before.workspace());
        assertThat(containerIds("ttl")).containsExactly(after.sandboxId());
        // The resumed container writes to the same host directory, as the same user.
        assertThat(sandbox.exec(ExecRequest.shell("echo again >> note.txt")).isSuccess()).isTrue();
        assertThat(Files.readString(Path.of(after.workspace(), "note.txt"))).isEqualTo("kept\nagain\n");
        assertThat(Files.getOwner(Path.of(after.workspace(), "note.txt")))
                .isEqualTo(Files.getOwner(Path.of(after.workspace())));
    }

    @Test
    @DisplayName("acquire on a reaped session resumes; a destroyed one is gone from Podman and from the disk")
    void acquireResumesThenDestroy() throws Exception {
        manager.acquire("again", SPEC).exec(ExecRequest.shell("echo 1 > a"));
        awaitReaped("again", Duration.ofSeconds(15));
        Sandbox resumed = manager.acquire("again", SPEC);
        assertThat(resumed.exec(ExecRequest.of("cat", "a")).stdout()).isEqualTo("1\n");
        Path workdir = Path.of(resumed.info().workspace());

        manager.destroy("again");

        assertThat(containerIds("again")).isEmpty();
        assertThat(workdir).doesNotExist();
        assertThatThrownBy(() -> resumed.exec("true")).isInstanceOf(SandboxNotFoundException.class);
    }

    @Test
    @DisplayName("PID 1 is Podman's init (catatonit) with sleep as its child, as the hardened user")
    void podmansInit() {
        Sandbox sandbox = manager.acquire("init", SPEC);
        ExecResult r = sandbox.exec(ExecRequest.shell("tr '\\0' ' ' < /proc/1/cmdline; echo; id -u; pwd"));
        assertThat(r.stdout()).contains("podman-init").contains("sleep infinity").contains("/workspace");
        assertThat(r.stdout().lines().toList().get(1)).isNotEqualTo("0");
    }

    @Test
    @DisplayName("the hardened defaults hold inside a Podman sandbox: no capabilities, no-new-privileges, limits, no network")
    void hardenedOnPodman() {
        Sandbox sandbox = manager.acquire("hardened", SPEC);
        ExecResult r = sandbox.exec(ExecRequest.shell("grep -E '^(CapEff|CapBnd|NoNewPrivs):' /proc/self/status; "
                + "echo pids=$(cat /sys/fs/cgroup/pids.max /sys/fs/cgroup/pids/pids.max 2>/dev/null); "
                + "echo mem=$(cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null); "
                + "grep ' /tmp ' /proc/mounts; echo net=$(ls /sys/class/net); echo uid=$(id -u)"));
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        assertThat(r.stdout()).contains("CapEff:\t0000000000000000").contains("CapBnd:\t0000000000000000")
                .contains("NoNewPrivs:\t1").contains("pids=512\n").contains("mem=536870912\n")
                .containsPattern("/tmp tmpfs [^\n]*size=65536k").contains("net=lo\n").doesNotContain("uid=0\n");
    }

    @Test
    @DisplayName("a runtime other than the service's default is refused: Podman's Docker API would run it under runc")
    void runtimeThatPodmanWouldIgnore() {
        assertThatThrownBy(() -> manager.acquire("gvisor", SPEC.toBuilder().runtime("runsc").build()))
                .isInstanceOf(SandboxAcquireException.class)
                .hasMessageContaining("Podman").hasMessageContaining("'runsc'").hasMessageContaining("'runc'")
                .hasMessageContaining("containers.conf");
        assertThat(containers(Map.of(SandboxLabels.OWNER, manager.instanceId()))).as("nothing created").isEmpty();
        // The default runtime by name is what runs anyway.
        Sandbox runc = manager.acquire("runc", SPEC.toBuilder().runtime("runc").build());
        assertThat(runc.exec("true").isSuccess()).isTrue();
    }

    @Test
    @DisplayName("the orphan sweep finds a stray container of its fleet on Podman by label and removes it")
    void orphanSweepByLabel() {
        String fleet = "podman-sweep-" + UUID.randomUUID().toString().substring(0, 8);
        String instance = "m-" + fleet;
        // Its own owner label but not held: what an interrupted start leaves behind (swept at once, no grace).
        String orphan = podman.createContainerCmd(DockerTestSupport.IMAGE).withEntrypoint("sleep", "infinity")
                .withLabels(Map.of(SandboxLabels.MANAGED, "true", SandboxLabels.FLEET, fleet,
                        SandboxLabels.OWNER, instance, SandboxLabels.SESSION, "lost:session@x"))
                .withHostConfig(HostConfig.newHostConfig().withInit(true).withNetworkMode("none")).exec().getId();
        try {
            podman.startContainerCmd(orphan).exec();
            try (SandboxManager sweeper = manager(fleet).instanceId(instance).build()) {
                sweeper.reconcile(); // the first sweep also runs at build(); either one removes it
                assertThat(containers(Map.of(SandboxLabels.FLEET, fleet))).isEmpty();
                assertThat(sweeper.stats().orphansRemoved()).isEqualTo(1);
            }
        } finally {
            containers(Map.of(SandboxLabels.FLEET, fleet))
                    .forEach(c -> podman.removeContainerCmd(c.getId()).withForce(true).exec());
        }
    }

    private List<String> containerIds(String session) {
        return containers(Map.of(SandboxLabels.SESSION, session, SandboxLabels.OWNER, manager.instanceId())).stream()
                .map(Container::getId).toList();
    }

    private List<Container> containers(Map<String, String> labels) {
        Map<String, String> filter = new java.util.HashMap<>(labels);
        filter.put(SandboxLabels.MANAGED, "true");
        return podman.listContainersCmd().withShowAll(true).withLabelFilter(filter).exec();
    }

    /**
     * Until the container is gone from Podman's list and the session is SUSPENDED. Podman drops a container from
     * its list while its DELETE is still cleaning up, a few milliseconds before the reaper's remove returns.
     */
    private void awaitReaped(String session, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!containerIds(session).isEmpty()
                || manager.session(session).map(SessionInfo::state).orElse(null) != SessionState.SUSPENDED) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("session " + session + " not reaped on Podman after " + timeout + ": "
                        + manager.session(session) + ", containers " + containerIds(session));
            }
            Thread.sleep(20);
        }
    }
}
