package dev.sandboxkit.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.docker.internal.engine.DockerHost;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SandboxLabels;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Shared test plumbing. The engine is checked once: unreachable means the tests FAIL, unless
 * {@code -Dsandboxkit.skipDockerTests=true} is set outside CI, which skips them.
 */
final class DockerTestSupport {
    static final String IMAGE = System.getProperty("sandboxkit.test.image", "sandboxkit-test:latest");
    /** The test image plus util-linux script(1): background processes on a terminal need it. */
    static final String SCRIPT_IMAGE = System.getProperty("sandboxkit.test.scriptImage",
            "sandboxkit-test-script:latest");
    private static String engineProblem;
    private static boolean checked;

    private DockerTestSupport() {
    }

    /** Fails (or, when explicitly allowed, skips) unless the engine answers and the test image exists. */
    static synchronized void requireEngine() {
        if (!checked) {
            checked = true;
            engineProblem = probe();
        }
        if (engineProblem == null) {
            return;
        }
        boolean skipAllowed = Boolean.getBoolean("sandboxkit.skipDockerTests") && !"true".equals(System.getenv("CI"));
        if (skipAllowed) {
            Assumptions.abort("Docker tests skipped (-Dsandboxkit.skipDockerTests=true): " + engineProblem);
        }
        Assertions.fail("Docker engine needed by these tests is not usable: " + engineProblem
                + ". Start it with scripts/setup-docker.sh (engine and test images), or pass "
                + "-Dsandboxkit.skipDockerTests=true to skip (not honoured when CI=true).");
    }

    /** As {@link #requireEngine}, and fails (or skips, when allowed) unless {@link #SCRIPT_IMAGE} exists. */
    static void requireScriptImage() {
        requireEngine();
        try (DockerClient docker = dockerClient()) {
            docker.inspectImageCmd(SCRIPT_IMAGE).exec();
        } catch (IOException | RuntimeException e) {
            String problem = "test image " + SCRIPT_IMAGE + " is missing (scripts/build-test-images.sh builds it): " + e;
            if (Boolean.getBoolean("sandboxkit.skipDockerTests") && !"true".equals(System.getenv("CI"))) {
                Assumptions.abort("skipped (-Dsandboxkit.skipDockerTests=true): " + problem);
            }
            Assertions.fail(problem);
        }
    }

    /**
     * Fails unless the engine has the runtime (gVisor's {@code runsc} is registered by scripts/setup-env.sh). Never
     * skips: a CI that lost its runtime must go red, not quietly test runc twice.
     */
    static void requireRuntime(String runtime) {
        requireEngine();
        String runtimes = docker(Path.of("."), "info", "--format", "{{range $k, $v := .Runtimes}}{{$k}} {{end}}");
        if (!List.of(runtimes.trim().split("\\s+")).contains(runtime)) {
            Assertions.fail("the engine has no runtime '" + runtime + "' (it has: " + runtimes.trim() + "); "
                    + "scripts/setup-env.sh registers runsc in /etc/docker/daemon.json");
        }
    }

    private static String probe() {
        DockerHost host = DockerHost.resolve(context("probe", Path.of("/nonexistent")));
        try (DockerClient docker = dockerClient()) {
            docker.pingCmd().exec();
            try {
                docker.inspectImageCmd(IMAGE).exec();
            } catch (RuntimeException e) {
                return "test image " + IMAGE + " is missing (build it as described in /work/shared/ENVIRONMENT.md): " + e;
            }
            return null;
        } catch (IOException | RuntimeException e) {
            return "engine at " + host + " unreachable: " + e;
        }
    }

    static DriverContext context(String instanceId, Path workspaceRoot) {
        return new DriverContext(instanceId, workspaceRoot, Clock.systemUTC(), Map.of());
    }

    static DriverContext context(String instanceId, Path workspaceRoot, Map<String, String> properties) {
        return new DriverContext(instanceId, workspaceRoot, Clock.systemUTC(), properties);
    }

    static String newInstanceId() {
        return "test-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static SandboxSpec.Builder spec() {
        return SandboxSpec.builder().image(IMAGE).pullPolicy(PullPolicy.NEVER);
    }

