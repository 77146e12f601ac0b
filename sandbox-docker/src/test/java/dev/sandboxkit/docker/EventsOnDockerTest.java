package dev.sandboxkit.docker;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/** Lifecycle events from the real engine: the phase timings are all there and add up to the total. */
@Tag("slow")
@DisplayName("Lifecycle events on the real engine")
class EventsOnDockerTest {
    private static final String IMAGE = System.getProperty("sandboxkit.test.image", "sandboxkit-test:latest");

    @TempDir
    Path root;

    @BeforeAll
    static void engine() throws Exception {
        ManagerOnDockerTest.EngineCheck.requireEngine().close();
    }

    @Test
    @DisplayName("created and resumed carry image-check, create, start and post-create phases that add up to the total")
    void phasesAddUp() throws Exception {
        List<SandboxEvent> events = new CopyOnWriteArrayList<>();
        SandboxSpec spec = SandboxSpec.builder().image(IMAGE).pullPolicy(PullPolicy.NEVER)
                .postCreate(ExecRequest.shell("echo ready")).build();
        try (SandboxManager m = SandboxManager.builder().driver("docker").workspaceRoot(root)
                .idleTimeout(Duration.ofSeconds(1)).reaperInterval(Duration.ofMillis(50)).listener(events::add).build()) {
            Sandbox s = m.acquire("phases", spec);
            s.exec(ExecRequest.of("true"));
            s.exec(ExecRequest.of("true"));
            while (events.stream().noneMatch(SandboxEvent.IdleReaped.class::isInstance)) {
                Thread.sleep(20);
            }
            s.exec(ExecRequest.of("true")); // resumes
        }
        SandboxEvent.Created created = events.stream().filter(SandboxEvent.Created.class::isInstance)
                .map(SandboxEvent.Created.class::cast).findFirst().orElseThrow();
        SandboxEvent.Resumed resumed = events.stream().filter(SandboxEvent.Resumed.class::isInstance)
                .map(SandboxEvent.Resumed.class::cast).findFirst().orElseThrow();
        for (var phases : List.of(created.phases(), resumed.phases())) {
            assertThat(phases).containsKeys(SandboxEvent.PHASE_IMAGE_CHECK, SandboxEvent.PHASE_CREATE,
                    SandboxEvent.PHASE_START, SandboxEvent.PHASE_POST_CREATE);
            assertThat(phases.values()).allMatch(d -> !d.isNegative());
        }
        assertAddsUp(created.phases().values(), created.total());
        assertAddsUp(resumed.phases().values(), resumed.total());

        List<SandboxEvent.ExecFinished> execs = events.stream().filter(SandboxEvent.ExecFinished.class::isInstance)
                .map(SandboxEvent.ExecFinished.class::cast).toList();
        assertThat(execs).extracting(SandboxEvent.ExecFinished::firstExec).containsExactly(true, false, true);
        assertThat(events).allMatch(e -> e.sessionId().equals("phases"));
    }

    /** The phases are disjoint parts of the step: their sum is at most the total, and the rest is small. */
    private static void assertAddsUp(java.util.Collection<Duration> phases, Duration total) {
        Duration sum = phases.stream().reduce(Duration.ZERO, Duration::plus);
        assertThat(sum).isLessThanOrEqualTo(total);
        Duration rest = total.minus(sum);
        assertThat(rest).as("time outside the phases (engine bookkeeping), total %s", total)
                .isLessThan(Duration.ofMillis(Math.max(50, total.toMillis() / 5)));
    }
}
