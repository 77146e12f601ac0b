package dev.sandboxkit.docker;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.MountType;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.ComputeCapability;
import dev.sandboxkit.spi.DriverCapability;
import dev.sandboxkit.spi.WorkspaceCapability;
import dev.sandboxkit.spi.SandboxDescriptor;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SandboxDriverProvider;
import dev.sandboxkit.spi.SandboxLabels;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

import static dev.sandboxkit.docker.DockerTestSupport.IMAGE;
import static dev.sandboxkit.docker.DockerTestSupport.context;
import static dev.sandboxkit.docker.DockerTestSupport.spec;
import static dev.sandboxkit.docker.DockerTestSupport.start;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Lifecycle through the SPI against the real engine: create, harden, list, remove, workdirs, discovery. */
class DockerLifecycleTest extends DriverOnDocker {
    @Override
    String tempPrefix() {
        return "sbx-lifecycle-";
    }

    @Test
    void createsAHardenedContainerWhosePid1IsInitWithSleep() throws IOException {
        SandboxSpec spec = spec().label("team", "blue").env("SPEC_ONLY", "x").build();
        String id = start(driver, instanceId, "s-harden", spec);

        assertThat(id).matches("[0-9a-f]{64}");
        InspectContainerResponse c = docker.inspectContainerCmd(id).exec();
        assertThat(c.getState().getRunning()).isTrue();
        assertThat(c.getConfig().getEntrypoint()).containsExactly("sleep", "infinity");
        assertThat(c.getConfig().getCmd()).isNullOrEmpty();
        assertThat(c.getConfig().getUser()).isEqualTo("10001:10001");
        assertThat(c.getConfig().getWorkingDir()).isEqualTo("/workspace");
        assertThat(c.getConfig().getHostName()).isEqualTo("sandbox");
        assertThat(c.getConfig().getEnv()).noneMatch(e -> e.startsWith("SPEC_ONLY="));
        assertThat(c.getConfig().getLabels()).containsEntry(SandboxLabels.OWNER, instanceId)
                .containsEntry(SandboxLabels.SESSION, "s-harden").containsEntry(SandboxLabels.MANAGED, "true")
                .containsEntry("team", "blue");

        HostConfig hc = c.getHostConfig();
        assertThat(hc.getCapDrop()).containsExactly(Capability.ALL);
        assertThat(hc.getSecurityOpts()).containsExactly("no-new-privileges");
        assertThat(hc.getNetworkMode()).isEqualTo("none");
        assertThat(hc.getPidsLimit()).isEqualTo(512L);
        assertThat(hc.getMemory()).isEqualTo(512L * 1024 * 1024);
        assertThat(hc.getMemorySwap()).isEqualTo(512L * 1024 * 1024);
        assertThat(hc.getTmpFs()).containsExactly(Map.entry("/tmp", "rw,nosuid,nodev,size=67108864"));
        assertThat(hc.getInit()).isTrue();
        assertThat(hc.getReadonlyRootfs()).isFalse();
        Path workspace = root.resolve("s-harden");
        assertThat(hc.getMounts()).singleElement().satisfies(m -> {
            assertThat(m.getType()).isEqualTo(MountType.BIND);
            assertThat(m.getSource()).isEqualTo(workspace.toString());
            assertThat(m.getTarget()).isEqualTo("/workspace");
            assertThat(m.getReadOnly()).isIn(null, false);
        });
        assertThat(c.getMounts()).anySatisfy(m -> {
            assertThat(m.getDestination().getPath()).isEqualTo("/workspace");
            assertThat(m.getRW()).isTrue();
        });

        ExecResult ps = driver.exec(id, ExecRequest.of("ps", "-o", "pid,ppid,args"));
        assertThat(ps.stdout()).containsPattern("(?m)^\\s*1\\s+0\\s+/sbin/docker-init -- sleep infinity$")
                .containsPattern("(?m)^\\s*\\d+\\s+1\\s+sleep infinity$");
        assertThat(driver.exec(id, ExecRequest.of("id", "-u")).stdout().trim()).isEqualTo("10001");
        assertThat(driver.exec(id, ExecRequest.shell("touch /workspace/w /tmp/t && echo ok")).stdout()).isEqualTo("ok\n");
        assertThat(driver.exec(id, ExecRequest.shell("touch /etc/x")).exitCode()).isNotZero();

        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(workspace, LinkOption.NOFOLLOW_LINKS)))
                .isEqualTo("rwx------");
        assertThat(Files.getAttribute(workspace, "unix:uid", LinkOption.NOFOLLOW_LINKS)).isEqualTo(10001);
        assertThat(Files.getAttribute(workspace, "unix:gid", LinkOption.NOFOLLOW_LINKS)).isEqualTo(10001);
        assertThat(Files.getAttribute(workspace.resolve("w"), "unix:uid", LinkOption.NOFOLLOW_LINKS)).isEqualTo(10001);
    }

    @Test
    void sessionIdsWithColonsAndOtherAllowedCharactersWork() {
        String session = "user@host:42+a=b.c_d-e";
        String id = start(driver, instanceId, session, spec().build());

        assertThat(driver.exec(id, ExecRequest.shell("echo hi > /workspace/f && cat /workspace/f")).stdout()).isEqualTo("hi\n");
        assertThat(root.resolve(session).resolve("f")).hasContent("hi\n");
        // This test's owner too: another build's leftover (a killed JVM) may carry the same session name.
        assertThat(driver.list(Map.of(SandboxLabels.OWNER, instanceId, SandboxLabels.SESSION, session))).singleElement()
                .satisfies(d -> assertThat(d.sessionId()).isEqualTo(session));
    }

    @Test
    void honoursTheSpecsUserLimitsAndReadOnlyRoot() {
        SandboxSpec spec = spec().user("4242:4343").cpus(0.5).memoryBytes(0).pidsLimit(0).tmpSizeBytes(0)
                .readOnlyRootFilesystem(true).addCapability("CAP_CHOWN").init(false).build();
        String id = start(driver, instanceId, "s-custom", spec);

        InspectContainerResponse c = docker.inspectContainerCmd(id).exec();
        HostConfig hc = c.getHostConfig();
        assertThat(c.getConfig().getUser()).isEqualTo("4242:4343");
        assertThat(hc.getNanoCPUs()).isEqualTo(500_000_000L);
        assertThat(hc.getMemory()).isIn(null, 0L);
        assertThat(hc.getPidsLimit()).isIn(null, 0L, -1L);
        assertThat(hc.getTmpFs()).isNullOrEmpty();
        assertThat(hc.getReadonlyRootfs()).isTrue();
        assertThat(hc.getCapAdd()).containsExactly(Capability.CHOWN);
        assertThat(hc.getInit()).isFalse();
        assertThat(driver.exec(id, ExecRequest.of("id")).stdout()).startsWith("uid=4242 gid=4343");
        assertThat(driver.exec(id, ExecRequest.of("cat", "/proc/1/cmdline")).stdout()).isEqualTo("sleep\0infinity\0");
    }

    @Test
    void neverRunsTheImagesEntrypointOrCmd() throws IOException {
        Path ctx = Files.createTempDirectory(root.getParent(), "build-");
        Files.writeString(ctx.resolve("Dockerfile"), "FROM " + IMAGE + "\n"
                + "ENTRYPOINT [\"/bin/sh\", \"-c\", \"touch /workspace/entrypoint-ran; exec sleep infinity\"]\n"
                + "CMD [\"/bin/sh\", \"-c\", \"touch /workspace/cmd-ran\"]\n");
        String image = build(ctx, "sandboxkit-test-entrypoint");

        String id = start(driver, instanceId, "s-entry", spec().image(image).build());

        assertThat(driver.exec(id, ExecRequest.shell("sleep 0.3; ls -A /workspace")).stdout()).isEmpty();
        assertThat(root.resolve("s-entry").resolve("entrypoint-ran")).doesNotExist();
        assertThat(root.resolve("s-entry").resolve("cmd-ran")).doesNotExist();
        assertThat(driver.exec(id, ExecRequest.shell("tr '\\0' ' ' </proc/1/cmdline")).stdout())
                .isEqualTo("/sbin/docker-init -- sleep infinity ");
    }

    @Test
    void aMissingImageWithPullPolicyNeverNamesTheImage() {
        SandboxSpec spec = spec().image("sandboxkit-no-such-image:" + instanceId).build();
        String workspace = driver.createWorkspace("s-missing", spec);

        assertThatThrownBy(() -> driver.create(new CreateRequest("s-missing", spec, workspace,
                DockerTestSupport.labels(instanceId, "s-missing"))))
                .isInstanceOf(SandboxAcquireException.class)
                .hasMessage("image sandboxkit-no-such-image:" + instanceId
                        + " is not present locally and the pull policy is NEVER");
        assertThat(driver.list(Map.of(SandboxLabels.SESSION, "s-missing"))).isEmpty();
    }

    @Test
    void aContainerThatCannotStartIsRemovedAndReported() throws IOException {
        // An image without "sleep": the engine creates the container but cannot start it.
        Path ctx = Files.createTempDirectory(root.getParent(), "build-");
        Files.writeString(ctx.resolve("Dockerfile"), "FROM scratch\nCOPY Dockerfile /marker\n");
        String image = build(ctx, "sandboxkit-test-empty");
        SandboxSpec spec = spec().image(image).build();
        String workspace = driver.createWorkspace("s-nostart", spec);

        assertThatThrownBy(() -> driver.create(new CreateRequest("s-nostart", spec, workspace,
                DockerTestSupport.labels(instanceId, "s-nostart"))))
                .isInstanceOf(SandboxAcquireException.class)
                .hasMessageContaining("did not start")
                .hasMessageContaining("sleep");
        assertThat(driver.list(Map.of(SandboxLabels.OWNER, instanceId, SandboxLabels.SESSION, "s-nostart"))).isEmpty();
    }

    @Test
    void reportsPhaseTimingsInOrder() {
        SandboxSpec spec = spec().build();
        String workspace = driver.createWorkspace("s-phases", spec);
        List<String> phases = new java.util.ArrayList<>();
        driver.create(new CreateRequest("s-phases", spec, workspace, DockerTestSupport.labels(instanceId, "s-phases"),
                (phase, took) -> {
                    assertThat(took).isPositive();
                    phases.add(phase);
                }));
        assertThat(phases).containsExactly(SandboxEvent.PHASE_IMAGE_CHECK, SandboxEvent.PHASE_CREATE,
                SandboxEvent.PHASE_START);
    }

    @Test
    void adoptingAPoolWorkdirRenamesItUnderTheRunningContainer() throws IOException {
        String slot = "_pool.abc.1." + instanceId;
        String id = start(driver, instanceId, slot, spec().build());
        driver.exec(id, ExecRequest.shell("echo before > /workspace/before"));

        String adopted = driver.adoptWorkspace(root.resolve(slot).toString(), "s-adopted");

        assertThat(adopted).isEqualTo(root.resolve("s-adopted").toString());
        assertThat(root.resolve(slot)).doesNotExist();
        assertThat(driver.exec(id, ExecRequest.shell("echo after > /workspace/after && cat /workspace/before"))
                .stdout()).isEqualTo("before\n");
        assertThat(Path.of(adopted).resolve("after")).hasContent("after\n");
        assertThat(driver.adoptWorkspace(adopted, "s-adopted")).isEqualTo(adopted);
        String other = driver.createWorkspace("_pool.abc.2." + instanceId, spec().build());
        assertThatThrownBy(() -> driver.adoptWorkspace(other, "s-adopted")).isInstanceOf(SandboxException.class)
                .hasMessageContaining("already exists");
        assertThat(Path.of(other)).isDirectory();
    }

    @Test
    void removeIsIdempotent() {
        String id = start(driver, instanceId, "s-remove", spec().build());

        driver.remove(id);
        assertThatThrownBy(() -> docker.inspectContainerCmd(id).exec()).isInstanceOf(NotFoundException.class);
        assertThatCode(() -> driver.remove(id)).doesNotThrowAnyException();
        assertThatCode(() -> driver.remove("0123456789ab" + "0".repeat(52))).doesNotThrowAnyException();
    }

    @Test
    @Tag("slow") // twelve rounds of a real race: the full tier's, like the module's other races
    void aRemovalCutShortByAnInterruptIsFinishedByTheNextOne() throws Exception {
        // The MCP server's shutdown interrupts the thread that destroys a session (issue 29, StdioIT): the engine gives
        // up a removal whose client went away, and the next removal must not take "already in progress" for done.
        java.util.Random random = new java.util.Random(29);
        for (int round = 0; round < 12; round++) {
            String id = start(driver, instanceId, "s-cut-" + round, spec().build());
            Thread cut = new Thread(() -> {
                try {
                    driver.remove(id);
                } catch (SandboxException interrupted) {
                    // expected when the interrupt lands during the call
                }
            });
            cut.start();
            Thread.sleep(random.nextInt(60));
            cut.interrupt();
            cut.join(30_000);
            driver.remove(id);
            assertThatThrownBy(() -> docker.inspectContainerCmd(id).exec()).as("round " + round)
                    .isInstanceOf(NotFoundException.class);
        }
    }

    @Test
    void listsByLabelsRunningOrNot() {
        Instant before = Instant.now().minusSeconds(2);
        String a = start(driver, instanceId, "s-list-a", spec().build());
        String b = start(driver, instanceId, "s-list-b", spec().label("kind", "b").build());
        docker.stopContainerCmd(b).withTimeout(1).exec();

        List<SandboxDescriptor> onlyA = driver.list(Map.of(SandboxLabels.OWNER, instanceId, SandboxLabels.SESSION, "s-list-a"));
        assertThat(onlyA).singleElement().satisfies(d -> {
            assertThat(d.id()).isEqualTo(a);
            assertThat(d.sessionId()).isEqualTo("s-list-a");
            assertThat(d.owner()).isEqualTo(instanceId);
            assertThat(d.running()).isTrue();
            assertThat(d.createdAt()).isAfter(before).isBefore(Instant.now().plusSeconds(2));
        });
        List<SandboxDescriptor> onlyB = driver.list(Map.of(SandboxLabels.OWNER, instanceId, "kind", "b"));
        assertThat(onlyB).singleElement().satisfies(d -> {
            assertThat(d.id()).isEqualTo(b);
            assertThat(d.running()).isFalse();
            assertThat(d.labels()).containsEntry("kind", "b");
        });
        assertThat(driver.list(Map.of(SandboxLabels.OWNER, instanceId))).extracting(SandboxDescriptor::id).contains(a, b);
        assertThat(driver.list(Map.of(SandboxLabels.OWNER, "nobody-" + instanceId))).isEmpty();
    }

    @Test
    void deleteWorkspaceNeverFollowsLinksPlantedByTheContainer() throws IOException {
        Path outside = Files.createTempDirectory(root.getParent(), "outside-");
        Files.writeString(outside.resolve("keep.txt"), "precious");
        Files.createDirectory(outside.resolve("subdir"));
        Files.writeString(outside.resolve("subdir").resolve("also-keep.txt"), "precious");
        String id = start(driver, instanceId, "s-symlink", spec().build());
        String plant = String.join(" && ",
                "ln -s " + outside + " /workspace/link",
                "ln -s " + outside.resolve("keep.txt") + " /workspace/filelink",
                "mkdir -p /workspace/deep/er && ln -s " + outside + " /workspace/deep/er/link",
                "ln -s " + outside.resolve("subdir") + " /workspace/deep/dirlink",
                "mkfifo /workspace/fifo",
                "mkdir -p /workspace/locked/inner && touch /workspace/locked/inner/f && chmod 000 /workspace/locked",
                "echo planted");
        assertThat(driver.exec(id, ExecRequest.shell(plant)).stdout()).isEqualTo("planted\n");
        Path workspace = root.resolve("s-symlink");
        assertThat(workspace.resolve("link").resolve("keep.txt")).hasContent("precious"); // it does resolve on the host

        driver.remove(id);
        driver.deleteWorkspace(workspace.toString());

        assertThat(workspace).doesNotExist();
        assertThat(outside.resolve("keep.txt")).hasContent("precious");
        assertThat(outside.resolve("subdir").resolve("also-keep.txt")).hasContent("precious");
        assertThatCode(() -> driver.deleteWorkspace(workspace.toString())).doesNotThrowAnyException();
    }

    @Test
    void workspacesAreCheckedAndOnlyDirectChildrenOfTheRootAreDeleted() throws IOException {
        SandboxSpec spec = spec().build();
        String ws = driver.createWorkspace("s-ws", spec);
        assertThat(driver.createWorkspace("s-ws", spec)).isEqualTo(ws).isEqualTo(root.resolve("s-ws").toString());

        Path outside = Files.createTempDirectory(root.getParent(), "target-");
        Files.createSymbolicLink(root.resolve("s-evil"), outside);
        assertThatThrownBy(() -> driver.createWorkspace("s-evil", spec)).isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("symbolic link");
        Files.writeString(root.resolve("s-file"), "x");
        assertThatThrownBy(() -> driver.createWorkspace("s-file", spec)).isInstanceOf(SandboxConfigurationException.class);

        assertThatThrownBy(() -> driver.deleteWorkspace(outside.toString())).isInstanceOf(SandboxConfigurationException.class);
        assertThatThrownBy(() -> driver.deleteWorkspace(root.resolve("s-ws/../../x").toString()))
                .isInstanceOf(SandboxConfigurationException.class);
        driver.deleteWorkspace(root.resolve("s-evil").toString()); // removes the link only
        assertThat(root.resolve("s-evil")).doesNotExist();
        assertThat(outside).isDirectory();
        driver.deleteWorkspace(ws);
        assertThat(Path.of(ws)).doesNotExist();
    }

    @Test
    void unreachableEngineIsReportedNamingTheEndpoint() {
        String socket = "/tmp/sandboxkit-no-engine-" + instanceId + ".sock";
        try (SandboxDriver bogus = new DockerDriverProvider()
                .create(context(instanceId, root, Map.of("docker.host", "unix://" + socket)))) {
            assertThatThrownBy(bogus::ping).isInstanceOf(SandboxUnavailableException.class)
                    .hasMessageContaining("Docker engine at unix://" + socket + " is unreachable");
            assertThatThrownBy(() -> bogus.exec("abc", ExecRequest.of("true")))
                    .isInstanceOf(SandboxUnavailableException.class).hasMessageContaining(socket);
            assertThatThrownBy(() -> bogus.list(Map.of())).isInstanceOf(SandboxUnavailableException.class)
                    .hasMessageContaining(socket);
            assertThatThrownBy(() -> bogus.remove("abc")).isInstanceOf(SandboxUnavailableException.class)
                    .hasMessageContaining(socket);
        }
        assertThatCode(driver::ping).doesNotThrowAnyException();
    }

    @Test
    void serviceLoaderFindsTheDockerProvider() {
        List<SandboxDriverProvider> providers = ServiceLoader.load(SandboxDriverProvider.class).stream()
                .map(ServiceLoader.Provider::get).toList();
        assertThat(providers).filteredOn(p -> p.name().equals("docker")).singleElement().satisfies(p -> {
            assertThat(p).isInstanceOf(DockerDriverProvider.class);
            assertThat(p.priority()).isEqualTo(100);
            assertThat(p.unavailableReason(context(instanceId, root))).isEmpty();
            assertThat(p.unavailableReason(context(instanceId, root, Map.of("docker.host", "tcp://127.0.0.1:1"))))
                    .isEmpty();
            assertThat(p.unavailableReason(context(instanceId, root, Map.of("docker.host", "unix:///nope/docker.sock"))))
                    .hasValueSatisfying(r -> assertThat(r).contains("/nope/docker.sock"));
        });
        assertThat(driver.name()).isEqualTo("docker");
        assertThat(driver.computeCapabilities()).containsExactlyInAnyOrder(ComputeCapability.STDIN,
                ComputeCapability.KILL_PROCESS_GROUP, ComputeCapability.STREAMING, ComputeCapability.REAL_PROCESSES,
                ComputeCapability.PORT_FORWARD, ComputeCapability.BACKGROUND_PROCESSES, ComputeCapability.TTY);
        assertThat(driver.workspaceCapabilities()).containsExactlyInAnyOrder(WorkspaceCapability.HOST_WORKSPACE,
                WorkspaceCapability.FILES, WorkspaceCapability.SNAPSHOTS, WorkspaceCapability.WORKSPACE_ARCHIVE,
                WorkspaceCapability.DIRECTORY_TEMPLATES);
        // The deprecated single set, derived from the two.
        assertThat(driver.capabilities()).containsExactlyInAnyOrder(DriverCapability.STDIN,
                DriverCapability.KILL_PROCESS_GROUP, DriverCapability.STREAMING, DriverCapability.HOST_WORKSPACE,
                DriverCapability.REAL_PROCESSES, DriverCapability.FILES, DriverCapability.SNAPSHOTS,
                DriverCapability.WORKSPACE_ARCHIVE, DriverCapability.DIRECTORY_TEMPLATES, DriverCapability.PORT_FORWARD,
                DriverCapability.BACKGROUND_PROCESSES, DriverCapability.TTY);
    }

    @Test
    void tlsWithoutCaAndBadSettingsAreRejectedAtCreation() {
        DockerDriverProvider p = new DockerDriverProvider();
        // TLS without a CA to verify the engine with (no docker.certPath, DOCKER_CERT_PATH or ~/.docker/ca.pem).
        assertThatThrownBy(() -> p.create(context(instanceId, root, Map.of("docker.host", "https://127.0.0.1:2376",
                "docker.certPath", root.resolve("no-certs").toString()))))
                .isInstanceOf(DockerTlsException.class)
                .hasMessageContaining("no CA certificate at " + root.resolve("no-certs/ca.pem"));
        assertThatThrownBy(() -> p.create(context(instanceId, root, Map.of("docker.defaultUser", "nobody"))))
                .isInstanceOf(SandboxConfigurationException.class);
        for (String tooLarge : new String[] {"2147483648", "1000:4294967294", "4294967295", "99999999999"}) {
            assertThatThrownBy(() -> p.create(context(instanceId, root, Map.of("docker.defaultUser", tooLarge))))
                    .as(tooLarge).isInstanceOf(SandboxConfigurationException.class)
                    .hasMessageContaining("docker.defaultUser");
        }
        assertThatThrownBy(() -> p.create(context(instanceId, root, Map.of("docker.host", "ssh://host"))))
                .isInstanceOf(SandboxConfigurationException.class);
    }

    private String build(Path context, String name) {
        String image = name + ":" + instanceId;
        DockerTestSupport.docker(context, "build", "-q", "-t", image, ".");
        images.add(image);
        return image;
    }
}
