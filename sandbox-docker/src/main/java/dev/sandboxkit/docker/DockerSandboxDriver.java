package dev.sandboxkit.docker;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.CreateContainerCmd;
import com.github.dockerjava.api.command.CreateContainerResponse;
import com.github.dockerjava.api.command.PullImageResultCallback;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.DockerException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Mount;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.FileLimits;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.docker.internal.channel.ExecChannels;
import dev.sandboxkit.docker.internal.engine.DockerHost;
import dev.sandboxkit.docker.internal.engine.EngineClient;
import dev.sandboxkit.docker.internal.engine.EngineErrors;
import dev.sandboxkit.docker.internal.engine.EngineDiscovery;
import dev.sandboxkit.docker.internal.engine.EngineExec;
import dev.sandboxkit.docker.internal.engine.EngineTunnel;
import dev.sandboxkit.docker.internal.engine.ExecGate;
import dev.sandboxkit.docker.internal.files.HostWorkspaces;
import dev.sandboxkit.docker.internal.settings.DockerSettingKeys;
import dev.sandboxkit.docker.internal.workdir.HostDirWorkdirs;
import dev.sandboxkit.docker.internal.workdir.VolumeWorkdirs;
import dev.sandboxkit.docker.internal.workdir.Workdirs;
import dev.sandboxkit.spi.ComputeCapability;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.PhaseRecorder;
import dev.sandboxkit.spi.PortConnection;
import dev.sandboxkit.spi.SandboxDescriptor;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SnapshotDescriptor;
import dev.sandboxkit.spi.WorkspaceDescriptor;
import dev.sandboxkit.spi.TerminalConnection;
import dev.sandboxkit.spi.WorkspaceCapability;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;

/**
 * Runs each sandbox as a container on a Docker engine. Lifecycle (images, create, start, remove, list)
 * goes through docker-java; execs go through {@link ExecChannels}: a sandbox's command channel when it can
 * run one, else a plain engine exec ({@link EngineExec}); workdirs and the files API are
 * {@link HostWorkspaces}'. This class is where those parts ({@code internal.engine}, {@code internal.channel},
 * {@code internal.files}) are wired together. Thread-safe.
 */
final class DockerSandboxDriver implements SandboxDriver {
    /** The highest uid or gid the engine runs a container as (runc refuses 2^31 and above). */
    static final long MAX_ENGINE_ID = Integer.MAX_VALUE;
    /**
     * Under init, sleep failing to exec shows only after start returns. Measured here: an inspect 10 ms after
     * start saw the exit every time on an idle machine (used for remote engines); a local engine is watched
     * through /proc for up to this long instead.
     */
    private static final long STARTUP_CHECK_INTERVAL_MILLIS = 10;
    private static final long STARTUP_WATCH_SECONDS = 5;
    private static final Logger log = LoggerFactory.getLogger(DockerSandboxDriver.class);

    private final DockerHost host;
    private final DockerClient docker;
    private final EngineClient engine;
    private final EngineExec execs;
    private final ExecChannels channels;
    private final EngineTunnel.Registry tunnels;
    private final HostDirWorkdirs hostDirs;
    private final VolumeWorkdirs volumes;
    /** Where new workdirs go: {@link #hostDirs} or {@link #volumes}. Existing ones stay with their location's. */
    private final Workdirs preferred;
    private final Duration pullTimeout;
    /** Images seen present, so create skips the inspect; dropped when the engine says otherwise. */
    private final Set<String> knownImages = ConcurrentHashMap.newKeySet();
    /** Podman only: the runtime its service runs every container with, once asked. */
    private volatile String podmanRuntime;

    DockerSandboxDriver(DriverContext context) {
        this(context, EngineDiscovery.system());
    }

