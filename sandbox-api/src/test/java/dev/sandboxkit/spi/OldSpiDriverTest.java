package dev.sandboxkit.spi;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.FileLimits;
import dev.sandboxkit.ProcessOptions;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnsupportedException;
import dev.sandboxkit.SnapshotId;
import dev.sandboxkit.TerminalSize;
import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.testkit.ForwardingSandboxDriver;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The SPI adapter: a driver written against the single-interface SPI (it implements {@link SandboxDriver} and
 * declares only the deprecated {@code capabilities()}) keeps working through a manager, its features gated by what it
 * declared, now read through {@link SandboxDriver#computeCapabilities()} and {@link SandboxDriver#workspaceCapabilities()}.
 */
@SuppressWarnings("removal") // the old SPI is what this test drives
class OldSpiDriverTest {
    private final ManualClock clock = new ManualClock();
    private final ManualScheduler scheduler = new ManualScheduler(clock);
    private SandboxManager manager;

    @AfterEach
    void close() {
        if (manager != null) {
            manager.close();
        }
    }

    private SandboxManager manager(SandboxDriver driver) {
        manager = SandboxManager.builder().driver(driver).clock(clock).scheduler(scheduler).build();
        return manager;
    }

    private static SandboxSpec spec() {
        return SandboxSpec.builder().image("img").build();
    }

    @Test
    @DisplayName("each old constant has the same name in exactly one of the two new sets, and no new one is missing")
    void namesPartition() {
        Set<String> compute = Arrays.stream(ComputeCapability.values()).map(Enum::name).collect(Collectors.toSet());
        Set<String> workspace = Arrays.stream(WorkspaceCapability.values()).map(Enum::name).collect(Collectors.toSet());
        Set<String> old = Arrays.stream(DriverCapability.values()).map(Enum::name).collect(Collectors.toSet());
        assertThat(compute).doesNotContainAnyElementsOf(workspace);
        Set<String> both = new java.util.HashSet<>(compute);
        both.addAll(workspace);
        assertThat(both).isEqualTo(old);
    }

    @Test
    @DisplayName("an old driver's single set is split into the two halves' sets; its own capabilities() is unchanged")
    void oldSetSplits() {
        OldFullDriver driver = new OldFullDriver(EnumSet.of(DriverCapability.STDIN, DriverCapability.STREAMING,
                DriverCapability.TTY, DriverCapability.FILES, DriverCapability.SNAPSHOTS));
        assertThat(driver.computeCapabilities()).containsExactlyInAnyOrder(ComputeCapability.STDIN,
                ComputeCapability.STREAMING, ComputeCapability.TTY);
        assertThat(driver.workspaceCapabilities()).containsExactlyInAnyOrder(WorkspaceCapability.FILES,
                WorkspaceCapability.SNAPSHOTS);
        assertThat(driver.capabilities()).containsExactlyInAnyOrder(DriverCapability.STDIN, DriverCapability.STREAMING,
                DriverCapability.TTY, DriverCapability.FILES, DriverCapability.SNAPSHOTS);
    }

    @Test
    @DisplayName("a driver that declares neither the old set nor the new ones has no capability (and no recursion)")
    void declaresNothing() {
        SandboxDriver driver = new OldComputeOnlyDriver() {
        };
        assertThat(driver.computeCapabilities()).isEmpty();
        assertThat(driver.workspaceCapabilities()).isEmpty();
        assertThat(driver.capabilities()).isEmpty();
    }

    @Test
    @DisplayName("through a manager, an old driver that declares them gets exec with stdin, files and snapshots")
    void oldDriverWorksThroughAManager() {
        OldFullDriver driver = new OldFullDriver(EnumSet.of(DriverCapability.STDIN, DriverCapability.STREAMING,
                DriverCapability.FILES, DriverCapability.SNAPSHOTS));
        driver.compute.when(e -> e.request().command().equals(List.of("cat")),
                e -> FakeDriver.result(0, new String(e.request().stdin(), StandardCharsets.UTF_8), ""));
        SandboxManager m = manager(driver);
        Sandbox sandbox = m.acquire("s", spec());

        ExecResult cat = sandbox.exec(ExecRequest.of("cat").withStdin("hello"));
        assertThat(cat.exitCode()).isZero();
        assertThat(cat.stdout()).isEqualTo("hello");

        SandboxFiles files = m.files("s");
        files.write("/workspace/a.txt", "one".getBytes(StandardCharsets.UTF_8));
        assertThat(files.readBytes("a.txt")).asString(StandardCharsets.UTF_8).isEqualTo("one");

        SnapshotId snapshot = m.snapshot("s");
        files.write("a.txt", "two".getBytes(StandardCharsets.UTF_8));
        m.restore("s", snapshot);
        assertThat(m.files("s").readBytes("a.txt")).asString(StandardCharsets.UTF_8).isEqualTo("one");
        assertThat(m.snapshots("s")).extracting(i -> i.id()).containsExactly(snapshot);
        assertThat(driver.memory.snapshotCalls.get()).isEqualTo(1);
    }

    @Test
    @DisplayName("through a manager, what an old driver does not declare is refused before the driver is called")
    void undeclaredIsRefused() {
        // It could snapshot, but does not declare SNAPSHOTS: the engine must not call it.
        OldFullDriver driver = new OldFullDriver(EnumSet.of(DriverCapability.STDIN, DriverCapability.STREAMING,
                DriverCapability.FILES));
        SandboxManager m = manager(driver);
        Sandbox sandbox = m.acquire("s", spec());

        assertThatThrownBy(() -> m.snapshot("s")).isInstanceOf(SandboxUnsupportedException.class)
                .hasMessageContaining("old");
        assertThatThrownBy(() -> m.fork("s", "t")).isInstanceOf(SandboxUnsupportedException.class);
        assertThat(driver.memory.snapshotCalls.get()).isZero();
        assertThatThrownBy(() -> sandbox.exec(ExecRequest.of("sh").withTty(TerminalSize.DEFAULT)))
                .isInstanceOf(SandboxUnsupportedException.class).hasMessageContaining("TTY");
        assertThatThrownBy(() -> sandbox.forward(8080)).isInstanceOf(SandboxUnsupportedException.class);
        assertThatThrownBy(() -> sandbox.start(ExecRequest.of("sleep", "9"), ProcessOptions.defaults()))
                .isInstanceOf(SandboxUnsupportedException.class).hasMessageContaining("BACKGROUND_PROCESSES");
        assertThat(sandbox.exec(ExecRequest.of("true")).exitCode()).isZero();
    }

    @Test
    @DisplayName("through a manager, an old driver without a files API answers UNSUPPORTED, as it did")
    void oldDriverWithoutFiles() {
        SandboxDriver driver = new OldComputeOnlyDriver() {
            @Override
            public Set<DriverCapability> capabilities() {
                return EnumSet.of(DriverCapability.STDIN);
            }
        };
        SandboxManager m = manager(driver);
        m.acquire("s", spec());
        assertThatThrownBy(() -> m.files("s").list("")).isInstanceOfSatisfying(SandboxFileException.class,
                e -> assertThat(e.reason()).isEqualTo(SandboxFileException.Reason.UNSUPPORTED));
        assertThatThrownBy(() -> m.snapshot("s")).isInstanceOf(SandboxUnsupportedException.class);
    }

    @Test
    @DisplayName("ForwardingSandboxDriver: an old-style subclass's capabilities() and a new-style one's sets both count")
    void forwardingDriverSubclasses() {
        SandboxDriver oldStyle = new ForwardingSandboxDriver(new FakeDriver(clock)) {
            @Override
            public Set<DriverCapability> capabilities() {
                Set<DriverCapability> c = EnumSet.noneOf(DriverCapability.class);
                c.addAll(super.capabilities());
                c.add(DriverCapability.PORT_FORWARD);
                return c;
            }
        };
        assertThat(oldStyle.computeCapabilities()).containsExactlyInAnyOrder(ComputeCapability.STDIN,
                ComputeCapability.STREAMING, ComputeCapability.PORT_FORWARD);
        assertThat(oldStyle.workspaceCapabilities()).isEmpty();

        SandboxDriver newStyle = new ForwardingSandboxDriver(new FakeDriver(clock)) {
            @Override
            public Set<ComputeCapability> computeCapabilities() {
                return EnumSet.of(ComputeCapability.STDIN);
            }
        };
        assertThat(newStyle.capabilities()).containsExactly(DriverCapability.STDIN);
        assertThat(new ForwardingSandboxDriver(new FakeDriver(clock)).capabilities())
                .containsExactlyInAnyOrder(DriverCapability.STDIN, DriverCapability.STREAMING);
    }

    /**
     * A driver as written against the single-interface SPI: it implements the methods that had no default, runs its
     * commands on a {@link FakeDriver}, keeps its workdirs in memory, and declares no capability set of the new SPI.
     */
    private abstract static class OldComputeOnlyDriver implements SandboxDriver {
        final FakeDriver compute = new FakeDriver();
        // Not its workspace half for the engine: only where the old driver keeps its workdirs.
        final InMemoryWorkspaces memory = new InMemoryWorkspaces(Set.of());

        @Override
        public String name() {
            return "old";
        }

        @Override
        public void ping() {
            compute.ping();
        }

        @Override
        public String createWorkspace(String sessionId, SandboxSpec spec) {
            return memory.createWorkspace(sessionId, spec);
        }

        @Override
        public void deleteWorkspace(String workspace) {
            memory.deleteWorkspace(workspace);
        }

        @Override
        public String create(CreateRequest request) {
            return compute.create(request);
        }

        @Override
        public ExecResult exec(String sandboxId, ExecRequest request) {
            return compute.exec(sandboxId, request);
        }

        @Override
        public void remove(String sandboxId) {
            compute.remove(sandboxId);
        }

        @Override
        public List<SandboxDescriptor> list(Map<String, String> labels) {
            return compute.list(labels);
        }

        @Override
        public void close() {
            compute.close();
        }
    }

    /** The old driver with a files API (read and write only) and snapshots of its in-memory workdirs. */
    private static final class OldFullDriver extends OldComputeOnlyDriver {
        private final Set<DriverCapability> capabilities;

        OldFullDriver(Set<DriverCapability> capabilities) {
            this.capabilities = Set.copyOf(capabilities);
        }

        @Override
        public Set<DriverCapability> capabilities() {
            return capabilities;
        }

        @Override
        public SandboxFiles files(String workspace, SandboxSpec spec, FileLimits limits) {
            return memory.files(workspace, spec, limits);
        }

        @Override
        public SnapshotDescriptor snapshotWorkspace(String workspace, Map<String, String> labels) {
            return memory.snapshotWorkspace(workspace, labels);
        }

        @Override
        public void restoreWorkspace(String source, String workspace, SandboxSpec spec) {
            memory.restoreWorkspace(source, workspace, spec);
        }

        @Override
        public List<SnapshotDescriptor> listSnapshots(Map<String, String> labels) {
            return memory.listSnapshots(labels);
        }

        @Override
        public void labelSnapshot(String location, Map<String, String> labels) {
            memory.labelSnapshot(location, labels);
        }

        @Override
        public void deleteSnapshot(String location) {
            memory.deleteSnapshot(location);
        }
    }
}
