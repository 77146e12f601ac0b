package dev.sandboxkit.testkit;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.BuildImageResultCallback;
import com.github.dockerjava.api.exception.DockerClientException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import dev.sandboxkit.SandboxUnavailableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The only class that touches docker-java, so that {@link TestImages} loads without it and fails with a
 * clear message instead of a {@code NoClassDefFoundError}.
 */
final class DockerImageBuilder {
    private static final Logger log = LoggerFactory.getLogger(DockerImageBuilder.class);

    private DockerImageBuilder() {
    }

    /** Builds {@code contextDir} as {@code reference} unless the engine has that image already. */
    static void buildIfAbsent(Path contextDir, String reference) {
        String host = SandboxExtension.dockerEndpoint();
        DockerClientConfig config = DefaultDockerClientConfig.createDefaultConfigBuilder().withDockerHost(host).build();
        ZerodepDockerHttpClient http = new ZerodepDockerHttpClient.Builder()
                .dockerHost(config.getDockerHost())
                .sslConfig(config.getSSLConfig())
                .connectionTimeout(Duration.ofSeconds(5))
                .responseTimeout(Duration.ofMinutes(5))
                .build();
        try (DockerClient docker = DockerClientImpl.getInstance(config, http)) {
            try {
                docker.pingCmd().exec();
            } catch (RuntimeException e) {
                throw new SandboxUnavailableException("cannot reach the Docker engine at " + host + " to build "
                        + reference + ": " + e.getMessage() + ". Start Docker (on this project's machines: "
                        + "scripts/setup-docker.sh) or set DOCKER_HOST.", e);
            }
            try {
                docker.inspectImageCmd(reference).exec();
                return; // built before, by this or another JVM: same content, same tag
            } catch (NotFoundException absent) {
                // build it below
            }
            long t0 = System.nanoTime();
            String id;
            try {
                id = docker.buildImageCmd(contextDir.toFile())
                        .withTags(Set.of(reference))
                        .withPull(false)
                        .withRemove(true)
                        .exec(new BuildImageResultCallback())
                        .awaitImageId(5, TimeUnit.MINUTES);
            } catch (DockerClientException | NotFoundException e) {
                throw new IllegalStateException("building test image " + reference + " from " + contextDir
                        + " failed: " + e.getMessage(), e);
            }
            log.info("Built test image {} ({}) in {} ms", reference, id, (System.nanoTime() - t0) / 1_000_000);
        } catch (IOException e) {
            log.debug("Closing the Docker client failed: {}", e.toString());
        }
    }
}
