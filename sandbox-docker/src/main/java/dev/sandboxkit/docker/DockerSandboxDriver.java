package dev.sandboxkit.docker;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.docker.internal.channel.ExecChannels;
import dev.sandboxkit.docker.internal.compute.DockerCompute;
import dev.sandboxkit.docker.internal.engine.DockerHost;
import dev.sandboxkit.docker.internal.engine.EngineClient;
import dev.sandboxkit.docker.internal.engine.EngineDiscovery;
import dev.sandboxkit.docker.internal.settings.DockerSettingKeys;
import dev.sandboxkit.docker.internal.workdir.DockerWorkspaces;
import dev.sandboxkit.docker.internal.workdir.HostDirWorkdirs;
import dev.sandboxkit.docker.internal.workdir.VolumeWorkdirs;
import dev.sandboxkit.docker.internal.workdir.Workdirs;
import dev.sandboxkit.spi.ComputeCapability;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.PortConnection;
import dev.sandboxkit.spi.SandboxDescriptor;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SnapshotDescriptor;
import dev.sandboxkit.spi.TerminalConnection;
import dev.sandboxkit.spi.WorkspaceCapability;
import dev.sandboxkit.spi.WorkspaceDescriptor;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Runs each sandbox as a container on a Docker engine. Two halves, each in its own class: the compute half
 * ({@link DockerCompute}: containers, execs, terminals, tunnels) and the workspace half ({@link DockerWorkspaces}:
 * host-directory or volume workdirs, snapshots, archives, files). Every engine call goes through one client of
 * the driver's own ({@link EngineClient}). This class wires them and joins them where a call needs both (a
 * container is created on its workdir; the orphan sweep's listing also sweeps the workdirs). Thread-safe.
 */
final class DockerSandboxDriver implements SandboxDriver {
    private final DockerCompute compute;
    private final DockerWorkspaces workspaces;

    DockerSandboxDriver(DriverContext context) {
        this(context, EngineDiscovery.system());
    }

    /** With the environment and home of {@code discovery} instead of this process's (tests). */
    DockerSandboxDriver(DriverContext context, EngineDiscovery discovery) {
        DockerSettings settings = DockerSettingKeys.read(context);
        DockerHost host = discovery.resolve(settings, context);
        boolean useVolumes = settings.workdirs() == DockerSettings.Workdirs.VOLUME;
        if (!useVolumes) {
            requireLocalEngine(host, context.workspaceRoot(), context.settingName(DockerSettings.WORKDIRS_KEY));
        }
        String defaultUser = settings.defaultUser();
        EngineClient engine = new EngineClient(host);
        this.compute = new DockerCompute(engine, settings.pullTimeout(), discovery.configDir(),
                settings.channelSetsid(), settings.channelIdleTimeout(), context.clock());
        this.workspaces = new DockerWorkspaces(new HostDirWorkdirs(context.workspaceRoot(), defaultUser),
                new VolumeWorkdirs(compute.engine(), context.instanceId(), context.workspaceRoot(), defaultUser),
                useVolumes);
    }

    /**
     * A host-directory workdir is bind-mounted into the container, which only an engine on this machine can
     * mount: refuse a remote engine now rather than create containers on a directory the engine does not have.
     * With {@code docker.workdirs=volume} there is no host directory and any engine will do.
     */
    static void requireLocalEngine(DockerHost host, Path workspaceRoot, String workdirsSetting) {
        if (!host.local()) {
            throw new SandboxConfigurationException("the Docker engine at " + host + " (" + host.source() + ") is "
                    + "remote, but sandbox workdirs are host directories under " + workspaceRoot + ", which exist only "
                    + "on this machine: a remote engine needs a named volume per session, which this driver does not "
                    + "support in host-directory mode. Use an engine on this machine (unix socket, loopback or one of this "
                    + "host's addresses), or set " + workdirsSetting + "=volume");
        }
    }

    @Override
    public String name() {
        return DockerDriverProvider.NAME;
    }

