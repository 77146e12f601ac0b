package dev.sandboxkit.docker.internal.workdir;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.InspectVolumeResponse;
import com.github.dockerjava.api.command.WaitContainerResultCallback;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.DockerClientException;
import com.github.dockerjava.api.exception.DockerException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Mount;
import com.github.dockerjava.api.model.MountType;
import com.github.dockerjava.api.model.VolumeOptions;
import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.UploadResult;
import dev.sandboxkit.docker.internal.engine.DockerHost;
import dev.sandboxkit.docker.internal.engine.EngineClient;
import dev.sandboxkit.docker.internal.files.HostWorkspaces;
import dev.sandboxkit.docker.internal.files.VolumeAccess;
import dev.sandboxkit.docker.internal.files.VolumeFiles;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.spi.SnapshotDescriptor;
import dev.sandboxkit.spi.WorkspaceCapability;
import dev.sandboxkit.spi.WorkspaceDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Workdirs as one named volume per session, {@code volume:<name>}: nothing on the JVM's host, so the engine may
 * be remote. The volume carries the containers' labels ({@link SandboxLabels#MANAGED}, session, owner) and is
 * mounted at /workspace with {@code nocopy} (the image's own /workspace never fills it). The files API, exports,
 * imports, snapshots and templates go through {@link VolumeFiles} on a helper container per volume (created,
 * never started, network none, labelled {@value #ROLE}={@value #HELPER}), cached until the workdir is deleted (which
 * removes every helper of the volume, whoever made it) or the driver closed; see {@link #sweep} for leftovers. Snapshots are volumes too,
 * {@code tree/} beside a {@code snapshot.properties} (volume labels cannot be changed; snapshot labels can).
 */
public final class VolumeWorkdirs implements Workdirs {
    /** The prefix of every location this backend hands out. */
    public static final String PREFIX = "volume:";
    /** What a sandboxkit volume or container is for: {@value #WORKDIR}, {@value #SNAPSHOT}, {@value #HELPER}. */
    public static final String ROLE = "dev.sandboxkit.docker.role";
    /** On helpers and one-off containers: the volume they mount. */
    public static final String VOLUME = "dev.sandboxkit.docker.volume";
    /** On volumes: the image helpers for it are made from (the session's). */
    static final String IMAGE = "dev.sandboxkit.docker.image";
    static final String WORKDIR = "workdir";
    static final String SNAPSHOT = "snapshot";
    static final String HELPER = "helper";
    /** A one-off container for a command the archive API cannot do (a delete); removed when it exits. */
    public static final String RUN = "run";
    private static final String MOUNT = SandboxSpec.WORKSPACE;
    private static final String TREE = MOUNT + "/tree";
    private static final String META = "snapshot.properties";
    private static final String LABEL = "label.";
    /**
     * Snapshot labels that never change ({@link #labelSnapshot} refuses to), copied onto the snapshot's volume so
     * that a listing reads the metadata of the matching snapshots only, never of other fleets' or sessions'.
     */
    private static final List<String> IDENTITY = List.of(SandboxLabels.FLEET, SandboxLabels.SESSION,
            SandboxLabels.SNAPSHOT);
    /** A one-off container older than this is a crash's leftover: its command has a far shorter timeout. */
    static final long HELPER_GRACE_SECONDS = 600;
    private static final long SWEEP_EVERY_NANOS = TimeUnit.SECONDS.toNanos(60);
    private static final long RUN_TIMEOUT_SECONDS = 120;
    private static final Logger log = LoggerFactory.getLogger(VolumeWorkdirs.class);
    /** Per thread, the volumes it has frozen (or found idle) for the files call it makes: calls nest. */
    private static final ThreadLocal<Map<String, Boolean>> FROZEN = ThreadLocal.withInitial(HashMap::new);

    private final DockerClient docker;
    private final EngineClient engine;
    private final DockerHost host;
    private final String instanceId;
    private final String defaultUser;
    private final String namespace;
    private final long helperGraceSeconds;
    /** How often a volume removal that another manager's new helper got in the way of is tried. */
    private static final int REMOVE_ATTEMPTS = 5;
    /** Volume name to its helper container id. */
    private final Map<String, String> helpers = new ConcurrentHashMap<>();
    private final VolumeFreeze freeze;
    private volatile long lastSweep = System.nanoTime() - SWEEP_EVERY_NANOS;

    /**
     * Volumes on the engine {@code docker} talks to.
     *
     * @param docker      lifecycle calls (volumes, containers, archive streams)
     * @param engine      the raw client, for the archive stat ({@code HEAD}) docker-java lacks
     * @param instanceId  the manager's instance id (the owner label)
     * @param root        the workspace root, only to keep volume names of managers with separate roots apart
     * @param defaultUser the sandbox user when the spec names none
     */
    public VolumeWorkdirs(DockerClient docker, EngineClient engine, String instanceId, Path root, String defaultUser) {
        this(docker, engine, instanceId, root, defaultUser, HELPER_GRACE_SECONDS);
    }

    /** As the public constructor, with another grace period for leftover helpers (tests). */
    VolumeWorkdirs(DockerClient docker, EngineClient engine, String instanceId, Path root, String defaultUser,
            long helperGraceSeconds) {
        this.helperGraceSeconds = helperGraceSeconds;
        this.docker = docker;
        this.engine = engine;
        this.freeze = new VolumeFreeze(engine);
        this.host = engine.host();
        this.instanceId = instanceId;
        this.defaultUser = defaultUser;
        this.namespace = root.toAbsolutePath().normalize().toString();
    }

    /**
     * Whether a location is a volume's.
     *
     * @param location a workdir or snapshot location
     * @return whether it starts with {@value #PREFIX}
     */
    public static boolean owns(String location) {
        return location != null && location.startsWith(PREFIX);
    }

    @Override
    public Set<WorkspaceCapability> capabilities() {
        return EnumSet.of(WorkspaceCapability.FILES, WorkspaceCapability.SNAPSHOTS, WorkspaceCapability.WORKSPACE_ARCHIVE,
                WorkspaceCapability.DIRECTORY_TEMPLATES);
    }

    /** The spec's user, else the default: no host directory needs the JVM's uid. */
    @Override
    public String sandboxUser(SandboxSpec spec) {
        return HostWorkspaces.Ids.parse(spec.user() != null ? spec.user() : defaultUser).toString();
    }

    private HostWorkspaces.Ids ids(SandboxSpec spec) {
        return HostWorkspaces.Ids.parse(sandboxUser(spec));
    }

    // ================================================================== workdirs

    @Override
    public String create(String sessionId, SandboxSpec spec) {
        String name = volumeName(sessionId);
        ensureVolume(name, sessionId, spec);
        return PREFIX + name;
    }

    private void ensureVolume(String name, String sessionId, SandboxSpec spec) {
        boolean created = labelsOf(name) == null;
        if (created) {
            Map<String, String> labels = new HashMap<>();
            labels.put(SandboxLabels.MANAGED, "true");
            labels.put(SandboxLabels.SESSION, sessionId);
            labels.put(SandboxLabels.OWNER, instanceId);
            labels.put(ROLE, WORKDIR);
            labels.put(IMAGE, spec.image());
            call(() -> docker.createVolumeCmd().withName(name).withLabels(labels).exec());
        }
        // The volume's top directory is root's 0755 when new: it must be the sandbox user's, as a host workdir is.
        VolumeFiles files = filesOn(name, MOUNT, spec, VolumeFiles.UNLIMITED);
        if (created) {
            files.ownRoot();
            return;
        }
        long t0 = System.nanoTime();
        if (files.claim(PREFIX + name)) {
            log.info("Workdir {}{} re-owned to {} ({} ms): the session's user changed", PREFIX, name,
                    sandboxUser(spec), (System.nanoTime() - t0) / 1_000_000);
        }
    }

    /** {@code sbk-<session, sanitised>-<hash of root and session>}: within the engine's name rules, unique per root. */
    String volumeName(String sessionId) {
        StringBuilder clean = new StringBuilder();
        for (char c : sessionId.toCharArray()) {
            clean.append((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'
                    || c == '_' || c == '.' ? c : '_');
            if (clean.length() == 40) {
                break;
            }
        }
        return "sbk-" + clean + "-" + hash(namespace + "\0" + sessionId);
    }

    @Override
    public void delete(String location) {
        removeVolume(name(location));
    }

    /** Volumes cannot be renamed: the slot's volume keeps its name. */
    @Override
    public String adopt(String location, String sessionId) {
        return location;
    }

    @Override
    public Mount mount(CreateRequest request) {
        String name = name(request.workspace());
        if (labelsOf(name) == null && !name.equals(volumeName(request.sessionId()))) {
            throw new SandboxAcquireException("workdir " + request.workspace() + " does not exist");
        }
        // Recreated if it vanished; re-owned if the session's user changed.
        ensureVolume(name, request.sessionId(), request.spec());
        return volumeMount(name);
    }

    private static Mount volumeMount(String name) {
        return new Mount().withType(MountType.VOLUME).withSource(name).withTarget(MOUNT).withReadOnly(false)
                .withVolumeOptions(new VolumeOptions().withNoCopy(true));
    }

    @Override
    public SandboxFiles files(String location, SandboxSpec spec, FileLimits limits) {
        String name = name(location);
        requireVolume(name, location);
        return filesOn(name, MOUNT, spec, limits);
    }

    private VolumeFiles filesOn(String name, String root, SandboxSpec spec, FileLimits limits) {
        HostWorkspaces.Ids ids = ids(spec);
        return new VolumeFiles(new Access(name, spec.image(), sandboxUser(spec)), root, ids.uid(), ids.gid(), limits);
    }

    /** For copies between volumes, where no spec is at hand: the volume's own image, owner root (set on import). */
    private VolumeFiles filesOn(String name, String root) {
        return new VolumeFiles(new Access(name, null, defaultUser), root, 0, 0, VolumeFiles.UNLIMITED);
    }

    @Override
    public void export(String location, SandboxSpec spec, OutputStream out) throws IOException {
        String name = name(location);
        requireVolume(name, location);
        filesOn(name, MOUNT, spec, VolumeFiles.UNLIMITED).exportTree(out);
    }

    @Override
    public void importInto(String location, SandboxSpec spec, InputStream in) {
        String name = name(location);
        requireVolume(name, location);
        filesOn(name, MOUNT, spec, VolumeFiles.UNLIMITED).importTree(in);
    }

    // ================================================================== snapshots and templates

    @Override
    public SnapshotDescriptor snapshot(String location, Map<String, String> labels) {
        String source = name(location);
        Map<String, String> sourceLabels = requireVolume(source, location);
        String id = labels.get(SandboxLabels.SNAPSHOT);
        if (id == null || !id.matches("[A-Za-z0-9-]{1,64}")) {
            throw new IllegalArgumentException("snapshot labels need a " + SandboxLabels.SNAPSHOT + " id, got: " + id);
        }
        String snap = "sbk-snap-" + id.toLowerCase(java.util.Locale.ROOT);
        Map<String, String> volumeLabels = new HashMap<>();
        volumeLabels.put(SandboxLabels.MANAGED, "true");
        for (String key : IDENTITY) {
            if (labels.containsKey(key)) {
                volumeLabels.put(key, labels.get(key));
            }
        }
        volumeLabels.put(ROLE, SNAPSHOT);
        volumeLabels.put(IMAGE, sourceLabels.getOrDefault(IMAGE, ""));
        call(() -> docker.createVolumeCmd().withName(snap).withLabels(volumeLabels).exec());
        try {
            filesOn(snap, MOUNT).mkdirs("tree");
            UploadResult copied = copy(filesOn(source, MOUNT), filesOn(snap, TREE));
            Instant created = Instant.now();
            writeMeta(snap, labels, created, copied.bytes());
            return new SnapshotDescriptor(PREFIX + snap, labels, created, copied.bytes());
        } catch (RuntimeException e) {
            removeQuietly(snap);
            throw e;
        }
    }

    /** Export to a private temporary file, then import: both streams are checked as everywhere else. */
    private static UploadResult copy(VolumeFiles from, VolumeFiles to) {
        Path temp = null;
        try {
            temp = Files.createTempFile("sandboxkit-volume-copy", ".tar");
            try (OutputStream out = Files.newOutputStream(temp)) {
                from.exportTree(out);
            }
            try (InputStream in = Files.newInputStream(temp)) {
                return to.importTree(in);
            }
        } catch (IOException e) {
            throw new SandboxException("cannot copy a volume workdir: " + e, e);
        } finally {
            if (temp != null) {
                try {
                    Files.deleteIfExists(temp);
                } catch (IOException ignored) {
                    // a leftover in the temporary directory
                }
            }
        }
    }

    @Override
    public void restore(String source, String location, SandboxSpec spec) {
        String target = name(location);
        requireVolume(target, location);
        if (!owns(source)) {
            throw new SandboxConfigurationException("cannot restore " + source + " into the volume workdir " + location
                    + ": it is a host directory snapshot (restore into a host-directory workdir instead)");
        }
        String from = name(source);
        Map<String, String> labels = requireVolume(from, source);
        VolumeFiles into = filesOn(target, MOUNT, spec, VolumeFiles.UNLIMITED);
        VolumeFiles origin = filesOn(from, SNAPSHOT.equals(labels.get(ROLE)) ? TREE : MOUNT);
        into.clear();
        copy(origin, into);
    }

    @Override
    public void seed(Path directory, String location, SandboxSpec spec) {
        String target = name(location);
        requireVolume(target, location);
        Path from = directory.toAbsolutePath().normalize();
        VolumeFiles into = filesOn(target, MOUNT, spec, VolumeFiles.UNLIMITED);
        try (InputStream tree = VolumeFiles.hostTree(from)) {
            into.clear();
            into.importTree(tree);
        } catch (IOException e) {
            throw new SandboxException("cannot read template directory " + from + ": " + e, e);
        }
    }

    @Override
    public List<WorkspaceDescriptor> listWorkspaces(Map<String, String> selector) {
        List<String> filter = new ArrayList<>();
        filter.add(SandboxLabels.MANAGED + "=true");
        filter.add(ROLE + "=" + WORKDIR);
        selector.forEach((k, v) -> filter.add(k + "=" + v));
        EngineClient.Response r;
        try {
            // The raw API: docker-java's volume listing has no creation time.
            r = engine.call("GET", "/volumes?filters=" + java.net.URLEncoder.encode(
                    EngineClient.JSON.createObjectNode().set("label", EngineClient.JSON.valueToTree(filter)).toString(),
                    StandardCharsets.UTF_8), null);
        } catch (java.io.InterruptedIOException e) {
            Thread.currentThread().interrupt();
            throw new dev.sandboxkit.SandboxUnavailableException("interrupted while listing workdir volumes", e);
        } catch (IOException e) {
            throw host.unreachable(e);
        }
        if (r.status() != 200) {
            throw new SandboxException("cannot list workdir volumes (" + r.status() + "): " + r.message());
        }
        List<WorkspaceDescriptor> out = new ArrayList<>();
        try {
            for (JsonNode v : r.json().path("Volumes")) {
                Map<String, String> labels = new HashMap<>();
                v.path("Labels").fields().forEachRemaining(e -> labels.put(e.getKey(), e.getValue().asText()));
                if (!labels.entrySet().containsAll(selector.entrySet())) {
                    continue; // the engine filtered already; this guards against a filter it ignored
                }
                String created = v.path("CreatedAt").asText("");
                if (created.isEmpty()) {
                    continue; // its age cannot be judged: never a sweep candidate
                }
                out.add(new WorkspaceDescriptor(PREFIX + v.path("Name").asText(), labels,
                        OffsetDateTime.parse(created).toInstant()));
            }
        } catch (IOException | java.time.format.DateTimeParseException e) {
            throw new SandboxException("unexpected volume listing from the engine: " + e, e);
        }
        return out;
    }

    @Override
    public List<SnapshotDescriptor> listSnapshots(Map<String, String> selector) {
        List<String> filter = new ArrayList<>(List.of(SandboxLabels.MANAGED + "=true", ROLE + "=" + SNAPSHOT));
        for (String key : IDENTITY) {
            if (selector.containsKey(key)) {
                filter.add(key + "=" + selector.get(key));
            }
        }
        List<InspectVolumeResponse> volumes = call(() -> docker.listVolumesCmd().withFilter("label", filter).exec())
                .getVolumes();
        List<SnapshotDescriptor> out = new ArrayList<>();
        for (InspectVolumeResponse v : volumes == null ? List.<InspectVolumeResponse>of() : volumes) {
            SnapshotDescriptor d = readMeta(v.getName());
            if (d != null && d.labels().entrySet().containsAll(selector.entrySet())) {
                out.add(d);
            }
        }
        return out;
    }

    @Override
    public void labelSnapshot(String location, Map<String, String> labels) {
        String snap = name(location);
        SnapshotDescriptor d = readMeta(snap);
        if (d == null) {
            throw new SandboxNotFoundException("snapshot " + location + " does not exist");
        }
        for (String key : IDENTITY) {
            if (!java.util.Objects.equals(d.labels().get(key), labels.get(key))) {
                throw new IllegalArgumentException("a snapshot's " + key + " label never changes: it was "
                        + d.labels().get(key) + ", not " + labels.get(key));
            }
        }
        writeMeta(snap, labels, d.createdAt(), d.sizeBytes());
    }

    @Override
    public void deleteSnapshot(String location) {
        removeVolume(name(location));
    }

    /** Written last: a snapshot volume without it is unfinished and not listed. */
    private void writeMeta(String snap, Map<String, String> labels, Instant created, long size) {
        Properties p = new Properties();
        p.setProperty("created", created.toString());
        p.setProperty("size", Long.toString(size));
        labels.forEach((k, v) -> p.setProperty(LABEL + k, v));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            p.store(new java.io.OutputStreamWriter(out, StandardCharsets.UTF_8), null);
        } catch (IOException e) {
            throw new IllegalStateException(e); // in memory
        }
        filesOn(snap, MOUNT).write(META, out.toByteArray());
    }

    private SnapshotDescriptor readMeta(String snap) {
        try {
            byte[] meta = filesOn(snap, MOUNT).readBytes(META);
            Properties p = new Properties();
            p.load(new StringReader(new String(meta, StandardCharsets.UTF_8)));
            Map<String, String> labels = new HashMap<>();
            for (String key : p.stringPropertyNames()) {
                if (key.startsWith(LABEL)) {
                    labels.put(key.substring(LABEL.length()), p.getProperty(key));
                }
            }
            return new SnapshotDescriptor(PREFIX + snap, labels, Instant.parse(p.getProperty("created")),
                    Long.parseLong(p.getProperty("size")));
        } catch (SandboxNotFoundException gone) {
            return null;
        } catch (IOException | RuntimeException e) {
            if (e instanceof SandboxException && !(e instanceof SandboxFileException)) {
                throw (SandboxException) e;
            }
            log.warn("Ignoring snapshot volume {} with unreadable metadata: {}", snap, e.toString());
            return null;
        }
    }

    // ================================================================== volumes and helpers

    /** The volume's labels, or {@code null} when it does not exist. */
    private Map<String, String> labelsOf(String name) {
        try {
            InspectVolumeResponse v = call(() -> docker.inspectVolumeCmd(name).exec());
            return v.getLabels() == null ? Map.of() : v.getLabels();
        } catch (NotFoundException e) {
            return null;
        }
    }

    private Map<String, String> requireVolume(String name, String location) {
        Map<String, String> labels = labelsOf(name);
        if (labels == null) {
            throw new SandboxNotFoundException("workdir volume " + location + " does not exist");
        }
        return labels;
    }

    /** Removes the volume's helpers (ours and leftovers), then the volume. Idempotent. */
    private void removeVolume(String name) {
        for (int attempt = 1; ; attempt++) {
            String mine = helpers.remove(name);
            if (mine != null) {
                removeContainerQuietly(mine);
            }
            for (Container c : call(() -> docker.listContainersCmd().withShowAll(true)
                    .withLabelFilter(Map.of(VOLUME, name)).exec())) {
                removeContainerQuietly(c.getId());
            }
            try {
                call(() -> docker.removeVolumeCmd(name).exec());
                return;
            } catch (NotFoundException gone) {
                return;
            } catch (ConflictException inUse) {
                // "volume is in use": a helper made after the listing (another manager reading a snapshot's
                // metadata lists every snapshot volume; seen in CI). Remove it too, a few times at most.
                if (attempt == REMOVE_ATTEMPTS) {
                    throw new SandboxException("cannot remove workdir volume " + name + ": " + inUse.getMessage(),
                            inUse);
                }
                pause(50L * attempt);
            } catch (DockerException e) {
                throw new SandboxException("cannot remove workdir volume " + name + ": " + e.getMessage(), e);
            }
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxException("interrupted while removing a workdir volume", e);
        }
    }

    private void removeQuietly(String volume) {
        try {
            removeVolume(volume);
        } catch (RuntimeException e) {
            log.warn("Could not remove volume {}: {}", volume, e.toString());
        }
    }

    /** The volume's helper: created on first use (from {@code image}, else the volume's own), never started. */
    private String helper(String volume, String image) {
        String known = helpers.get(volume);
        if (known != null) {
            return known;
        }
        synchronized (this) {
            known = helpers.get(volume);
            if (known != null) {
                return known;
            }
            Map<String, String> volumeLabels = labelsOf(volume);
            if (volumeLabels == null) {
                throw new SandboxNotFoundException("workdir volume " + volume + " does not exist");
            }
            String id = createContainer(volume, volumeLabels, image, defaultUser, List.of(),
                    List.of("sleep", "infinity"), HELPER);
            helpers.put(volume, id);
            return id;
        }
    }

    private String createContainer(String volume, Map<String, String> volumeLabels, String image, String user,
            List<String> capabilities, List<String> argv, String role) {
        String img = image != null ? image : volumeLabels.get(IMAGE);
        if (img == null || img.isEmpty()) {
            throw new SandboxException("no image to open volume " + volume + " with (its " + IMAGE + " label is missing)");
        }
        Map<String, String> labels = new HashMap<>();
        labels.put(SandboxLabels.MANAGED, "true");
        labels.put(SandboxLabels.OWNER, instanceId);
        labels.put(ROLE, role);
        labels.put(VOLUME, volume);
        String session = volumeLabels.get(SandboxLabels.SESSION);
        if (session != null) {
            labels.put(SandboxLabels.SESSION, session);
        }
        HostConfig hc = HostConfig.newHostConfig().withMounts(List.of(volumeMount(volume))).withNetworkMode("none")
                .withCapDrop(Capability.ALL).withSecurityOpts(List.of("no-new-privileges")).withPidsLimit(64L);
        if (!capabilities.isEmpty()) {
            hc.withCapAdd(capabilities.stream().map(Capability::valueOf).toArray(Capability[]::new));
        }
        try {
            return call(() -> docker.createContainerCmd(img).withEntrypoint(argv).withUser(user).withLabels(labels)
                    .withWorkingDir("/").withNetworkDisabled(true).withHostConfig(hc).exec()).getId();
        } catch (DockerException e) {
            throw new SandboxException("cannot create a helper container for volume " + volume + " from image " + img
                    + ": " + e.getMessage(), e);
        }
    }

    /** Forgets a helper the engine no longer has (swept by another manager), so the next call makes a new one. */
    private boolean helperGone(String volume, String id) {
        try {
            EngineClient.Response r = engine.call("GET", "/containers/" + EngineClient.segment(id) + "/json", null);
            if (r.status() != 404) {
                return false;
            }
        } catch (IOException e) {
            throw host.unreachable(e);
        }
        helpers.remove(volume, id);
        return true;
    }

    /**
     * Removes what a crash left: one-off containers older than the grace period (any owner: their commands time out
     * long before), and helpers labelled with this driver's own owner id that it does not hold. Helpers of other
     * managers are never touched (they may be in use); every helper of a volume goes when its workdir is deleted.
     * Throttled to once a minute; called from the orphan sweep's listing.
     */
    @Override
    public void sweep() {
        long now = System.nanoTime();
        if (now - lastSweep < SWEEP_EVERY_NANOS) {
            return;
        }
        lastSweep = now;
        long cutoff = Instant.now().getEpochSecond() - helperGraceSeconds;
        try {
            for (Container c : call(() -> docker.listContainersCmd().withShowAll(true)
                    .withLabelFilter(Map.of(SandboxLabels.MANAGED, "true")).exec())) {
                Map<String, String> l = c.getLabels() == null ? Map.of() : c.getLabels();
                boolean oldRun = RUN.equals(l.get(ROLE)) && c.getCreated() != null && c.getCreated() <= cutoff;
                boolean strayHelper = HELPER.equals(l.get(ROLE)) && instanceId.equals(l.get(SandboxLabels.OWNER))
                        && !helpers.containsValue(c.getId()) && c.getCreated() != null && c.getCreated() <= cutoff;
                if (oldRun || strayHelper) {
                    removeContainerQuietly(c.getId());
                }
            }
        } catch (RuntimeException e) {
            log.debug("Helper sweep failed: {}", e.toString());
        }
    }

    @Override
    public void close() {
        for (String id : helpers.values()) {
            removeContainerQuietly(id);
        }
        helpers.clear();
    }

    private void removeContainerQuietly(String id) {
        try {
            docker.removeContainerCmd(id).withForce(true).exec();
        } catch (NotFoundException gone) {
            // already gone
        } catch (RuntimeException e) {
            log.warn("Could not remove helper container {}: {}", id, e.toString());
        }
    }

    private static String name(String location) {
        if (!owns(location)) {
            throw new SandboxConfigurationException("not a volume location: " + location);
        }
        String name = location.substring(PREFIX.length());
        if (!name.matches("[a-zA-Z0-9][a-zA-Z0-9_.-]*")) {
            throw new SandboxConfigurationException("not a volume name: " + location);
        }
        return name;
    }

    private static String hash(String s) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 6);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** docker-java transport failures as {@link dev.sandboxkit.SandboxUnavailableException}. */
    private <T> T call(java.util.function.Supplier<T> action) {
        try {
            return action.get();
        } catch (DockerException e) {
            throw e;
        } catch (RuntimeException e) {
            for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
                if (t instanceof IOException) {
                    throw host.unreachable(e);
                }
            }
            throw e;
        }
    }

    // ================================================================== engine calls on one volume

    /** {@link VolumeAccess} on a volume's helper; a helper that vanished is made again once. */
    private final class Access implements VolumeAccess {
        private final String volume;
        private final String image;
        private final String user;

        Access(String volume, String image, String user) {
            this.volume = volume;
            this.image = image;
            this.user = user;
        }

        @Override
        public PathStat stat(String path) {
            for (int attempt = 0; ; attempt++) {
                String id = helper(volume, image);
                EngineClient.Response r;
                try {
                    r = engine.statPath(id, path);
                } catch (IOException e) {
                    throw host.unreachable(e);
                }
                if (r.status() == 200) {
                    return parseStat(r.body(), path);
                }
                if (r.status() == 404) {
                    if (attempt == 0 && helperGone(volume, id)) {
                        continue;
                    }
                    return null;
                }
                throw new SandboxFileException(SandboxFileException.Reason.IO_ERROR, "the engine could not stat '"
                        + path + "' in volume " + volume + " (" + r.status() + ")");
            }
        }

        @Override
        public InputStream get(String path) {
            for (int attempt = 0; ; attempt++) {
                String id = helper(volume, image);
                try {
                    return call(() -> docker.copyArchiveFromContainerCmd(id, path).exec());
                } catch (NotFoundException e) {
                    if (attempt == 0 && helperGone(volume, id)) {
                        continue;
                    }
                    throw new SandboxNotFoundException("no such file or directory in volume " + volume + ": " + path);
                } catch (DockerException e) {
                    throw new SandboxFileException(SandboxFileException.Reason.IO_ERROR, "cannot read '" + path
                            + "' from volume " + volume + ": " + e.getMessage(), e);
                }
            }
        }

        @Override
        public byte[] getPrefix(String path, int max) {
            for (int attempt = 0; ; attempt++) {
                String id = helper(volume, image);
                EngineClient.Response r;
                try {
                    r = engine.archivePrefix(id, path, max);
                } catch (IOException e) {
                    throw host.unreachable(e);
                }
                if (r.status() == 200) {
                    return r.body();
                }
                if (r.status() == 404) {
                    if (attempt == 0 && helperGone(volume, id)) {
                        continue;
                    }
                    throw new SandboxNotFoundException("no such file or directory in volume " + volume + ": " + path);
                }
                throw new SandboxFileException(SandboxFileException.Reason.IO_ERROR, "cannot read '" + path
                        + "' from volume " + volume + " (" + r.status() + "): " + r.message());
            }
        }

        @Override
        public void put(String dir, InputStream tar, long length) {
            String id = helper(volume, image);
            try (InputStream in = tar) {
                call(() -> {
                    docker.copyArchiveToContainerCmd(id).withRemotePath(dir).withTarInputStream(in)
                            .withNoOverwriteDirNonDir(true).exec();
                    return null;
                });
            } catch (NotFoundException e) {
                helperGone(volume, id);
                throw new SandboxNotFoundException("no such directory in volume " + volume + ": " + dir);
            } catch (DockerException e) {
                // Also what a sandbox changing the tree under the extraction causes: a files error, not an outage.
                throw new SandboxFileException(SandboxFileException.Reason.IO_ERROR, "cannot write into '" + dir
                        + "' of volume " + volume + ": " + e.getMessage(), e);
            } catch (IOException e) {
                throw new SandboxFileException(SandboxFileException.Reason.IO_ERROR, "cannot write into '" + dir
                        + "': " + e, e);
            }
        }

        @Override
        public <T> T quiesced(Quiesced<T> body) {
            Map<String, Boolean> mine = FROZEN.get();
            Boolean live = mine.get(volume);
            if (live != null) {
                return body.run(live);
            }
            return freeze.around(volume, l -> {
                mine.put(volume, l);
                try {
                    return body.run(l);
                } finally {
                    mine.remove(volume);
                }
            });
        }

        @Override
        public Run run(List<String> argv) {
            return runAs(user, List.of(), argv);
        }

        @Override
        public Run runAsRoot(List<String> argv, List<String> capabilities) {
            return runAs("0:0", capabilities, argv);
        }

        private Run runAs(String runAs, List<String> capabilities, List<String> argv) {
            Map<String, String> volumeLabels = labelsOf(volume);
            if (volumeLabels == null) {
                throw new SandboxNotFoundException("workdir volume " + volume + " does not exist");
            }
            String id = createContainer(volume, volumeLabels, image, runAs, capabilities, argv, RUN);
            try {
                call(() -> {
                    docker.startContainerCmd(id).exec();
                    return null;
                });
                Integer code = docker.waitContainerCmd(id).exec(new WaitContainerResultCallback())
                        .awaitStatusCode(RUN_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                return new Run(code == null ? -1 : code, logs(id));
            } catch (DockerException e) {
                throw new SandboxFileException(SandboxFileException.Reason.IO_ERROR, "cannot run " + argv.get(0)
                        + " on volume " + volume + " (the image needs it): " + e.getMessage(), e);
            } catch (DockerClientException e) { // the wait timed out; the container is removed below
                throw new SandboxFileException(SandboxFileException.Reason.IO_ERROR, argv.get(0) + " on volume "
                        + volume + " did not finish within " + RUN_TIMEOUT_SECONDS + " s: " + e.getMessage(), e);
            } finally {
                removeContainerQuietly(id);
            }
        }

        private String logs(String id) {
            StringBuilder out = new StringBuilder();
            try {
                docker.logContainerCmd(id).withStdOut(true).withStdErr(true).withTail(20)
                        .exec(new ResultCallback.Adapter<Frame>() {
                            @Override
                            public void onNext(Frame frame) {
                                out.append(new String(frame.getPayload(), StandardCharsets.UTF_8));
                            }
                        }).awaitCompletion(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                log.debug("Could not read the logs of {}: {}", id, e.toString());
            }
            return out.toString();
        }
    }

    private static VolumeAccess.PathStat parseStat(byte[] json, String path) {
        try {
            JsonNode n = EngineClient.JSON.readTree(json);
            String mtime = n.path("mtime").asText("1970-01-01T00:00:00Z");
            Instant t;
            try {
                t = OffsetDateTime.parse(mtime).toInstant();
            } catch (RuntimeException e) {
                t = Instant.EPOCH;
            }
            return new VolumeAccess.PathStat(n.path("name").asText(""), n.path("size").asLong(0),
                    n.path("mode").asLong(0), t);
        } catch (IOException e) {
            throw new SandboxFileException(SandboxFileException.Reason.IO_ERROR, "unreadable stat of '" + path
                    + "' from the engine", e);
        }
    }
}
