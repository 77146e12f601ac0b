package dev.sandboxkit.docker.internal.workdir;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.docker.internal.engine.ContainerBody;
import dev.sandboxkit.docker.internal.engine.EngineClient;
import dev.sandboxkit.docker.internal.engine.EngineConnection;
import dev.sandboxkit.docker.internal.engine.EngineControl;
import dev.sandboxkit.docker.internal.files.VolumeAccess;
import dev.sandboxkit.spi.SandboxLabels;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static dev.sandboxkit.docker.internal.engine.EngineClient.segment;

/**
 * The engine calls of {@link VolumeWorkdirs}: the volumes themselves (create, inspect, list, remove) and their
 * helper containers, one per volume (created, never started, network none), cached until the volume goes or the
 * backend closes, on which {@link Access} makes each {@link VolumeAccess} call; one-off containers for a command the
 * archive API cannot do. Every call on the driver's own client, under a deadline. Thread-safe.
 */
final class VolumeEngine {
    /** How often a volume removal that another manager's new helper got in the way of is tried. */
    private static final int REMOVE_ATTEMPTS = 5;
    private static final long RUN_TIMEOUT_SECONDS = 120;
    /** How long an archive stream may wait for its next bytes (docker-java's response timeout before). */
    private static final long ARCHIVE_IDLE_NANOS = TimeUnit.MINUTES.toNanos(2);
    private static final Logger log = LoggerFactory.getLogger(VolumeEngine.class);
    /** Per thread, the volumes it has frozen (or found idle) for the files call it makes: calls nest. */
    private static final ThreadLocal<Map<String, Boolean>> FROZEN = ThreadLocal.withInitial(HashMap::new);

    private final EngineControl engine;
    private final String instanceId;
    private final String defaultUser;
    private final VolumeFreeze freeze;
    /** Volume name to its helper container id. */
    private final Map<String, String> helpers = new ConcurrentHashMap<>();

    VolumeEngine(EngineControl engine, String instanceId, String defaultUser) {
        this.engine = engine;
        this.instanceId = instanceId;
        this.defaultUser = defaultUser;
        this.freeze = new VolumeFreeze(engine.client());
    }

    // ================================================================== volumes

    void createVolume(String name, Map<String, String> labels) {
        Map<String, Object> body = new HashMap<>();
        body.put("Name", name);
        body.put("Labels", labels);
        EngineClient.Response r = engine.call("POST", "/volumes/create", body);
        if (r.status() / 100 != 2) {
            throw new SandboxException("cannot create volume " + name + " (" + r.status() + "): " + r.message());
        }
    }

    /** The volume's labels, or {@code null} when it does not exist. */
    Map<String, String> labelsOf(String name) {
        EngineClient.Response r = engine.call("GET", "/volumes/" + segment(name), null);
        if (r.status() == 404) {
            return null;
        }
        if (r.status() != 200) {
            throw new SandboxException("cannot inspect volume " + name + " (" + r.status() + "): " + r.message());
        }
        return labels(engine.json(r, "a volume inspect").path("Labels"));
    }

    private static Map<String, String> labels(JsonNode node) {
        Map<String, String> out = new HashMap<>();
        node.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        return out;
    }

    /** A listed volume: its name, labels and creation time (if the engine gives one). */
    record Listed(String name, Map<String, String> labels, String createdAt) {
    }

    /** The volumes whose labels match every {@code k=v} of {@code filter}. */
    List<Listed> volumes(List<String> filter, String what) {
        EngineClient.Response r = engine.call("GET", "/volumes?" + EngineControl.labelFilter(filter), null);
        if (r.status() != 200) {
            throw new SandboxException("cannot list " + what + " (" + r.status() + "): " + r.message());
        }
        List<Listed> out = new ArrayList<>();
        for (JsonNode v : engine.json(r, "a volume listing").path("Volumes")) {
            out.add(new Listed(v.path("Name").asText(), labels(v.path("Labels")), v.path("CreatedAt").asText("")));
        }
        return out;
    }

