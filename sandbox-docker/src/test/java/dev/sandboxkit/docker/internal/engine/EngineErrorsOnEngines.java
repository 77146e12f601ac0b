package dev.sandboxkit.docker.internal.engine;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Provokes on a real engine each refusal {@link EngineErrors} classifies, through the driver's own client, and
 * checks the classification: a subclass per engine (runc, runsc, Podman) says where.
 */
abstract class EngineErrorsOnEngines {
    static final String IMAGE = System.getProperty("sandboxkit.test.image", "sandboxkit-test:latest");
    private final List<String> created = new ArrayList<>();
    EngineClient client;

    /** The engine's address. */
    abstract String address();

    /** The runtime the container asks for, or {@code null} for the engine's default. */
    abstract String runtime();

    /** Podman words some refusals differently (500 with a cause instead of 409). */
    abstract boolean podman();

    @BeforeEach
    void connect() {
        client = new EngineClient(DockerHost.parse(address()));
    }

    @AfterEach
    void cleanUp() throws IOException {
        for (String id : created) {
            client.call("DELETE", "/containers/" + id + "?force=1", null);
        }
        client.close();
    }

    @Test
    void execInRemovedContainerIsNotFound() throws IOException {
        String id = create();
        assertThat(client.call("DELETE", "/containers/" + id + "?force=1", null).status()).isIn(200, 204);
        EngineClient.Response r = exec(id, "true");
        assertThat(r.status()).as(r.message()).isEqualTo(404);
    }

    @Test
    void execInStoppedContainerIsNotRunning() throws IOException {
        String id = create();
        EngineClient.Response r = exec(id, "true");
        if (podman()) {
            // 500 "can only create exec sessions on running containers: container state improper"
            assertThat(EngineErrors.notRunning(r.status(), r.message())).as(r.message()).isFalse();
            assertThat(EngineErrors.removal(r.message())).as(r.message()).isTrue();
        } else {
            assertThat(EngineErrors.notRunning(r.status(), r.message())).as(r.message()).isTrue();
        }
        assertThat(EngineErrors.commandFailure(r.message())).as(r.message()).isFalse();
    }

    @Test
    void missingBinaryIsTheCommandsFaultWithExitCode127() throws IOException {
        String id = create();
        assertThat(client.call("POST", "/containers/" + id + "/start", null).status()).isIn(204, 304);
        EngineClient.Response e = exec(id, "/sbk-no-such-binary");
        assertThat(e.status()).as(e.message()).isEqualTo(201);
        ObjectNode detach = EngineClient.JSON.createObjectNode().put("Detach", true);
        EngineClient.Response r = client.call("POST", "/exec/" + e.json().get("Id").asText() + "/start", detach);
        assertThat(r.status()).as(r.message()).isNotIn(200, 101);
        assertThat(EngineErrors.commandFailure(r.message())).as(r.message()).isTrue();
        assertThat(EngineErrors.removal(r.message())).as(r.message()).isFalse();
        assertThat(EngineErrors.startFailureExitCode(r.message())).as(r.message()).isEqualTo(127);
    }

    @Test
    void createWithMissingImageIsNoSuchImage() throws IOException {
        ObjectNode body = EngineClient.JSON.createObjectNode().put("Image", "sbk-no-such-image:" + UUID.randomUUID());
        EngineClient.Response r = client.call("POST", "/containers/create", body);
        assertThat(EngineErrors.noSuchImage(r.status(), r.message())).as(r.status() + " " + r.message()).isTrue();
    }

    @Test
    void createWithUnknownRuntimeIsAboutTheRuntime() throws IOException {
        if (podman()) {
            return; // Podman ignores the runtime a container asks for; the driver refuses such specs before create
        }
        ObjectNode body = EngineClient.JSON.createObjectNode().put("Image", IMAGE);
        body.putObject("HostConfig").put("Runtime", "sbk-no-such-runtime");
        EngineClient.Response r = client.call("POST", "/containers/create", body);
        assertThat(r.status()).as(r.message()).isEqualTo(400);
        assertThat(EngineErrors.aboutRuntime(r.message())).as(r.message()).isTrue();
        assertThat(EngineErrors.noSuchImage(r.status(), r.message())).as(r.message()).isFalse();
    }

    private String create() throws IOException {
        ObjectNode body = EngineClient.JSON.createObjectNode().put("Image", IMAGE);
        body.putArray("Cmd").add("sleep").add("300");
        body.putObject("Labels").put("sbk-test", "engine-errors");
        ObjectNode hostConfig = body.putObject("HostConfig").put("Init", true).put("NetworkMode", "none");
        if (runtime() != null) {
            hostConfig.put("Runtime", runtime());
        }
        EngineClient.Response r = client.call("POST", "/containers/create", body);
        assertThat(r.status()).as(r.message()).isEqualTo(201);
        String id = r.json().get("Id").asText();
        created.add(id);
        return id;
    }

    private EngineClient.Response exec(String id, String command) throws IOException {
        ObjectNode body = EngineClient.JSON.createObjectNode().put("AttachStdout", true).put("AttachStderr", true);
        body.putArray("Cmd").add(command);
        return client.call("POST", "/containers/" + id + "/exec", body);
    }
}
