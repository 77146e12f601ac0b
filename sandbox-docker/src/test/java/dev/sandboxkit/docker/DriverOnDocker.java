package dev.sandboxkit.docker;

import com.github.dockerjava.api.DockerClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static dev.sandboxkit.docker.DockerTestSupport.context;

/**
 * Base of the tests that drive the Docker driver through the SPI: one driver, engine client, temp workspace
 * root and thread pool per class, and a label sweep of everything the class created when it ends.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class DriverOnDocker {
    final String instanceId = DockerTestSupport.newInstanceId();
    /** Images the class built; removed at the end. */
    final List<String> images = new ArrayList<>();
    Path root;
    DockerSandboxDriver driver;
    DockerClient docker;
    ExecutorService threads;

    /** Prefix of the class's temp directory. */
    abstract String tempPrefix();

    @BeforeAll
    void startDriver() throws IOException {
        DockerTestSupport.requireEngine();
        root = Files.createTempDirectory(tempPrefix()).resolve("workspaces");
        driver = (DockerSandboxDriver) new DockerDriverProvider().create(context(instanceId, root));
        docker = DockerTestSupport.dockerClient();
        threads = Executors.newCachedThreadPool();
    }

    /**
     * Builds (once per name) an image without a shell: busybox at {@code /bin/busybox} and {@code /bin/sleep} only,
     * removed when the class ends.
     */
    String noShellImage(String name) throws IOException {
        Path ctx = Files.createTempDirectory(root.getParent(), "build-");
        Files.writeString(ctx.resolve("Dockerfile"), "FROM " + DockerTestSupport.IMAGE + " AS src\n"
                + "FROM scratch\n"
                + "COPY --from=src /bin/busybox /bin/busybox\n"
                + "RUN [\"/bin/busybox\", \"ln\", \"-s\", \"busybox\", \"/bin/sleep\"]\n");
        String image = name + ":" + instanceId;
        DockerTestSupport.docker(ctx, "build", "-q", "-t", image, ".");
        images.add(image);
        return image;
    }

    @AfterAll
    void stopDriver() {
        if (threads != null) {
            threads.shutdownNow();
        }
        DockerTestSupport.cleanUp(instanceId, driver, docker, images, root == null ? null : root.getParent());
    }
}
