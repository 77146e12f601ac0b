package dev.sandboxkit.spi;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnsupportedException;
import dev.sandboxkit.SnapshotId;
import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.testkit.ForwardingSandboxDriver;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A manager built from a driver's two halves given separately ({@code Builder.driver(compute, workspaces)}): sandboxes
 * run on the compute half, workdirs, files and snapshots live in the workspace half, and each half's own capabilities
 * gate what it does. The fake driver serves as the compute half only; it has no workdir features of its own.
 */
class TwoHalvesManagerTest {
    private final ManualClock clock = new ManualClock();
    private final ManualScheduler scheduler = new ManualScheduler(clock);
    private final FakeDriver compute = new FakeDriver(clock);
    private SandboxManager manager;

    @AfterEach
    void close() {
        if (manager != null) {
            manager.close();
        }
    }

    private SandboxManager manager(WorkspaceBackend workspaces) {
        manager = SandboxManager.builder().driver(compute, workspaces).clock(clock).scheduler(scheduler).build();
        return manager;
    }

    @Test
    @DisplayName("workdirs, files and snapshots go to the workspace half; execs to the compute half, on its workdir")
    void halvesDoTheirOwnJobs() {
        InMemoryWorkspaces workspaces = new InMemoryWorkspaces(
                EnumSet.of(WorkspaceCapability.FILES, WorkspaceCapability.SNAPSHOTS));
        assertThat(compute.workspaceCapabilities()).doesNotContain(WorkspaceCapability.SNAPSHOTS);
        SandboxManager m = manager(workspaces);
        assertThat(m.driverName()).isEqualTo("fake");

        Sandbox sandbox = m.acquire("s", SandboxSpec.builder().image("img").build());
        assertThat(workspaces.workdirs).containsOnlyKeys("mem:s");
        assertThat(sandbox.exec(ExecRequest.of("true")).exitCode()).isZero();
        assertThat(compute.execs()).last().satisfies(e -> assertThat(e.request().command()).containsExactly("true"));
        assertThat(compute.liveSandboxes()).hasSize(1);

        SandboxFiles files = m.files("s");
        files.write("a.txt", "one".getBytes(StandardCharsets.UTF_8));
        assertThat(workspaces.workdirs.get("mem:s")).containsKey("a.txt");
        SnapshotId snapshot = m.snapshot("s");
        files.write("a.txt", "two".getBytes(StandardCharsets.UTF_8));
        m.restore("s", snapshot);
        assertThat(m.files("s").readBytes("a.txt")).asString(StandardCharsets.UTF_8).isEqualTo("one");

        m.destroy("s");
        assertThat(compute.liveSandboxes()).isEmpty();
        assertThat(workspaces.workdirs).doesNotContainKey("mem:s");
    }

    @Test
    @DisplayName("the workspace half's capabilities gate its features, whatever the compute half is")
    void workspaceHalfGates() {
        InMemoryWorkspaces workspaces = new InMemoryWorkspaces(Set.of());
        SandboxManager m = manager(workspaces);
        m.acquire("s", SandboxSpec.builder().image("img").build());
        assertThatThrownBy(() -> m.snapshot("s")).isInstanceOf(SandboxUnsupportedException.class);
        assertThat(workspaces.snapshotCalls.get()).isZero();
    }

    @Test
    @DisplayName("the builder takes one driver: a second choice fails; the manager does not close a given compute half")
    void oneChoiceNotClosed() {
        SandboxManager.Builder b = SandboxManager.builder().driver(compute, new InMemoryWorkspaces(Set.of()));
        assertThatThrownBy(() -> b.driver(compute)).isInstanceOf(IllegalStateException.class);
        AtomicInteger closes = new AtomicInteger();
        ComputeDriver counted = new ForwardingSandboxDriver(compute) {
            @Override
            public void close() {
                closes.incrementAndGet();
            }
        };
        SandboxManager.builder().driver(counted, new InMemoryWorkspaces(Set.of())).clock(clock).scheduler(scheduler)
                .build().close();
        assertThat(closes).hasValue(0);
    }
}
