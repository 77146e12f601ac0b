package dev.sandboxkit.docker;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.testkit.SandboxExtension;
import dev.sandboxkit.testkit.SandboxTest;
import dev.sandboxkit.testkit.TestImages;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * The testkit's {@code @SandboxTest} on this driver: fixture classes run with the JUnit Platform test kit, on the
 * real engine (the extension's other behaviour is tested in sandbox-testkit on a fake driver).
 */
@DisplayName("@SandboxTest on the Docker driver")
class SandboxExtensionOnDockerTest {

    private static EngineExecutionResults run(Class<?> fixture, Map<String, String> systemProperties) {
        Map<String, String> previous = new HashMap<>();
        systemProperties.forEach((k, v) -> previous.put(k, v == null ? System.clearProperty(k) : System.setProperty(k, v)));
        try {
            return EngineTestKit.engine("junit-jupiter").selectors(selectClass(fixture)).execute();
        } finally {
            previous.forEach((k, v) -> {
                if (v == null) {
                    System.clearProperty(k);
                } else {
                    System.setProperty(k, v);
                }
            });
        }
    }

    private static String failures(org.junit.platform.testkit.engine.Events events) {
        return String.join("\n", events.failed().stream().map(e -> e.getTestDescriptor().getDisplayName() + ": "
                + e.getPayload(TestExecutionResult.class).flatMap(TestExecutionResult::getThrowable)
                .map(Throwable::toString).orElse("?")).toList());
    }

    private static Throwable throwableOf(Event event) {
        return event.getPayload(TestExecutionResult.class).flatMap(TestExecutionResult::getThrowable).orElseThrow();
    }

    @Test
    @DisplayName("runs a real sandbox on the default BusyBox image and removes its container and workdir afterwards")
    void realSandbox(@TempDir Path scratch) {
        RealDocker.sessions.clear();
        Map<String, String> props = new HashMap<>();
        props.put(SandboxExtension.IMAGE_PROPERTY, null); // let the extension build its default image

        EngineExecutionResults results = run(RealDocker.class, props);

        assertThat(results.testEvents().succeeded().count()).as(failures(results.allEvents())).isEqualTo(1);
        assertThat(RealDocker.image).startsWith(TestImages.BUSYBOX_REPOSITORY + ":");
        assertThat(RealDocker.workspace).doesNotExist();
        try (SandboxDriver docker = new DockerDriverProvider().create(
                new DriverContext("verify", scratch, Clock.systemUTC(), Map.of()))) {
            for (String id : RealDocker.sessions) {
                assertThat(docker.list(Map.of(SandboxLabels.SESSION, id))).as("containers of %s", id).isEmpty();
            }
        }
    }

    @Test
    @DisplayName("an unreachable engine fails, naming the driver, the endpoint and how to fix it")
    void unreachableEngine() {
        Map<String, String> props = new HashMap<>();
        props.put("sandboxkit.docker.host", "unix:///nonexistent/docker.sock");
        props.put(SandboxExtension.CI_PROPERTY, "false");

        EngineExecutionResults results = run(DockerMissing.class, props);

        assertThat(results.allEvents().aborted().count()).isZero();
        Event failed = results.allEvents().failed().stream().findFirst().orElseThrow();
        assertThat(throwableOf(failed)).isInstanceOf(SandboxUnavailableException.class)
                .hasMessageContaining("'docker'").hasMessageContaining("unix:///nonexistent/docker.sock")
                .hasMessageContaining("scripts/setup-docker.sh");
    }

    // ------------------------------------------------------------------ fixtures

    @SandboxTest(driver = "docker")
    static class RealDocker {
        static final List<String> sessions = new CopyOnWriteArrayList<>();
        static String image;
        static Path workspace;

        @Test
        void tool(Sandbox sandbox, SandboxManager manager, SandboxSpec spec) {
            image = spec.image();
            sessions.add(sandbox.sessionId());
            ExecResult r = sandbox.exec(ExecRequest.shell("echo hello > note.txt && cat note.txt"));
            assertThat(r.stdout()).isEqualTo("hello\n");
            workspace = Path.of(sandbox.info().workspace());
            assertThat(workspace.resolve("note.txt")).exists();
            sessions.add(manager.acquire("second-" + sandbox.sessionId(), spec).sessionId());
        }
    }

    @SandboxTest(driver = "docker", skipIfUnavailable = false)
    static class DockerMissing {
        @Test
        void test(Sandbox sandbox) {
            assertThat(sandbox).isNotNull();
        }
    }
}
