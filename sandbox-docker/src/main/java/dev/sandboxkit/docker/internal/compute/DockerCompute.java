package dev.sandboxkit.docker.internal.compute;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.docker.internal.channel.ExecChannels;
import dev.sandboxkit.docker.internal.engine.ContainerBody;
import dev.sandboxkit.docker.internal.engine.DockerHost;
import dev.sandboxkit.docker.internal.engine.EngineClient;
import dev.sandboxkit.docker.internal.engine.EngineControl;
import dev.sandboxkit.docker.internal.engine.EngineErrors;
import dev.sandboxkit.docker.internal.engine.EngineExec;
import dev.sandboxkit.docker.internal.engine.EngineTunnel;
import dev.sandboxkit.docker.internal.engine.ExecGate;
import dev.sandboxkit.docker.internal.workdir.VolumeWorkdirs;
import dev.sandboxkit.docker.internal.workdir.Workdirs;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.PhaseRecorder;
import dev.sandboxkit.spi.PortConnection;
import dev.sandboxkit.spi.SandboxDescriptor;
import dev.sandboxkit.spi.TerminalConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * The Docker driver's compute half: the sandbox containers (create from the spec, start and watch until
 * {@code sleep} runs, remove, list) and what runs in them (execs through {@link ExecChannels}, terminals, port
 * tunnels), every engine call on the driver's own client. Thread-safe.
 */
public final class DockerCompute implements AutoCloseable {
    /**
     * Under init, sleep failing to exec shows only after start returns. Measured here: an inspect 10 ms after
     * start saw the exit every time on an idle machine (used for remote engines); a local engine is watched
     * through /proc for up to this long instead.
     */
    private static final long STARTUP_CHECK_INTERVAL_MILLIS = 10;
    private static final long STARTUP_WATCH_SECONDS = 5;
    private static final Logger log = LoggerFactory.getLogger(DockerCompute.class);

    private final DockerHost host;
    private final EngineClient client;
    private final EngineControl engine;
    private final EngineExec execs;
    private final ExecChannels channels;
    private final EngineTunnel.Registry tunnels;
    private final DockerImages images;
    /** Podman only: the runtime its service runs every container with, once asked. */
    private volatile String podmanRuntime;

    /**
     * Containers on the engine {@code client} talks to.
     *
     * @param client             the driver's engine client (closed by {@link #close()})
     * @param pullTimeout        the longest an image pull may take
     * @param dockerConfig       the Docker CLI's configuration directory (registry credentials for pulls)
     * @param channelSetsid      whether each channel command gets a session of its own
     * @param channelIdleTimeout how long an unused command channel stays open
     * @param clock              the driver's clock
     */
    public DockerCompute(EngineClient client, Duration pullTimeout, Path dockerConfig, boolean channelSetsid,
            Duration channelIdleTimeout, Clock clock) {
        this.client = client;
        this.host = client.host();
        this.engine = new EngineControl(client);
        this.images = new DockerImages(engine, pullTimeout, dockerConfig);
        this.execs = new EngineExec(client);
        this.tunnels = new EngineTunnel.Registry(client, execs);
        // setsid gives each channel command a session of its own, as an engine exec has (one more exec each).
        this.channels = new ExecChannels(client, execs, channelSetsid, channelIdleTimeout, clock);
    }

    /**
     * The control calls (for the workspace half, which shares the client).
     *
     * @return the control calls
     */
    public EngineControl engine() {
        return engine;
    }

    /** Asks the engine whether it answers ({@code GET /_ping}). */
    public void ping() {
        EngineClient.Response r = engine.call("GET", "/_ping", null);
        if (r.status() != 200) {
            throw new SandboxUnavailableException("the Docker engine at " + host + " answered /_ping with "
                    + r.status() + ": " + r.message());
        }
    }

