package dev.sandboxkit.docker.internal.workdir;

import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.UploadResult;
import dev.sandboxkit.docker.internal.engine.EngineControl;
import dev.sandboxkit.docker.internal.files.HostWorkspaces;
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
    private static final Logger log = LoggerFactory.getLogger(VolumeWorkdirs.class);

    private final VolumeEngine engine;
    private final String instanceId;
    private final String defaultUser;
    private final String namespace;
    private final long helperGraceSeconds;
    private volatile long lastSweep = System.nanoTime() - SWEEP_EVERY_NANOS;

    /**
     * Volumes on the engine {@code engine} talks to.
     *
     * @param engine      the driver's control calls
     * @param instanceId  the manager's instance id (the owner label)
     * @param root        the workspace root, only to keep volume names of managers with separate roots apart
     * @param defaultUser the sandbox user when the spec names none
     */
    public VolumeWorkdirs(EngineControl engine, String instanceId, Path root, String defaultUser) {
        this(engine, instanceId, root, defaultUser, HELPER_GRACE_SECONDS);
    }

    /** As the public constructor, with another grace period for leftover helpers (tests). */
    VolumeWorkdirs(EngineControl engine, String instanceId, Path root, String defaultUser, long helperGraceSeconds) {
        this.helperGraceSeconds = helperGraceSeconds;
        this.engine = new VolumeEngine(engine, instanceId, defaultUser);
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
            engine.createVolume(name, labels);
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
        return new Mount(true, name);
    }

    @Override
    public SandboxFiles files(String location, SandboxSpec spec, FileLimits limits) {
        String name = name(location);
        requireVolume(name, location);
        return filesOn(name, MOUNT, spec, limits);
    }

    private VolumeFiles filesOn(String name, String root, SandboxSpec spec, FileLimits limits) {
        HostWorkspaces.Ids ids = ids(spec);
        return new VolumeFiles(engine.new Access(name, spec.image(), sandboxUser(spec)), root, ids.uid(), ids.gid(), limits);
    }

    /** For copies between volumes, where no spec is at hand: the volume's own image, owner root (set on import). */
    private VolumeFiles filesOn(String name, String root) {
        return new VolumeFiles(engine.new Access(name, null, defaultUser), root, 0, 0, VolumeFiles.UNLIMITED);
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
        engine.createVolume(snap, volumeLabels);
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
        List<WorkspaceDescriptor> out = new ArrayList<>();
        for (VolumeEngine.Listed v : engine.volumes(filter, "workdir volumes")) {
            if (!v.labels().entrySet().containsAll(selector.entrySet())) {
                continue; // the engine filtered already; this guards against a filter it ignored
            }
            if (v.createdAt().isEmpty()) {
                continue; // its age cannot be judged: never a sweep candidate
            }
            try {
                out.add(new WorkspaceDescriptor(PREFIX + v.name(), v.labels(),
                        OffsetDateTime.parse(v.createdAt()).toInstant()));
            } catch (java.time.format.DateTimeParseException e) {
                throw new SandboxException("unexpected volume listing from the engine: " + e, e);
            }
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
        List<SnapshotDescriptor> out = new ArrayList<>();
        for (VolumeEngine.Listed v : engine.volumes(filter, "snapshot volumes")) {
            SnapshotDescriptor d = readMeta(v.name());
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

    // ================================================================== volumes

    /** The volume's labels, or {@code null} when it does not exist. */
    private Map<String, String> labelsOf(String name) {
        return engine.labelsOf(name);
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
        engine.removeVolume(name);
    }

    private void removeQuietly(String volume) {
        try {
            removeVolume(volume);
        } catch (RuntimeException e) {
            log.warn("Could not remove volume {}: {}", volume, e.toString());
        }
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
        try {
            engine.sweep(Instant.now().getEpochSecond() - helperGraceSeconds);
        } catch (RuntimeException e) {
            log.debug("Helper sweep failed: {}", e.toString());
        }
    }

    @Override
    public void close() {
        engine.close();
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
}