    /** With the environment and home of {@code discovery} instead of this process's (tests). */
    DockerSandboxDriver(DriverContext context, EngineDiscovery discovery) {
        DockerSettings settings = DockerSettingKeys.read(context);
        this.host = discovery.resolve(settings, context);
        boolean useVolumes = settings.workdirs() == DockerSettings.Workdirs.VOLUME;
        if (!useVolumes) {
            requireLocalEngine(host, context.workspaceRoot(), context.settingName(DockerSettings.WORKDIRS_KEY));
        }
        String defaultUser = settings.defaultUser();
        this.pullTimeout = settings.pullTimeout();
        this.hostDirs = new HostDirWorkdirs(context.workspaceRoot(), defaultUser);
        DefaultDockerClientConfig config = DefaultDockerClientConfig.createDefaultConfigBuilder()
                .withDockerHost(host.dockerJavaHost())
                .withDockerTlsVerify(false)
                .build();
        ZerodepDockerHttpClient.Builder httpBuilder = new ZerodepDockerHttpClient.Builder();
        if (host.isTls()) {
            // The same context as the exec path: JDK-only PEM loading, the engine verified, host name included.
            SSLContext ssl = host.tls().context();
            httpBuilder.sslConfig(() -> ssl);
        }
        ZerodepDockerHttpClient http = httpBuilder
                .dockerHost(URI.create(host.dockerJavaHost()))
                .maxConnections(32)
                .connectionTimeout(Duration.ofSeconds(10))
                .responseTimeout(Duration.ofMinutes(2))
                .build();
        this.docker = DockerClientImpl.getInstance(config, http);
        this.engine = new EngineClient(host);
        this.volumes = new VolumeWorkdirs(docker, engine, context.instanceId(), context.workspaceRoot(), defaultUser);
        this.preferred = useVolumes ? volumes : hostDirs;
        this.execs = new EngineExec(engine);
        this.tunnels = new EngineTunnel.Registry(engine, execs);
        // setsid gives each channel command a session of its own, as an engine exec has (one more exec each).
        this.channels = new ExecChannels(engine, execs, settings.channelSetsid(), settings.channelIdleTimeout(),
                context.clock());
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
        return preferred.capabilities(); // what new workdirs can do
    }

    @Override
    public void ping() {
        run(() -> docker.pingCmd().exec());
    }

    @Override
    public String createWorkspace(String sessionId, SandboxSpec spec) {
        requireEngineIds(ids(preferred, spec));
        return preferred.create(sessionId, spec);
    }

    /** The backend a location belongs to: a volume's ({@code volume:<name>}) or a host directory's. */
    private Workdirs of(String location) {
        return VolumeWorkdirs.owns(location) ? volumes : hostDirs;
    }

    private static HostWorkspaces.Ids ids(Workdirs workdirs, SandboxSpec spec) {
        return HostWorkspaces.Ids.parse(workdirs.sandboxUser(spec));
    }

    @Override
    public void deleteWorkspace(String workspace) {
        of(workspace).delete(workspace);
    }

    /** A host directory under another workspace root is another host's; a volume is on the engine. */
    @Override
    public Optional<String> workspaceElsewhere(String workspace) {
        return VolumeWorkdirs.owns(workspace) ? Optional.empty() : hostDirs.elsewhere(workspace);
    }

    /** Host directories: host-side on the bind-mounted directory; volumes: the archive API (see Workdirs). */
    @Override
    public SandboxFiles files(String workspace, SandboxSpec spec, FileLimits limits) {
        return of(workspace).files(workspace, spec, limits);
    }

    @Override
    public void exportWorkspace(String workspace, SandboxSpec spec, java.io.OutputStream tar)
            throws java.io.IOException {
        of(workspace).export(workspace, spec, tar);
    }

    @Override
    public void importWorkspace(String workspace, SandboxSpec spec, java.io.InputStream tar) {
        requireEngineIds(ids(of(workspace), spec));
        of(workspace).importInto(workspace, spec, tar);
    }

    @Override
    public SnapshotDescriptor snapshotWorkspace(String workspace, Map<String, String> labels) {
        return of(workspace).snapshot(workspace, labels);
    }

    @Override
    public void restoreWorkspace(String source, String workspace, SandboxSpec spec) {
        requireEngineIds(ids(of(workspace), spec));
        of(workspace).restore(source, workspace, spec);
    }

    @Override
    public void seedWorkspace(java.nio.file.Path directory, String workspace, SandboxSpec spec) {
        requireEngineIds(ids(of(workspace), spec));
        of(workspace).seed(directory, workspace, spec);
    }

