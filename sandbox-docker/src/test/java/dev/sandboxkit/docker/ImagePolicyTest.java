package dev.sandboxkit.docker;

import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.docker.internal.engine.FakeEngine;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.SandboxDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import static dev.sandboxkit.docker.internal.engine.FakeEngine.response;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Image policy and create/start error handling against a scripted engine (no registry here: the real
 * engine must never pull in these tests).
 */
class ImagePolicyTest {
    @TempDir
    Path root;
    private FakeEngine engine;
    private SandboxDriver driver;

    @AfterEach
    void stop() throws IOException {
        if (driver != null) {
            driver.close();
        }
        if (engine != null) {
            engine.close();
        }
    }

    @Test
    void aFailedPullNamesTheImageAndTheCause() throws IOException {
        start(request -> {
            if (request.startsWith("GET ") && request.contains("/images/")) {
                return response(404, "{\"message\":\"No such image: example.invalid/agent:latest\"}");
            }
            if (request.startsWith("POST ") && request.contains("/images/create")) {
                return response(200, "{\"status\":\"Pulling from agent\"}\n"
                        + "{\"errorDetail\":{\"message\":\"manifest unknown\"},\"error\":\"manifest unknown\"}\n");
            }
            return response(500, "{\"message\":\"unexpected " + request + "\"}");
        });

        assertThatThrownBy(() -> create(spec("example.invalid/agent", PullPolicy.IF_MISSING)))
                .isInstanceOf(SandboxAcquireException.class)
                .hasMessageContaining("example.invalid/agent")
                .hasMessageContaining("manifest unknown");
        assertThat(engine.requests).anySatisfy(r -> assertThat(r).startsWith("POST").contains("/images/create")
                .contains("fromImage=example.invalid%2Fagent").contains("tag=latest"));
        assertThat(engine.requests).noneMatch(r -> r.contains("/containers/create"));
    }

    @Test
    void aCachedImageThatVanishedIsReportedAsMissing() throws IOException {
        AtomicBoolean imageGone = new AtomicBoolean();
        start(request -> {
            if (request.startsWith("GET ") && request.contains("/images/")) {
                return imageGone.get() ? response(404, "{\"message\":\"No such image: img:1\"}")
                        : response(200, "{\"Id\":\"sha256:abc\"}");
            }
            if (request.contains("/containers/create")) {
                return imageGone.get() ? response(404, "{\"message\":\"No such image: img:1\"}")
                        : response(201, "{\"Id\":\"c1\",\"Warnings\":[]}");
            }
            if (request.contains("/containers/c1/start")) {
                return "HTTP/1.1 204 No Content\r\n\r\n";
            }
            if (request.contains("/containers/c1/json")) {
                return response(200, "{\"Id\":\"c1\",\"State\":{\"Running\":true,\"Status\":\"running\"}}");
            }
            return response(500, "{\"message\":\"unexpected " + request + "\"}");
        });
        SandboxSpec spec = spec("img:1", PullPolicy.NEVER);

        assertThat(create(spec)).isEqualTo("c1");
        assertThat(create(spec)).isEqualTo("c1");
        assertThat(engine.requests).filteredOn(r -> r.contains("/images/")).hasSize(1); // cached after the first
        imageGone.set(true);
        assertThatThrownBy(() -> create(spec)).isInstanceOf(SandboxAcquireException.class)
                .hasMessage("image img:1 is not present locally and the pull policy is NEVER");
        assertThatThrownBy(() -> create(spec)).isInstanceOf(SandboxAcquireException.class)
                .hasMessage("image img:1 is not present locally and the pull policy is NEVER");
        // The cache entry was dropped: the last attempt inspected again instead of trying to create.
        assertThat(engine.requests.get(engine.requests.size() - 1)).contains("/images/");
    }

    @Test
    void aContainerThatFailsToStartIsRemoved() throws IOException {
        start(request -> {
            if (request.startsWith("GET ") && request.contains("/images/")) {
                return response(200, "{\"Id\":\"sha256:abc\"}");
            }
            if (request.contains("/containers/create")) {
                return response(201, "{\"Id\":\"c2\",\"Warnings\":[]}");
            }
            if (request.contains("/containers/c2/start")) {
                return response(500, "{\"message\":\"failed to create shim task: boom\"}");
            }
            if (request.startsWith("DELETE ") && request.contains("/containers/c2")) {
                return "HTTP/1.1 204 No Content\r\n\r\n";
            }
            return response(500, "{\"message\":\"unexpected " + request + "\"}");
        });

        assertThatThrownBy(() -> create(spec("img:2", PullPolicy.NEVER))).isInstanceOf(SandboxAcquireException.class)
                .hasMessageContaining("did not start").hasMessageContaining("boom");
        assertThat(engine.requests).anySatisfy(r -> assertThat(r).startsWith("DELETE").contains("/containers/c2")
                .contains("force=true"));
    }

    private void start(java.util.function.Function<String, String> handler) throws IOException {
        // The driver's own client negotiates the API version first (it reads container state itself).
        engine = new FakeEngine(request -> request.startsWith("GET /version ")
                ? response(200, "{\"ApiVersion\":\"1.41\",\"MinAPIVersion\":\"1.12\",\"Components\":[{\"Name\":"
                        + "\"Engine\"}]}")
                : handler.apply(request), false);
        driver = new DockerDriverProvider().create(DockerTestSupport.context("fake", root.resolve("ws"),
                Map.of("docker.host", engine.uri())));
    }

    private String create(SandboxSpec spec) {
        String workspace = driver.createWorkspace("s", spec);
        return driver.create(new CreateRequest("s", spec, workspace, Map.of()));
    }

    private static SandboxSpec spec(String image, PullPolicy policy) {
        return SandboxSpec.builder().image(image).pullPolicy(policy).build();
    }
}