    /** Removes the volume's helpers (ours and leftovers), then the volume. Idempotent. */
    void removeVolume(String name) {
        for (int attempt = 1; ; attempt++) {
            String mine = helpers.remove(name);
            if (mine != null) {
                removeContainerQuietly(mine);
            }
            for (JsonNode c : engine.containers(Map.of(VolumeWorkdirs.VOLUME, name))) {
                removeContainerQuietly(c.path("Id").asText());
            }
            EngineClient.Response r = engine.call("DELETE", "/volumes/" + segment(name), null);
            if (r.status() / 100 == 2 || r.status() == 404) {
                return;
            }
            if (r.status() != 409) {
                throw new SandboxException("cannot remove workdir volume " + name + ": " + r.message());
            }
            // "volume is in use": a helper made after the listing (another manager reading a snapshot's
            // metadata lists every snapshot volume; seen in CI). Remove it too, a few times at most.
            if (attempt == REMOVE_ATTEMPTS) {
                throw new SandboxException("cannot remove workdir volume " + name + ": " + r.message());
            }
            pause(50L * attempt);
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

    // ================================================================== helpers

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
                    List.of("sleep", "infinity"), VolumeWorkdirs.HELPER);
            helpers.put(volume, id);
            return id;
        }
    }

    private String createContainer(String volume, Map<String, String> volumeLabels, String image, String user,
            List<String> capabilities, List<String> argv, String role) {
        String img = image != null ? image : volumeLabels.get(VolumeWorkdirs.IMAGE);
        if (img == null || img.isEmpty()) {
            throw new SandboxException("no image to open volume " + volume + " with (its " + VolumeWorkdirs.IMAGE
                    + " label is missing)");
        }
        Map<String, String> labels = new HashMap<>();
        labels.put(SandboxLabels.MANAGED, "true");
        labels.put(SandboxLabels.OWNER, instanceId);
        labels.put(VolumeWorkdirs.ROLE, role);
        labels.put(VolumeWorkdirs.VOLUME, volume);
        String session = volumeLabels.get(SandboxLabels.SESSION);
        if (session != null) {
            labels.put(SandboxLabels.SESSION, session);
        }
        EngineClient.Response r = engine.call("POST", "/containers/create", ContainerBody.helper(img, argv, user,
                labels, new Workdirs.Mount(true, volume).json(), capabilities));
        if (r.status() / 100 != 2) {
            throw new SandboxException("cannot create a helper container for volume " + volume + " from image " + img
                    + " (" + r.status() + "): " + r.message());
        }
        return engine.json(r, "a container create").path("Id").asText();
    }

    /** Forgets a helper the engine no longer has (swept by another manager), so the next call makes a new one. */
    private boolean helperGone(String volume, String id) {
        if (engine.call("GET", "/containers/" + segment(id) + "/json", null).status() != 404) {
            return false;
        }
        helpers.remove(volume, id);
        return true;
    }

    /**
     * Removes what a crash left: one-off containers older than {@code cutoff} (any owner: their commands time out
     * long before), and helpers labelled with this driver's own owner id that it does not hold.
     */
    void sweep(long cutoff) {
        for (JsonNode c : engine.containers(Map.of(SandboxLabels.MANAGED, "true"))) {
            Map<String, String> l = labels(c.path("Labels"));
            String role = l.get(VolumeWorkdirs.ROLE);
            String id = c.path("Id").asText();
            boolean old = c.hasNonNull("Created") && c.path("Created").asLong() <= cutoff;
            boolean oldRun = VolumeWorkdirs.RUN.equals(role) && old;
            boolean strayHelper = VolumeWorkdirs.HELPER.equals(role) && instanceId.equals(l.get(SandboxLabels.OWNER))
                    && !helpers.containsValue(id) && old;
            if (oldRun || strayHelper) {
                removeContainerQuietly(id);
            }
        }
    }

    /** Removes every helper this backend holds. */
    void close() {
        for (String id : helpers.values()) {
            removeContainerQuietly(id);
        }
        helpers.clear();
    }

    private void removeContainerQuietly(String id) {
        try {
            EngineClient.Response r = engine.removeContainer(id, false);
            if (r.status() / 100 != 2 && r.status() != 404) {
                log.warn("Could not remove helper container {}: {}", id, r.message());
            }
        } catch (RuntimeException e) {
            log.warn("Could not remove helper container {}: {}", id, e.toString());
        }
    }

    // ================================================================== engine calls on one volume

    /** {@link VolumeAccess} on a volume's helper; a helper that vanished is made again once. */
    final class Access implements VolumeAccess {
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
                    r = engine.client().statPath(id, path);
                } catch (IOException e) {
                    throw engine.failure(e);
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
                EngineClient.Streamed s;
                try {
                    s = engine.client().stream("GET", archive(id, path), List.of(), ARCHIVE_IDLE_NANOS,
                            EngineConnection.NO_DEADLINE);
                } catch (IOException e) {
                    throw engine.failure(e);
                }
                if (s.error() == null) {
                    return s.body();
                }
                if (s.error().status() == 404) {
                    if (attempt == 0 && helperGone(volume, id)) {
                        continue;
                    }
                    throw new SandboxNotFoundException("no such file or directory in volume " + volume + ": " + path);
                }
                throw new SandboxFileException(SandboxFileException.Reason.IO_ERROR, "cannot read '" + path
                        + "' from volume " + volume + " (" + s.error().status() + "): " + s.error().message());
            }
        }

        @Override
        public byte[] getPrefix(String path, int max) {
            for (int attempt = 0; ; attempt++) {
                String id = helper(volume, image);
                EngineClient.Response r;
                try {
                    r = engine.client().archivePrefix(id, path, max);
                } catch (IOException e) {
                    throw engine.failure(e);
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
            EngineClient.Response r;
            try {
                r = engine.client().upload(archive(id, dir) + "&noOverwriteDirNonDir=true&copyUIDGID=false", tar,
                        length, ARCHIVE_IDLE_NANOS);
            } catch (java.io.UncheckedIOException e) { // the archive failed to read: a files error, not an outage
                throw new SandboxFileException(SandboxFileException.Reason.IO_ERROR, "cannot write into '" + dir
                        + "': " + e.getCause(), e.getCause());
            } catch (IOException e) {
                throw engine.failure(e);
            } finally {
                try {
                    tar.close();
                } catch (IOException ignored) {
                    // read to its end already, or the call failed anyway
                }
            }
            if (r.status() == 404) {
                helperGone(volume, id);
                throw new SandboxNotFoundException("no such directory in volume " + volume + ": " + dir);
            }
            if (r.status() / 100 != 2) {
                // Also what a sandbox changing the tree under the extraction causes: a files error, not an outage.
                throw new SandboxFileException(SandboxFileException.Reason.IO_ERROR, "cannot write into '" + dir
                        + "' of volume " + volume + " (" + r.status() + "): " + r.message());
            }
        }

        private String archive(String id, String path) {
            return "/containers/" + segment(id) + "/archive?path=" + URLEncoder.encode(path, StandardCharsets.UTF_8);
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
            String id = createContainer(volume, volumeLabels, image, runAs, capabilities, argv, VolumeWorkdirs.RUN);
            String path = "/containers/" + segment(id);
            try {
                EngineClient.Response r = engine.call("POST", path + "/start", null);
                if (r.status() / 100 == 2) {
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(RUN_TIMEOUT_SECONDS);
                    try {
                        r = engine.client().call("POST", path + "/wait", null, deadline);
                    } catch (SocketTimeoutException e) { // the container is removed below
                        throw new SandboxFileException(SandboxFileException.Reason.IO_ERROR, argv.get(0) + " on volume "
                                + volume + " did not finish within " + RUN_TIMEOUT_SECONDS + " s", e);
                    } catch (IOException e) {
                        throw engine.failure(e);
                    }
                }
                if (r.status() / 100 != 2) {
                    throw new SandboxFileException(SandboxFileException.Reason.IO_ERROR, "cannot run " + argv.get(0)
                            + " on volume " + volume + " (the image needs it): " + r.message());
                }
                int code = engine.json(r, "a container wait").path("StatusCode").asInt(-1);
                return new Run(code, logs(id));
            } finally {
                removeContainerQuietly(id);
            }
        }

        private String logs(String id) {
            try {
                return engine.logTail(id, 20, Duration.ofSeconds(5));
            } catch (RuntimeException e) {
                log.debug("Could not read the logs of {}: {}", id, e.toString());
                return "";
            }
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
