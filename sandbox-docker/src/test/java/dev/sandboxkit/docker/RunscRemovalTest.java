package dev.sandboxkit.docker;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ExecResult.Termination;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A running exec whose gVisor container is removed behind the driver's back ({@code docker rm -f}): the
 * engine may keep the exec's stream open for good, so the driver notices the silence, finds the container
 * gone and reports {@code KILLED} (it used to wait for the command's timeout).
 */
@Tag("gvisor")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@DisplayName("gVisor: an exec whose container is removed behind the driver ends KILLED")
class RunscRemovalTest extends DriverOnDocker {
    private static final int ROUNDS = 4;

    @Override
    String tempPrefix() {
        return "sbx-runsc-rm-";
    }

    @BeforeAll
    void runscRegistered() {
        DockerTestSupport.requireRuntime("runsc");
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = ExecMode.class, names = {"PLAIN", "CHANNEL"})
    void aRemovalBehindTheDriverEndsTheExec(ExecMode mode) throws Exception {
        for (int round = 0; round < ROUNDS; round++) {
            String id = DockerTestSupport.start(driver, instanceId, "gone-" + mode + "-" + round,
                    DockerTestSupport.spec().runtime("runsc").execMode(mode).build());
            Future<ExecResult> running = threads.submit(() -> driver.exec(id,
                    ExecRequest.shell("echo before; touch m; sleep 60").withTimeout(Duration.ofSeconds(90))));
            while (driver.exec(id, ExecRequest.of("test", "-e", "m")).exitCode() != 0) {
                Thread.sleep(20);
            }
            DockerTestSupport.docker(Path.of("."), "rm", "-f", id);
            long t0 = System.nanoTime();
            ExecResult r = running.get(30, TimeUnit.SECONDS);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertThat(r.termination()).as("round %d after %d ms: %s", round, ms, r).isEqualTo(Termination.KILLED);
            assertThat(r.stdout()).isEqualTo("before\n");
            assertThat(ms).as("noticed within a few liveness checks").isLessThan(10_000);
            driver.remove(id);
        }
    }
}