    /**
     * Creates and starts the request's container on its workdir.
     *
     * @param request the container to create
     * @param mount   the workdir's mount at /workspace
     * @param user    the user the container runs as
     * @return the container id
     */
    public String create(CreateRequest request, Workdirs.Mount mount, String user) {
        SandboxSpec spec = request.spec();
        requireHonouredRuntime(spec);
        PhaseRecorder phases = request.phases();
        for (int attempt = 1; ; attempt++) {
            long t0 = System.nanoTime();
            images.ensure(spec);
            long t1 = System.nanoTime();
            phases.record(SandboxEvent.PHASE_IMAGE_CHECK, Duration.ofNanos(t1 - t0));
            EngineClient.Response created = engine.call("POST", "/containers/create",
                    ContainerBody.sandbox(request, mount.json(), user));
            if (created.status() == 404) {
                String m = created.message();
                if (!EngineErrors.noSuchImage(404, m)) {
                    throw new SandboxAcquireException("the engine refused the container: " + m);
                }
                // Removed since we last saw it: forget it and check again (pulls if the policy allows).
                images.forget(spec.image());
                if (attempt == 1 && spec.pullPolicy() != PullPolicy.NEVER) {
                    continue;
                }
                throw DockerImages.missing(spec, m);
            }
            if (created.status() / 100 != 2) {
                String m = created.message();
                if (spec.runtime() != null && EngineErrors.aboutRuntime(m)) {
                    throw unknownRuntime(spec.runtime(), m);
                }
                throw new SandboxAcquireException("the engine refused the container for image " + spec.image() + ": "
                        + m + initHint(m));
            }
            String id = engine.json(created, "a container create").path("Id").asText();
            long t2 = System.nanoTime();
            phases.record(SandboxEvent.PHASE_CREATE, Duration.ofNanos(t2 - t1));
            // A volume's files call freezes the containers running on it: none of ours starts in the middle of one.
            EngineClient.Response started;
            try (ExecGate.Pass starting = VolumeWorkdirs.owns(request.workspace())
                    ? client.gate().enterVolume(request.workspace()) : null) {
                started = engine.call("POST", "/containers/" + EngineClient.segment(id) + "/start", null);
            } catch (SandboxUnavailableException e) {
                removeQuietly(id);
                throw e;
            } catch (RuntimeException e) {
                removeQuietly(id);
                throw new SandboxAcquireException("container for image " + spec.image() + " did not start: "
                        + e.getMessage(), e);
            }
            if (started.status() / 100 != 2) {
                removeQuietly(id);
                String m = started.message();
                throw new SandboxAcquireException("container for image " + spec.image() + " did not start: " + m
                        + initHint(m));
            }
            checkStillRunning(id, spec);
            phases.record(SandboxEvent.PHASE_START, Duration.ofNanos(System.nanoTime() - t2));
            // Under a sandboxing runtime one channel per sandbox: gVisor (runsc 2022) loses track of the processes of
            // several long-lived attached execs at once; further concurrent execs run as plain engine execs.
            channels.created(id, spec.execMode(), hostVisibleProcesses(spec) ? ExecChannels.MAX_CHANNELS : 1);
            return id;
        }
    }

    /**
     * Runs a command in the sandbox (its command channel, else a plain engine exec).
     *
     * @param sandboxId the container
     * @param request   the command
     * @return its result
     */
    public ExecResult exec(String sandboxId, ExecRequest request) {
        Objects.requireNonNull(sandboxId, "sandboxId");
        Objects.requireNonNull(request, "request");
        return channels.exec(sandboxId, request);
    }

