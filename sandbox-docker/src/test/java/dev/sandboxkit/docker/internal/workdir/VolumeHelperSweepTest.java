package dev.sandboxkit.docker.internal.workdir;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.docker.ManagerOnDockerTest;
import dev.sandboxkit.docker.internal.engine.DockerHost;
import dev.sandboxkit.docker.internal.engine.EngineClient;
import dev.sandboxkit.docker.internal.engine.EngineControl;
import dev.sandboxkit.docker.internal.engine.EngineDiscovery;
import dev.sandboxkit.docker.internal.files.FilesTestSupport;
import dev.sandboxkit.spi.DriverContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Helper containers a crashed driver left behind are removed by another driver's sweep, and a driver whose helper
 * was swept under it makes a new one on its next call (the engine's 404 for the container is told apart from a
 * missing path). Real engine; the grace period is 0 here instead of 10 minutes.
 */
@Tag("volume")
@DisplayName("Volume helpers: leftover sweep and recovery (real Docker)")
class VolumeHelperSweepTest {
    @TempDir
    Path tmp;
    private DockerClient docker;
    private EngineClient engine;
    private final String owner = "sweep-" + UUID.randomUUID().toString().substring(0, 8);

    @BeforeEach
    void engine() throws java.io.IOException {
        ManagerOnDockerTest.EngineCheck.requireEngine().close();
        DockerHost host = EngineDiscovery.system().resolve(new DriverContext(owner, tmp, Clock.systemUTC(), Map.of()));
        docker = DockerClientImpl.getInstance(DefaultDockerClientConfig.createDefaultConfigBuilder()
                .withDockerHost(host.dockerJavaHost()).withDockerTlsVerify(false).build(),
                new ZerodepDockerHttpClient.Builder().dockerHost(URI.create(host.dockerJavaHost())).build());
        engine = new EngineClient(host);
    }

    @AfterEach
    void close() throws Exception {
        List<Container> left = helpers();
        left.forEach(c -> docker.removeContainerCmd(c.getId()).withForce(true).exec());
        engine.close();
        docker.close();
        assertThat(left).as("helpers left").isEmpty();
    }

    private List<Container> helpers() {
        return docker.listContainersCmd().withShowAll(true)
                .withLabelFilter(Map.of(dev.sandboxkit.spi.SandboxLabels.OWNER, owner)).exec();
    }

    @Test
    @DisplayName("a crash's one-off container is swept, another manager's helper is not; a helper removed under a driver is recreated")
    void leftoversSweptHelpersRecovered() {
        SandboxSpec spec = FilesTestSupport.spec().build();
        VolumeWorkdirs first = new VolumeWorkdirs(new EngineControl(engine), owner, tmp, "10001:10001", 0);
        VolumeWorkdirs other = new VolumeWorkdirs(new EngineControl(engine), owner + "-other", tmp, "10001:10001", 0);
        String ws = first.create("sweep-session", spec);
        String volume = ws.substring(VolumeWorkdirs.PREFIX.length());
        try {
            first.files(ws, spec, FileLimits.DEFAULT).write("a.txt", "one".getBytes(StandardCharsets.UTF_8));
            List<Container> before = helpers();
            assertThat(before).hasSize(1);
            String leftover = docker.createContainerCmd(spec.image()).withEntrypoint("true")
                    .withLabels(Map.of(dev.sandboxkit.spi.SandboxLabels.MANAGED, "true", dev.sandboxkit.spi.SandboxLabels.OWNER,
                            owner, VolumeWorkdirs.ROLE, VolumeWorkdirs.RUN, VolumeWorkdirs.VOLUME, volume))
                    .exec().getId();

            other.sweep(); // grace 0: the one-off is a leftover; first's helper belongs to a live manager

            assertThat(helpers()).extracting(Container::getId).containsExactly(before.get(0).getId())
                    .doesNotContain(leftover);

            docker.removeContainerCmd(before.get(0).getId()).withForce(true).exec(); // removed under first
            assertThat(first.files(ws, spec, FileLimits.DEFAULT).readBytes("a.txt"))
                    .isEqualTo("one".getBytes(StandardCharsets.UTF_8));
            assertThat(helpers()).hasSize(1).extracting(Container::getId).doesNotContain(before.get(0).getId());
            first.sweep(); // its own helper is held: kept
            assertThat(helpers()).hasSize(1);
        } finally {
            first.delete(ws);
            first.close();
            other.close();
        }
        assertThat(helpers()).isEmpty();
    }
}