    @Override
    public Set<ComputeCapability> computeCapabilities() {
        return EnumSet.of(ComputeCapability.STDIN, ComputeCapability.KILL_PROCESS_GROUP, ComputeCapability.STREAMING,
                ComputeCapability.REAL_PROCESSES, ComputeCapability.PORT_FORWARD,
                ComputeCapability.BACKGROUND_PROCESSES, ComputeCapability.TTY);
    }

    @Override
    public Set<WorkspaceCapability> workspaceCapabilities() {
        return workspaces.capabilities(); // what new workdirs can do
    }

    @Override
    public void ping() {
        compute.ping();
    }

    // ================================================================== compute

    @Override
    public String create(CreateRequest request) {
        Workdirs.Mount mount = workspaces.mount(request);
        return compute.create(request, mount, workspaces.sandboxUser(request));
    }

    @Override
    public ExecResult exec(String sandboxId, ExecRequest request) {
        return compute.exec(sandboxId, request);
    }

    /** See {@link DockerCompute#connect}: the container keeps network {@code none}; the image needs {@code nc}. */
    @Override
    public PortConnection connect(String sandboxId, int port) {
        return compute.connect(sandboxId, port);
    }

    @Override
    public TerminalConnection openTerminal(String sandboxId, ExecRequest request) {
        return compute.openTerminal(sandboxId, request);
    }

    /** The exec router with its channel pools (for tests and the benchmark). */
    ExecChannels channels() {
        return compute.channels();
    }

    @Override
    public void remove(String sandboxId) {
        compute.remove(sandboxId);
    }

    /** Also the workdirs' periodic clean-up: the manager's orphan sweep calls this. */
    @Override
    public List<SandboxDescriptor> list(Map<String, String> labels) {
        List<SandboxDescriptor> out = compute.list(labels);
        workspaces.sweep();
        return out;
    }

    // ================================================================== workspaces

    @Override
    public String createWorkspace(String sessionId, SandboxSpec spec) {
        return workspaces.create(sessionId, spec);
    }

    @Override
    public void deleteWorkspace(String workspace) {
        workspaces.delete(workspace);
    }

    @Override
    public Optional<String> workspaceElsewhere(String workspace) {
        return workspaces.elsewhere(workspace);
    }

    @Override
    public SandboxFiles files(String workspace, SandboxSpec spec, FileLimits limits) {
        return workspaces.files(workspace, spec, limits);
    }

    @Override
    public void exportWorkspace(String workspace, SandboxSpec spec, OutputStream tar) throws IOException {
        workspaces.export(workspace, spec, tar);
    }

    @Override
    public void importWorkspace(String workspace, SandboxSpec spec, InputStream tar) {
        workspaces.importInto(workspace, spec, tar);
    }

    @Override
    public SnapshotDescriptor snapshotWorkspace(String workspace, Map<String, String> labels) {
        return workspaces.snapshot(workspace, labels);
    }

    @Override
    public void restoreWorkspace(String source, String workspace, SandboxSpec spec) {
        workspaces.restore(source, workspace, spec);
    }

    @Override
    public void seedWorkspace(Path directory, String workspace, SandboxSpec spec) {
        workspaces.seed(directory, workspace, spec);
    }

    @Override
    public List<WorkspaceDescriptor> listWorkspaces(Map<String, String> labels) {
        return workspaces.listWorkspaces(labels);
    }

    @Override
    public List<SnapshotDescriptor> listSnapshots(Map<String, String> labels) {
        return workspaces.listSnapshots(labels);
    }

    @Override
    public void labelSnapshot(String location, Map<String, String> labels) {
        workspaces.labelSnapshot(location, labels);
    }

    @Override
    public void deleteSnapshot(String location) {
        workspaces.deleteSnapshot(location);
    }

    @Override
    public String adoptWorkspace(String workspace, String sessionId) {
        return workspaces.adopt(workspace, sessionId);
    }

    /** The workdirs first (their helpers use the client), then the containers' side and the client. */
    @Override
    public void close() {
        workspaces.close();
        compute.close();
    }
}