    static Map<String, String> labels(String instanceId, String sessionId) {
        return Map.of(SandboxLabels.MANAGED, "true", SandboxLabels.OWNER, instanceId, SandboxLabels.SESSION, sessionId);
    }

    /** Creates a workdir and a started sandbox for it. */
    static String start(SandboxDriver driver, String instanceId, String sessionId, SandboxSpec spec) {
        String workspace = driver.createWorkspace(sessionId, spec);
        return driver.create(new CreateRequest(sessionId, spec, workspace, labels(instanceId, sessionId)));
    }

    /**
     * Test-class teardown: removes every container carrying the owner label (through docker-java, not the
     * code under test), the images built, the driver and the temp dir. Runs every step, then rethrows the
     * first failure.
     */
    static void cleanUp(String instanceId, SandboxDriver driver, DockerClient docker, List<String> images, Path tempDir) {
        List<Runnable> steps = new java.util.ArrayList<>();
        if (docker != null) {
            steps.add(() -> docker.listContainersCmd().withShowAll(true)
                    .withLabelFilter(Map.of(SandboxLabels.OWNER, instanceId)).exec()
                    .forEach(c -> docker.removeContainerCmd(c.getId()).withForce(true).withRemoveVolumes(true).exec()));
            for (String image : images) {
                steps.add(() -> docker.removeImageCmd(image).withForce(true).exec());
            }
        }
        if (driver != null) {
            steps.add(driver::close);
        }
        if (docker != null) {
            steps.add(() -> {
                try {
                    docker.close();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
        if (tempDir != null) {
            steps.add(() -> deleteTree(tempDir));
        }
        RuntimeException first = null;
        for (Runnable step : steps) {
            try {
                step.run();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /**
     * After a manager test: closes the manager, force-removes any container still labelled with its instance id
     * (so that a failure leaks nothing), fails if there was one, and closes the client.
     */
    static void closeAndCheckNothingLeft(dev.sandboxkit.SandboxManager manager, DockerClient docker) {
        try {
            manager.close();
            var left = docker.listContainersCmd().withShowAll(true)
                    .withLabelFilter(Map.of(SandboxLabels.OWNER, manager.instanceId())).exec();
            left.forEach(c -> docker.removeContainerCmd(c.getId()).withForce(true).exec());
            Assertions.assertTrue(left.isEmpty(), () -> "containers left: " + left.size());
        } finally {
            try {
                docker.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    static DockerClient dockerClient() {
        String host = DockerHost.resolve(context("probe", Path.of("/nonexistent"))).dockerJavaHost();
        return DockerClientImpl.getInstance(
                DefaultDockerClientConfig.createDefaultConfigBuilder().withDockerHost(host).withDockerTlsVerify(false).build(),
                new ZerodepDockerHttpClient.Builder().dockerHost(URI.create(host)).build());
    }

    /** Runs the docker CLI (for image builds); returns stdout. */
    static String docker(Path dir, String... args) {
        return cli(dir, null, args);
    }

    /** Runs the docker CLI against another engine (Podman's socket, say); returns stdout. */
    static String dockerAt(String host, String... args) {
        return cli(Path.of("."), host, args);
    }

    /** Runs the docker CLI with extra environment variables (DOCKER_CONFIG, say); returns stdout. */
    static String cliWithEnv(Map<String, String> env, String... args) {
        return cli(Path.of("."), null, env, args);
    }

    private static String cli(Path dir, String host, String... args) {
        return cli(dir, host, Map.of(), args);
    }

    private static String cli(Path dir, String host, Map<String, String> env, String... args) {
        List<String> cmd = new java.util.ArrayList<>(List.of("docker"));
        cmd.addAll(List.of(args));
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true);
            if (host != null) {
                pb.environment().put("DOCKER_HOST", host);
            }
            pb.environment().putAll(env);
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(cmd + " failed: " + out);
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Deletes a directory tree as root would, not following links (test cleanup only). */
    static void deleteTree(Path root) {
        if (!Files.exists(root, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