    /** Both kinds: a driver may hold snapshots made before its workdir mode changed. */
    /** Only volumes carry labels; a host-directory driver lists none (and leaves volumes to volume drivers). */
    @Override
    public List<WorkspaceDescriptor> listWorkspaces(Map<String, String> labels) {
        return preferred == volumes ? volumes.listWorkspaces(labels) : List.of();
    }

    @Override
    public List<SnapshotDescriptor> listSnapshots(Map<String, String> labels) {
        List<SnapshotDescriptor> out = new ArrayList<>(hostDirs.listSnapshots(labels));
        if (preferred == volumes) {
            out.addAll(volumes.listSnapshots(labels));
        }
        return out;
    }

    @Override
    public void labelSnapshot(String location, Map<String, String> labels) {
        of(location).labelSnapshot(location, labels);
    }

    @Override
    public void deleteSnapshot(String location) {
        of(location).deleteSnapshot(location);
    }

    @Override
    public String adoptWorkspace(String workspace, String sessionId) {
        return of(workspace).adopt(workspace, sessionId);
    }

    @Override
    public String create(CreateRequest request) {
        SandboxSpec spec = request.spec();
        Workdirs workdirs = of(request.workspace());
        requireEngineIds(ids(workdirs, spec));
        Mount mount = workdirs.mount(request);
        requireHonouredRuntime(spec);
        PhaseRecorder phases = request.phases();
        for (int attempt = 1; ; attempt++) {
            long t0 = System.nanoTime();
            ensureImage(spec);
            long t1 = System.nanoTime();
            phases.record(SandboxEvent.PHASE_IMAGE_CHECK, Duration.ofNanos(t1 - t0));
            String id;
            try {
                id = call(() -> createContainer(request, mount, workdirs.sandboxUser(spec))).getId();
            } catch (NotFoundException e) {
                if (!isMissingImage(e)) {
                    throw new SandboxAcquireException("the engine refused the container: " + message(e), e);
                }
                // Removed since we last saw it: forget it and check again (pulls if the policy allows).
                knownImages.remove(spec.image());
                if (attempt == 1 && spec.pullPolicy() != PullPolicy.NEVER) {
                    continue;
                }
                throw missingImage(spec, e);
            } catch (DockerException e) {
                if (spec.runtime() != null && EngineErrors.aboutRuntime(message(e))) {
                    throw unknownRuntime(spec.runtime(), e);
                }
                throw new SandboxAcquireException("the engine refused the container for image " + spec.image() + ": "
                        + message(e) + initHint(message(e)), e);
            }
            long t2 = System.nanoTime();
            phases.record(SandboxEvent.PHASE_CREATE, Duration.ofNanos(t2 - t1));
            // A volume's files call freezes the containers running on it: none of ours starts in the middle of one.
            try (ExecGate.Pass starting = VolumeWorkdirs.owns(request.workspace())
                    ? engine.gate().enterVolume(request.workspace()) : null) {
                run(() -> docker.startContainerCmd(id).exec());
            } catch (SandboxUnavailableException e) {
                removeQuietly(id);
                throw e;
            } catch (RuntimeException e) {
                removeQuietly(id);
                throw new SandboxAcquireException("container for image " + spec.image() + " did not start: "
                        + message(e) + initHint(message(e)), e);
            }
            checkStillRunning(id, spec);
            phases.record(SandboxEvent.PHASE_START, Duration.ofNanos(System.nanoTime() - t2));
            // Under a sandboxing runtime one channel per sandbox: gVisor (runsc 2022) loses track of the processes of
            // several long-lived attached execs at once; further concurrent execs run as plain engine execs.
            channels.created(id, spec.execMode(), hostVisibleProcesses(spec) ? ExecChannels.MAX_CHANNELS : 1);
            return id;
        }
    }

    @Override
    public ExecResult exec(String sandboxId, ExecRequest request) {
        Objects.requireNonNull(sandboxId, "sandboxId");
        Objects.requireNonNull(request, "request");
        return channels.exec(sandboxId, request);
    }