    /**
     * An attached exec of {@code nc 127.0.0.1 <port>} whose stdin and stdout carry the connection (see
     * {@link EngineTunnel}); the container keeps network {@code none}. The image needs {@code nc}.
     *
     * @param sandboxId the container
     * @param port      the port inside it
     * @return the connection
     */
    public PortConnection connect(String sandboxId, int port) {
        Objects.requireNonNull(sandboxId, "sandboxId");
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException("port must be 1-65535, got: " + port);
        }
        return tunnels.open(sandboxId, port);
    }

    /**
     * A plain engine exec with {@code Tty: true} (never the command channel: a terminal is the exec's own).
     *
     * @param sandboxId the container
     * @param request   the command
     * @return the terminal
     */
    public TerminalConnection openTerminal(String sandboxId, ExecRequest request) {
        Objects.requireNonNull(sandboxId, "sandboxId");
        Objects.requireNonNull(request, "request");
        return execs.openTerminal(sandboxId, request);
    }

    /**
     * The exec router with its channel pools (for tests and the benchmark).
     *
     * @return the router
     */
    public ExecChannels channels() {
        return channels;
    }

    /**
     * Removes a container with its processes; returns once it is gone. Idempotent.
     *
     * @param sandboxId the container
     */
    public void remove(String sandboxId) {
        execs.containerRemoving(sandboxId);
        channels.containerRemoving(sandboxId);
        tunnels.containerRemoving(sandboxId);
        try {
            // Another removal in progress may be one whose caller was interrupted: the engine then gives it up
            // with the client's connection, and the container stays.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (true) {
                EngineClient.Response r = engine.removeContainer(sandboxId, true);
                if (r.status() / 100 == 2 || r.status() == 404) {
                    return; // 404: already gone
                }
                if (!EngineErrors.removalInProgress(r.status(), r.message())) {
                    throw new SandboxException("cannot remove container " + EngineExec.shortId(sandboxId) + ": "
                            + r.message());
                }
                if (System.nanoTime() > deadline) {
                    throw new SandboxException("container " + EngineExec.shortId(sandboxId)
                            + " is still being removed after 30 s; remove it again later");
                }
                sleepBeforeRetry(sandboxId);
            }
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

    /**
     * The sandbox containers carrying {@code labels}, running or not (a volume's helpers left out). Also the moment
     * to close channels idle for too long: the manager's orphan sweep calls this periodically.
     *
     * @param labels the labels to match
     * @return the containers
     */
    public List<SandboxDescriptor> list(Map<String, String> labels) {
        channels.closeIdle();
        List<JsonNode> containers = engine.containers(labels);
        List<SandboxDescriptor> out = new ArrayList<>(containers.size());
        for (JsonNode c : containers) {
            Map<String, String> l = new HashMap<>();
            c.path("Labels").fields().forEachRemaining(e -> l.put(e.getKey(), e.getValue().asText()));
            if (!l.entrySet().containsAll(labels.entrySet())) {
                continue; // the engine filtered already; this guards against a filter it ignored
            }
            if (l.containsKey(VolumeWorkdirs.ROLE)) {
                continue; // a volume's helper container, not a sandbox (VolumeWorkdirs removes its own)
            }
            Instant created = Instant.ofEpochSecond(c.path("Created").asLong(0));
            out.add(new SandboxDescriptor(c.path("Id").asText(), l, created,
                    "running".equalsIgnoreCase(c.path("State").asText(""))));
        }
        return out;
    }

    @Override
    public void close() {
        tunnels.closeAll();
        channels.close();
        client.close();
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
            return client.podman();
        } catch (IOException e) {
            throw engine.failure(e);
        }
    }

    /** The runtime the Podman service runs every container with ({@code DefaultRuntime} in {@code /info}). */
    private String podmanDefaultRuntime() {
        String known = podmanRuntime;
        if (known != null) {
            return known;
        }
        known = info().path("DefaultRuntime").asText("runc");
        podmanRuntime = known;
        return known;
    }

    private JsonNode info() {
        EngineClient.Response r = engine.call("GET", "/info", null);
        if (r.status() != 200) {
            throw new SandboxException("GET /info answered " + r.status() + ": " + r.message());
        }
        return engine.json(r, "GET /info");
    }

    /** Podman runs init ({@code HostConfig.Init}) with catatonit, which is a package of its own. */
    private static String initHint(String message) {
        return EngineErrors.initMissing(message)
                ? " (Podman runs the sandbox's init with catatonit: install it, e.g. apt-get install catatonit, or set "
                + "init(false) in the spec)" : "";
    }

    /** The runtime the spec names is not one the engine has: say which it has, so the fix is obvious. */
    private SandboxAcquireException unknownRuntime(String runtime, String message) {
        String offered;
        try {
            TreeSet<String> names = new TreeSet<>();
            info().path("Runtimes").fieldNames().forEachRemaining(names::add);
            offered = names.isEmpty() ? "none listed" : String.join(", ", names);
        } catch (RuntimeException e) {
            offered = "unknown (" + e.getMessage() + ")";
        }
        return new SandboxAcquireException("the engine at " + host + " has no runtime '" + runtime + "'; it offers: "
                + offered + " (register one under \"runtimes\" in /etc/docker/daemon.json, then reload the engine): "
                + message);
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
     * The container's {@code State} from an inspect, or {@code null} when it does not exist. Only the fields needed
     * are read: Podman's answer lists our mount in {@code HostConfig.Binds} as {@code src:/workspace:rw,rprivate,rbind},
     * which typed clients fail to parse (and on a source path with a ':' in it; session ids may have one).
     */
    private JsonNode containerState(String id) {
        EngineClient.Response r = engine.call("GET", "/containers/" + EngineClient.segment(id) + "/json", null);
        if (r.status() == 404) {
            return null;
        }
        if (r.status() == 200) {
            return engine.json(r, "an inspect of container " + EngineExec.shortId(id)).path("State");
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
        try {
            return engine.logTail(id, 5, Duration.ofSeconds(2)).trim();
        } catch (RuntimeException e) {
            log.debug("Could not read the logs of {}: {}", EngineExec.shortId(id), e.toString());
            return "";
        }
    }

    private void removeQuietly(String id) {
        try {
            EngineClient.Response r = engine.removeContainer(id, true);
            if (r.status() / 100 != 2 && r.status() != 404) {
                log.warn("Could not remove half-created container {}: {}", EngineExec.shortId(id), r.message());
            }
        } catch (RuntimeException e) {
            log.warn("Could not remove half-created container {}: {}", EngineExec.shortId(id), e.toString());
        }
    }
}
