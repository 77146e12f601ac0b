package dev.sandboxkit.docker.internal.workdir;

import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.docker.internal.engine.EngineClient;
import dev.sandboxkit.docker.internal.engine.FakeEngine;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static dev.sandboxkit.docker.internal.engine.FakeEngine.response;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * runc's cgroup-v1 freezer gives up ("unable to freeze") when it meets a process mid-fork; CI saw it under load.
 * A files call retries the pause a few times before refusing, and still refuses other errors at once.
 */
class VolumeFreezeRetryTest {
    private static final String VERSION = response(200, "{\"ApiVersion\":\"1.41\",\"MinAPIVersion\":\"1.12\"}");
    private static final String LISTING = response(200, "[{\"Id\":\"c1\",\"Labels\":{}}]");
    private static final String UNABLE = response(500, "{\"message\":\"Cannot pause container c1: OCI runtime pause "
            + "failed: unable to freeze: unknown\"}");

    @Test
    @DisplayName("a transient 'unable to freeze' is retried and the call runs frozen")
    void transientFreezeFailureIsRetried() throws Exception {
        AtomicInteger pauses = new AtomicInteger();
        AtomicInteger unpauses = new AtomicInteger();
        try (FakeEngine engine = new FakeEngine(line -> answer(line, pauses, unpauses, 2, UNABLE), false);
             EngineClient client = new EngineClient(engine.host())) {
            boolean live = new VolumeFreeze(client).around("v1", frozen -> frozen);
            assertThat(live).isTrue();
            assertThat(pauses).hasValue(3);
            assertThat(unpauses).hasValue(1);
        }
    }

    @Test
    @DisplayName("a freeze that keeps failing is refused after a bounded number of attempts")
    void persistentFreezeFailureIsRefused() throws Exception {
        AtomicInteger pauses = new AtomicInteger();
        AtomicInteger unpauses = new AtomicInteger();
        try (FakeEngine engine = new FakeEngine(line -> answer(line, pauses, unpauses, 100, UNABLE), false);
             EngineClient client = new EngineClient(engine.host())) {
            assertThatThrownBy(() -> new VolumeFreeze(client).around("v1", frozen -> frozen))
                    .isInstanceOf(SandboxFileException.class).hasMessageContaining("unable to freeze");
            assertThat(pauses).hasValue(VolumeFreeze.PAUSE_ATTEMPTS);
            assertThat(unpauses).hasValue(0);
        }
    }

    @Test
    @DisplayName("any other pause error is refused at once")
    void otherErrorsAreNotRetried() throws Exception {
        AtomicInteger pauses = new AtomicInteger();
        AtomicInteger unpauses = new AtomicInteger();
        String other = response(500, "{\"message\":\"permission denied\"}");
        try (FakeEngine engine = new FakeEngine(line -> answer(line, pauses, unpauses, 100, other), false);
             EngineClient client = new EngineClient(engine.host())) {
            assertThatThrownBy(() -> new VolumeFreeze(client).around("v1", frozen -> frozen))
                    .isInstanceOf(SandboxFileException.class).hasMessageContaining("permission denied");
            assertThat(pauses).hasValue(1);
        }
    }

    /** One running container on the volume; its first {@code failures} pauses get {@code failure}. */
    private static String answer(String line, AtomicInteger pauses, AtomicInteger unpauses, int failures,
                                 String failure) {
        if (line.startsWith("GET /version")) {
            return VERSION;
        }
        if (line.startsWith("GET ") && line.contains("/containers/json")) {
            return LISTING;
        }
        if (line.contains("/unpause")) {
            unpauses.incrementAndGet();
            return response(204, "");
        }
        if (line.contains("/pause")) {
            return pauses.incrementAndGet() <= failures ? failure : response(204, "");
        }
        return response(404, "{\"message\":\"no such thing\"}");
    }
}