    /**
     * An attached exec of {@code nc 127.0.0.1 <port>} whose stdin and stdout carry the connection (see
     * {@link EngineTunnel}); the container keeps network {@code none}. The image needs {@code nc}.
     */
    @Override
    public PortConnection connect(String sandboxId, int port) {
        Objects.requireNonNull(sandboxId, "sandboxId");
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException("port must be 1-65535, got: " + port);
        }
        return tunnels.open(sandboxId, port);
    }

    /** A plain engine exec with {@code Tty: true} (never the command channel: a terminal is the exec's own). */
    @Override
    public TerminalConnection openTerminal(String sandboxId, ExecRequest request) {
        Objects.requireNonNull(sandboxId, "sandboxId");
        Objects.requireNonNull(request, "request");
        return execs.openTerminal(sandboxId, request);
    }

    /** The exec router with its channel pools (for tests and the benchmark). */
    ExecChannels channels() {
        return channels;
    }

    @Override
    public void remove(String sandboxId) {
        execs.containerRemoving(sandboxId);
        channels.containerRemoving(sandboxId);
        tunnels.containerRemoving(sandboxId);
        try {
            // Returns once the container is gone. Another removal in progress may be one whose caller was
            // interrupted: the engine then gives it up with the client's connection, and the container stays.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (true) {
                try {
                    run(() -> docker.removeContainerCmd(sandboxId).withForce(true).withRemoveVolumes(true).exec());
                    break;
                } catch (ConflictException e) {
                    if (!EngineErrors.removalInProgress(e.getHttpStatus(), message(e))) {
                        throw e;
                    }
                    if (System.nanoTime() > deadline) {
                        throw new SandboxException("container " + EngineExec.shortId(sandboxId)
                                + " is still being removed after 30 s; remove it again later", e);
                    }
                    sleepBeforeRetry(sandboxId);
                }
            }
        } catch (NotFoundException e) {
            // already gone
        } catch (ConflictException e) {
            throw new SandboxException("cannot remove container " + EngineExec.shortId(sandboxId) + ": "
                    + message(e), e);
        } catch (DockerException e) {
            throw new SandboxException("cannot remove container " + EngineExec.shortId(sandboxId) + ": "
                    + message(e), e);
        } finally {
            execs.containerRemoved(sandboxId);
            channels.containerRemoved(sandboxId);
            tunnels.containerRemoved(sandboxId);
        }
    }

    private static void sleepBeforeRetry(String sandboxId) {
        try {
            Thread.sleep(100);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            throw new SandboxException("interrupted while container " + EngineExec.shortId(sandboxId)
                    + " was being removed", ie);
        }
    }

    @Override
    public List<SandboxDescriptor> list(Map<String, String> labels) {
        // The manager's orphan sweep calls this periodically: the moment to close channels idle for too long.
        channels.closeIdle();
        List<Container> containers = call(() -> docker.listContainersCmd().withShowAll(true)
                .withLabelFilter(labels).exec());
        volumes.sweep();
        hostDirs.sweep();
        List<SandboxDescriptor> out = new ArrayList<>(containers.size());
        for (Container c : containers) {
            Map<String, String> l = c.getLabels() == null ? Map.of() : c.getLabels();
            if (!l.entrySet().containsAll(labels.entrySet())) {
                continue; // the engine filtered already; this guards against a filter it ignored
            }
            if (l.containsKey(VolumeWorkdirs.ROLE)) {
                continue; // a volume's helper container, not a sandbox (VolumeWorkdirs removes its own)
            }
            Instant created = Instant.ofEpochSecond(c.getCreated() == null ? 0 : c.getCreated());
            out.add(new SandboxDescriptor(c.getId(), l, created, "running".equalsIgnoreCase(c.getState())));
        }
        return out;
    }

    @Override
    public void close() {
        volumes.close();
        hostDirs.close();
        tunnels.closeAll();
        channels.close();
        engine.close();
        try {
            docker.close();
        } catch (IOException e) {
            log.debug("Closing the docker-java client failed: {}", e.toString());
        }
    }

    /**
     * Podman's Docker API (4.3) ignores {@code HostConfig.Runtime}: it accepts any name and runs the container with
     * its default runtime. A sandbox that asked for gVisor must never quietly run without it, so on Podman only the
     * service's default runtime is accepted (it is what runs).
     */
    private void requireHonouredRuntime(SandboxSpec spec) {
        String runtime = spec.runtime();
        if (runtime == null || !podman()) {
            return;
        }
        String running = podmanDefaultRuntime();
        if (!runtime.equals(running)) {
            throw new SandboxAcquireException("the engine at " + host + " is Podman, whose Docker API ignores the runtime "
                    + "a container asks for and would run '" + runtime + "' sandboxes with its default runtime '" + running
                    + "'; set runtime = \"" + runtime + "\" under [engine] in containers.conf for the Podman service (then "
                    + "every container of that service runs under it), or use a Docker engine");
        }
    }

    private boolean podman() {
        try {
            return engine.podman();
        } catch (IOException e) {
            throw host.unreachable(e);
        }
    }

    /** The runtime the Podman service runs every container with ({@code DefaultRuntime} in {@code /info}). */
    private String podmanDefaultRuntime() {
        String known = podmanRuntime;
        if (known != null) {
            return known;
        }
        try {
            EngineClient.Response r = engine.call("GET", "/info", null);
            if (r.status() != 200) {
                throw new SandboxException("GET /info answered " + r.status() + ": " + r.message());
            }
            known = r.json().path("DefaultRuntime").asText("runc");
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new SandboxException("unreadable GET /info answer from " + host, e);
        } catch (IOException e) {
            throw host.unreachable(e);
        }
        podmanRuntime = known;
        return known;
    }

    /** Podman runs init ({@code HostConfig.Init}) with catatonit, which is a package of its own. */
    private static String initHint(String message) {
        return EngineErrors.initMissing(message)
                ? " (Podman runs the sandbox's init with catatonit: install it, e.g. apt-get install catatonit, or set "
                + "init(false) in the spec)" : "";
    }

    /** The runtime the spec names is not one the engine has: say which it has, so the fix is obvious. */
    private SandboxAcquireException unknownRuntime(String runtime, DockerException cause) {
        String offered;
        try {
            Map<String, ?> runtimes = call(() -> docker.infoCmd().exec()).getRuntimes();
            offered = runtimes == null || runtimes.isEmpty() ? "none listed"
                    : String.join(", ", new java.util.TreeSet<>(runtimes.keySet()));
        } catch (RuntimeException e) {
            offered = "unknown (" + e.getMessage() + ")";
        }
        return new SandboxAcquireException("the engine at " + host + " has no runtime '" + runtime + "'; it offers: "
                + offered + " (register one under \"runtimes\" in /etc/docker/daemon.json, then reload the engine): "
                + message(cause), cause);
    }

    private CreateContainerResponse createContainer(CreateRequest request, Mount mount, String user) {
        SandboxSpec spec = request.spec();
        HostConfig hc = HostConfig.newHostConfig()
                .withInit(spec.init())
                .withMounts(List.of(mount))
                .withNetworkMode(spec.network())
                .withReadonlyRootfs(spec.readOnlyRootFilesystem());
        if (spec.runtime() != null) {
            hc.withRuntime(spec.runtime());
        }
        if (spec.dropAllCapabilities()) {
            hc.withCapDrop(Capability.ALL);
        }
        if (!spec.addCapabilities().isEmpty()) {
            hc.withCapAdd(spec.addCapabilities().stream().map(DockerSandboxDriver::capability)
                    .toArray(Capability[]::new));
        }
        if (spec.noNewPrivileges()) {
            hc.withSecurityOpts(List.of("no-new-privileges"));
        }
        if (spec.pidsLimit() > 0) {
            hc.withPidsLimit(spec.pidsLimit());
        }
        if (spec.memoryBytes() > 0) {
            hc.withMemory(spec.memoryBytes()).withMemorySwap(spec.memoryBytes()); // swap = memory: no swap
        }
        if (spec.cpus() > 0) {
            hc.withNanoCPUs(Math.round(spec.cpus() * 1e9));
        }
        if (spec.tmpSizeBytes() > 0) {
            // Always sized: the engine's default tmpfs is half the host's RAM.
            hc.withTmpFs(Map.of("/tmp", "rw,nosuid,nodev,size=" + spec.tmpSizeBytes()));
        }
        Map<String, String> labels = new HashMap<>(spec.labels());
        labels.putAll(request.labels());
        // sleep infinity as the entrypoint and no Cmd: the image's own entrypoint and command never run.
        // spec.env() is deliberately not set here: the engine adds it to every exec.
        CreateContainerCmd cmd = docker.createContainerCmd(spec.image())
                .withEntrypoint("sleep", "infinity")
                .withWorkingDir(SandboxSpec.WORKSPACE)
                .withUser(user)
                .withLabels(labels)
                .withHostConfig(hc);
        if (!spec.network().startsWith("container:")) {
            cmd.withHostName("sandbox"); // the engine refuses a hostname when sharing another container's network
        }
        return cmd.exec();
    }

    /**
     * Under init, a missing {@code sleep} does not fail the start: init starts, fails to exec it and exits
     * 127 a few milliseconds later. Catch that here rather than as a confusing "not running" on the first exec.
     * On a local engine, watch init's child in /proc until it has become {@code sleep} (deterministic, and
     * usually already true on the first look); elsewhere, look again after a short pause.
     */
    private void checkStillRunning(String id, SandboxSpec spec) {
        JsonNode state = requireRunning(id, spec);
        if (!spec.init()) {
            return; // without init, a failure to exec sleep fails the start call itself
        }
        if (!hostVisibleProcesses(spec)) {
            probeSleep(id, spec);
            return;
        }
        long pid = state.path("Pid").asLong(0);
        Path children = pid <= 0 ? null
                : Path.of("/proc", Long.toString(pid), "task", Long.toString(pid), "children");
        try {
            if (host.unix() && children != null && Files.isReadable(children)) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(STARTUP_WATCH_SECONDS);
                while (System.nanoTime() < deadline && Files.exists(children)) {
                    if (childIsSleep(children)) {
                        return;
                    }
                    Thread.sleep(1);
                }
                if (!Files.exists(children)) {
                    // init exited: sleep could not run. The engine may still say "running" for a few
                    // milliseconds after that (seen under load), so wait for it to notice before asking.
                    awaitNotRunning(id);
                }
            } else {
                Thread.sleep(STARTUP_CHECK_INTERVAL_MILLIS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            removeQuietly(id);
            throw new SandboxAcquireException("interrupted while starting a container for " + spec.image(), e);
        }
        requireRunning(id, spec); // init exited (sleep could not run), or a remote engine: ask the engine
    }

    /**
     * Whether the container's processes are host processes we can watch in {@code /proc}: under runc and crun
     * they are; under a sandboxing runtime (gVisor's runsc, Kata) the engine's pid is the sandbox's, not init's.
     */
    private static boolean hostVisibleProcesses(SandboxSpec spec) {
        String runtime = spec.runtime();
        return runtime == null || runtime.equals("runc") || runtime.equals("crun");
    }

    /**
     * Where init's child cannot be watched: exec {@code sleep 0}. Success proves the binary init runs is there; a
     * 126/127 means the image has none (init then exits), and an exec that cannot start means the container
     * already stopped.
     */
    private void probeSleep(String id, SandboxSpec spec) {
        ExecResult probe;
        try {
            probe = execs.execFromRoot(id, ExecRequest.of("sleep", "0").withTimeout(Duration.ofSeconds(30))
                    .withOutputLimit(4096));
        } catch (dev.sandboxkit.SandboxNotFoundException gone) {
            requireRunning(id, spec);
            throw new SandboxAcquireException("container for image " + spec.image() + " stopped while starting", gone);
        }
        if (probe.exitCode() == 126 || probe.exitCode() == 127) {
            removeQuietly(id);
            throw new SandboxAcquireException("container for image " + spec.image() + " did not start: the image has "
                    + "no usable `sleep` (" + probe.stderr().strip() + "); sandboxkit runs `sleep infinity` as PID 1's child");
        }
        requireRunning(id, spec);
    }

    /** Polls until the engine reports the container stopped, for up to two seconds. */
    private void awaitNotRunning(String id) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (System.nanoTime() < deadline) {
            JsonNode state = containerState(id);
            if (state == null || !state.path("Running").asBoolean(false)) {
                return;
            }
            Thread.sleep(5);
        }
    }

    private JsonNode requireRunning(String id, SandboxSpec spec) {
        JsonNode state = containerState(id);
        if (state == null || !state.path("Running").asBoolean(false)) {
            String logs = state == null ? "" : logTail(id);
            removeQuietly(id);
            throw new SandboxAcquireException("container for image " + spec.image() + " did not start: "
                    + (state == null ? "it was removed" : "it exited with code " + state.path("ExitCode").asText("?"))
                    + (logs.isEmpty() ? "" : ": " + logs));
        }
        return state;
    }

    /**
     * The container's {@code State} from a raw inspect, or {@code null} when it does not exist. Not docker-java's
     * inspect: it cannot parse Podman's answer, whose {@code HostConfig.Binds} lists our mount as
     * {@code src:/workspace:rw,rprivate,rbind}, and fails on a source path with a ':' in it (session ids may have one).
     */
    private JsonNode containerState(String id) {
        EngineClient.Response r;
        try {
            r = engine.call("GET", "/containers/" + EngineClient.segment(id) + "/json", null);
        } catch (IOException e) {
            throw host.unreachable(e);
        }
        if (r.status() == 404) {
            return null;
        }
        try {
            if (r.status() == 200) {
                return r.json().path("State");
            }
        } catch (IOException e) {
            throw new SandboxException("unreadable inspect answer for container " + EngineExec.shortId(id), e);
        }
        throw new SandboxException("cannot inspect container " + EngineExec.shortId(id) + " (" + r.status() + "): "
                + r.message());
    }

    /** Whether one of init's children already runs {@code sleep} (it has exec'd). */
    private static boolean childIsSleep(Path children) {
        try {
            for (String child : Files.readString(children).trim().split(" ")) {
                if (!child.isEmpty() && Files.readString(Path.of("/proc", child, "comm")).trim().equals("sleep")) {
                    return true;
                }
            }
        } catch (IOException | RuntimeException raced) {
            // the child exec'd or exited between the two reads: look again
        }
        return false;
    }

    /** The last lines the container printed (init's complaint), for the error message. */
    private String logTail(String id) {
        StringBuilder out = new StringBuilder();
        try {
            docker.logContainerCmd(id).withStdOut(true).withStdErr(true).withTail(5)
                    .exec(new ResultCallback.Adapter<Frame>() {
                        @Override
                        public void onNext(Frame frame) {
                            out.append(new String(frame.getPayload(), java.nio.charset.StandardCharsets.UTF_8));
                        }
                    }).awaitCompletion(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            log.debug("Could not read the logs of {}: {}", EngineExec.shortId(id), e.toString());
        }
        return out.toString().trim();
    }

    /** Makes sure the image is present, pulling it if the policy allows. */
    private void ensureImage(SandboxSpec spec) {
        String image = spec.image();
        PullPolicy policy = spec.pullPolicy();
        if (policy != PullPolicy.ALWAYS && knownImages.contains(image)) {
            return;
        }
        if (policy != PullPolicy.ALWAYS) {
            try {
                run(() -> docker.inspectImageCmd(image).exec());
                knownImages.add(image);
                return;
            } catch (NotFoundException e) {
                if (policy == PullPolicy.NEVER) {
                    throw missingImage(spec, e);
                }
            } catch (DockerException e) {
                throw new SandboxAcquireException("cannot inspect image " + image + ": " + message(e), e);
            }
        }
        pull(image);
        knownImages.add(image);
    }

    private void pull(String image) {
        String repository = image;
        String tag = "latest"; // without a tag the engine would pull every tag
        int at = image.indexOf('@');
        if (at >= 0) {
            repository = image.substring(0, at);
            tag = image.substring(at + 1);
        } else {
            int colon = image.lastIndexOf(':');
            if (colon > image.lastIndexOf('/')) {
                repository = image.substring(0, colon);
                tag = image.substring(colon + 1);
            }
        }
        log.info("Pulling image {}", image);
        String repo = repository;
        String t = tag;
        PullImageResultCallback callback = call(() -> docker.pullImageCmd(repo).withTag(t)
                .exec(new PullImageResultCallback()));
        try {
            boolean done = callback.awaitCompletion(pullTimeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!done) {
                throw new SandboxAcquireException("pulling image " + image + " timed out after " + pullTimeout, null,
                        true);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxAcquireException("interrupted while pulling image " + image, e);
        } catch (SandboxException e) {
            throw e;
        } catch (RuntimeException e) {
            if (isConnectionFailure(e)) {
                throw host.unreachable(e);
            }
            throw new SandboxAcquireException("cannot pull image " + image + ": " + message(e), e);
        } finally {
            try {
                callback.close();
            } catch (IOException ignored) {
                // nothing to release
            }
        }
    }

    private static SandboxAcquireException missingImage(SandboxSpec spec, Exception cause) {
        if (spec.pullPolicy() == PullPolicy.NEVER) {
            return new SandboxAcquireException("image " + spec.image()
                    + " is not present locally and the pull policy is NEVER", cause);
        }
        return new SandboxAcquireException("image " + spec.image() + " is not present locally: " + message(cause),
                cause);
    }

    private static boolean isMissingImage(NotFoundException e) {
        return EngineErrors.noSuchImage(e.getHttpStatus(), message(e));
    }

    /** Fails before anything is created for ids Linux accepts but the engine would refuse at start. */
    static void requireEngineIds(HostWorkspaces.Ids ids) {
        if (ids.uid() > MAX_ENGINE_ID || ids.gid() > MAX_ENGINE_ID) {
            throw new SandboxConfigurationException("the sandbox user " + ids + " cannot run on Docker: the engine "
                    + "(runc) accepts uids and gids 0.." + MAX_ENGINE_ID + " only");
        }
    }

    private static Capability capability(String name) {
        String n = name.trim().toUpperCase(Locale.ROOT);
        if (n.startsWith("CAP_")) {
            n = n.substring(4);
        }
        try {
            return Capability.valueOf(n);
        } catch (IllegalArgumentException e) {
            throw new SandboxConfigurationException("unknown Linux capability: " + name);
        }
    }

    private void removeQuietly(String id) {
        try {
            docker.removeContainerCmd(id).withForce(true).withRemoveVolumes(true).exec();
        } catch (RuntimeException e) {
            log.warn("Could not remove half-created container {}: {}", EngineExec.shortId(id), e.toString());
        }
    }

    /** Runs a docker-java call, turning connection failures into {@link SandboxUnavailableException}. */
    private <T> T call(Supplier<T> action) {
        try {
            return action.get();
        } catch (DockerException e) {
            throw e;
        } catch (java.util.concurrent.CancellationException e) {
            // docker-java's connection pool gives up this way when the calling thread is interrupted.
            Thread.currentThread().interrupt();
            throw new SandboxException("interrupted while waiting for the Docker engine", e);
        } catch (RuntimeException e) {
            if (isConnectionFailure(e)) {
                throw host.unreachable(e);
            }
            throw e;
        }
    }

    private void run(Runnable action) {
        call(() -> {
            action.run();
            return null;
        });
    }

    /** docker-java reports transport failures as runtime exceptions wrapping an IOException. */
    private static boolean isConnectionFailure(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof DockerException || t instanceof com.fasterxml.jackson.core.JsonProcessingException) {
                return false; // the engine answered (a JSON error is an IOException too, but no transport failure)
            }
            if (t instanceof IOException) {
                return true;
            }
        }
        return false;
    }

    private static String message(Throwable e) {
        String m = e.getMessage();
        if (m == null) {
            return e.getClass().getSimpleName();
        }
        // docker-java puts the raw JSON body in the message: {"message":"..."} (Podman's has "cause" and
        // "response" around it)
        String trimmed = m.trim();
        int i = trimmed.indexOf('{');
        if (i >= 0 && trimmed.endsWith("}")) {
            try {
                JsonNode text = EngineClient.JSON.readTree(trimmed.substring(i)).get("message");
                if (text != null && text.isTextual()) {
                    return text.asText();
                }
            } catch (IOException | RuntimeException notJson) {
                // keep the text as it is
            }
        }
        return trimmed;
    }
}
