package dev.sandboxkit.benchmarks;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.InspectExecResponse;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Mount;
import com.github.dockerjava.api.model.MountType;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The baselines: what a user would write with docker-java directly, and the docker CLI. Same container
 * configuration as the library's hardened default, so that only the library's own overhead differs.
 */
final class RawDocker implements AutoCloseable {
    static final String LABEL = "dev.sandboxkit.benchmark";
    final DockerClient docker;
    private final String image;

    RawDocker(String image) {
        String host = System.getenv().getOrDefault("DOCKER_HOST", "unix:///var/run/docker.sock");
        this.docker = DockerClientImpl.getInstance(DefaultDockerClientConfig.createDefaultConfigBuilder()
                .withDockerHost(host).build(), new ZerodepDockerHttpClient.Builder().dockerHost(URI.create(host)).build());
        this.image = image;
    }

    /** create + start with the library's default hardening and a bind-mounted workdir. */
    String createAndStart(Path workdir) throws IOException {
        Files.createDirectories(workdir);
        HostConfig host = HostConfig.newHostConfig().withInit(true).withNetworkMode("none")
                .withCapDrop(Capability.ALL).withSecurityOpts(List.of("no-new-privileges")).withPidsLimit(512L)
                .withMemory(512L << 20).withMemorySwap(512L << 20)
                .withTmpFs(Map.of("/tmp", "rw,nosuid,nodev,size=67108864"))
                .withMounts(List.of(new Mount().withType(MountType.BIND).withSource(workdir.toString())
                        .withTarget("/workspace")));
        String id = docker.createContainerCmd(image).withEntrypoint("sleep", "infinity").withWorkingDir("/workspace")
                .withUser("10001:10001").withLabels(Map.of(LABEL, "true")).withHostConfig(host).exec().getId();
        docker.startContainerCmd(id).exec();
        return id;
    }

    /** The raw Engine API exec through docker-java: create, start (attached), inspect until the exit code is final. */
    int exec(String containerId, String... cmd) throws InterruptedException {
        String execId = docker.execCreateCmd(containerId).withCmd(cmd).withAttachStdout(true).withAttachStderr(true)
                .exec().getId();
        docker.execStartCmd(execId).exec(new ResultCallback.Adapter<Frame>()).awaitCompletion(60, TimeUnit.SECONDS);
        while (true) {
            InspectExecResponse r = docker.inspectExecCmd(execId).exec();
            if (!Boolean.TRUE.equals(r.isRunning()) && r.getExitCodeLong() != null) {
                return r.getExitCodeLong().intValue();
            }
            Thread.sleep(1);
        }
    }

    /** Like {@link #exec}, counting the stdout bytes instead: returns their number once the exit code is 0. */
    long execCounting(String containerId, String... cmd) throws InterruptedException {
        String execId = docker.execCreateCmd(containerId).withCmd(cmd).withAttachStdout(true).withAttachStderr(true)
                .exec().getId();
        long[] bytes = new long[1];
        docker.execStartCmd(execId).exec(new ResultCallback.Adapter<Frame>() {
            @Override
            public void onNext(Frame frame) {
                if (frame.getStreamType() == com.github.dockerjava.api.model.StreamType.STDOUT) {
                    bytes[0] += frame.getPayload().length;
                }
            }
        }).awaitCompletion(120, TimeUnit.SECONDS);
        while (true) {
            InspectExecResponse r = docker.inspectExecCmd(execId).exec();
            if (!Boolean.TRUE.equals(r.isRunning()) && r.getExitCodeLong() != null) {
                if (r.getExitCodeLong() != 0) {
                    throw new IllegalStateException("exit code " + r.getExitCodeLong());
                }
                return bytes[0];
            }
            Thread.sleep(1);
        }
    }

    /** {@code docker exec <id> cmd...} through the CLI that matches the engine. */
    static int cliExec(String containerId, String... cmd) throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(List.of(cli(), "exec", containerId));
        argv.addAll(List.of(cmd));
        return new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start().waitFor();
    }

    /** {@code docker rm -f} of many containers in one CLI call. */
    static void cliRemove(List<String> ids) throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(List.of(cli(), "rm", "-f"));
        argv.addAll(ids);
        int code = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start().waitFor();
        if (code != 0) {
            throw new IllegalStateException("docker rm -f failed with " + code);
        }
    }

    static String cli() {
        return Files.isExecutable(Path.of("/usr/bin/docker")) ? "/usr/bin/docker" : "docker";
    }

    void remove(String id) {
        docker.removeContainerCmd(id).withForce(true).exec();
    }

    /** Removes every container this harness created directly. */
    void cleanup() {
        docker.listContainersCmd().withShowAll(true).withLabelFilter(Map.of(LABEL, "true")).exec()
                .forEach(c -> remove(c.getId()));
    }

    @Override
    public void close() throws IOException {
        cleanup();
        docker.close();
    }
}
