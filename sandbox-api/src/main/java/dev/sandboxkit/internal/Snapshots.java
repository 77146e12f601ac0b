package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnsupportedException;
import dev.sandboxkit.WorkspaceTemplate;
import dev.sandboxkit.spi.WorkspaceBackend;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SnapshotId;
import dev.sandboxkit.SnapshotInfo;
import dev.sandboxkit.spi.WorkspaceCapability;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SnapshotDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Workdir snapshots: what the engine asks of the driver, and the labels that tie a snapshot to its session and
 * fleet. The driver holds the snapshots and their labels (as it holds containers), so every manager of the fleet
 * sees the same ones; the engine's lifecycle lock orders them with destroys and restores of the same session.
 */
final class Snapshots {
    private static final Logger log = LoggerFactory.getLogger(Snapshots.class);

    private final WorkspaceBackend workspaces;
    private final Clock clock;
    private final ManagerIdentity identity;
    /** {count, bytes, read at (clock millis)}: stats() runs on every gauge scrape, a listing reads every snapshot. */
    private volatile long[] totals;

    Snapshots(WorkspaceBackend workspaces, Clock clock, ManagerIdentity identity) {
        this.workspaces = workspaces;
        this.clock = clock;
        this.identity = identity;
    }

    /** Copies the session's workdir into a new, unkept snapshot. Lifecycle lock held. */
    SnapshotId take(SessionRecord rec) {
        requireSupported();
        SnapshotId id = SnapshotId.random();
        Map<String, String> labels = fleet();
        labels.put(SandboxLabels.SESSION, rec.sessionId());
        labels.put(SandboxLabels.OWNER, identity.instanceId());
        labels.put(SandboxLabels.STORE, identity.storeId());
        labels.put(SandboxLabels.SNAPSHOT, id.value());
        labels.put(SandboxLabels.KEPT, "false");
        workspaces.snapshotWorkspace(rec.workspace(), labels);
        totals = null;
        return id;
    }

    /**
     * Fills a new workdir (a new session's, before its first container, or a pool slot's) from the spec's template,
     * if it names one. A template that is missing, or that this driver cannot copy, is a configuration error.
     */
    void seed(String workspace, SandboxSpec spec) {
        WorkspaceTemplate template = spec.template();
        if (template == null) {
            return;
        }
        if (template.directory() != null) {
            if (!workspaces.workspaceCapabilities().contains(WorkspaceCapability.DIRECTORY_TEMPLATES)) {
                throw new SandboxConfigurationException("the " + workspaces.name()
                        + " driver cannot seed workdirs from host directories (template " + template + ")");
            }
            workspaces.seedWorkspace(template.directory(), workspace, spec);
            return;
        }
        if (!supported()) {
            throw new SandboxConfigurationException("the " + workspaces.name() + " driver has no snapshots (template "
                    + template + ")");
        }
        try {
            workspaces.restoreWorkspace(find(template.snapshot()).location(), workspace, spec);
        } catch (SandboxNotFoundException gone) {
            throw new SandboxConfigurationException("the spec's template snapshot " + template.snapshot()
                    + " does not exist (any more): keep a template snapshot (keepSnapshot) while sessions are created"
                    + " from it", gone);
        }
    }

    /** The snapshot, or not found. */
    SnapshotDescriptor find(SnapshotId id) {
        Map<String, String> selector = fleet();
        selector.put(SandboxLabels.SNAPSHOT, id.value());
        return workspaces.listSnapshots(selector).stream().findFirst()
                .orElseThrow(() -> new SandboxNotFoundException("snapshot " + id + " does not exist"));
    }

    /** The session's snapshots, oldest first. */
    List<SnapshotInfo> of(String sessionId) {
        Map<String, String> selector = fleet();
        selector.put(SandboxLabels.SESSION, sessionId);
        return workspaces.listSnapshots(selector).stream().map(Snapshots::info)
                .sorted(Comparator.comparing(SnapshotInfo::createdAt)).toList();
    }

    void keep(SnapshotId id, boolean keep) {
        SnapshotDescriptor d = find(id);
        Map<String, String> labels = new HashMap<>(d.labels());
        labels.put(SandboxLabels.KEPT, Boolean.toString(keep));
        workspaces.labelSnapshot(d.location(), labels);
        totals = null;
    }

    void delete(SnapshotId id) {
        try {
            workspaces.deleteSnapshot(find(id).location());
        } catch (SandboxNotFoundException gone) {
            // idempotent
        }
        totals = null;
    }

    /** After a destroy: the session's snapshots go, except the kept ones. Never fails the destroy. */
    void deleteUnkept(String sessionId) {
        if (!supported()) {
            return;
        }
        Map<String, String> selector = fleet();
        selector.put(SandboxLabels.SESSION, sessionId);
        selector.put(SandboxLabels.KEPT, "false");
        try {
            for (SnapshotDescriptor d : workspaces.listSnapshots(selector)) {
                workspaces.deleteSnapshot(d.location());
                log.info("Session {}: snapshot {} deleted with it", sessionId, d.labels().get(SandboxLabels.SNAPSHOT));
                totals = null;
            }
        } catch (RuntimeException e) {
            log.warn("Session {}: destroyed, but its snapshots could not all be deleted: {}", sessionId, e.toString());
        }
    }

    /**
     * The orphan sweep's part: deletes the fleet's unkept snapshots taken before {@code takenBefore} that
     * {@code orphan} accepts.
     */
    void sweepOrphans(java.util.function.Predicate<SnapshotDescriptor> orphan, Instant takenBefore) {
        if (!supported()) {
            return;
        }
        Map<String, String> selector = fleet();
        selector.put(SandboxLabels.KEPT, "false");
        for (SnapshotDescriptor d : workspaces.listSnapshots(selector)) {
            if (!d.createdAt().isBefore(takenBefore) || !orphan.test(d)) {
                continue;
            }
            try {
                workspaces.deleteSnapshot(d.location());
                totals = null;
                log.info("Removed orphan snapshot {} of session {}: the session is gone",
                        d.labels().get(SandboxLabels.SNAPSHOT), d.labels().get(SandboxLabels.SESSION));
            } catch (RuntimeException e) {
                log.warn("Could not remove orphan snapshot {}: {}", d.location(), e.toString());
            }
        }
    }

    /**
     * {count, bytes} of the fleet's snapshots: exact after this manager's own changes, at most a second old for
     * other managers' (one listing per second, however often the gauges are read).
     */
    long[] totals() {
        if (!supported()) {
            return new long[] {0, 0};
        }
        long now = clock.millis();
        long[] t = totals;
        if (t == null || now - t[2] >= 1_000 || now < t[2]) {
            List<SnapshotDescriptor> all = workspaces.listSnapshots(fleet());
            t = new long[] {all.size(), all.stream().mapToLong(SnapshotDescriptor::sizeBytes).sum(), now};
            totals = t;
        }
        return new long[] {t[0], t[1]};
    }

    private boolean supported() {
        return workspaces.workspaceCapabilities().contains(WorkspaceCapability.SNAPSHOTS);
    }

    private void requireSupported() {
        if (!supported()) {
            throw new SandboxUnsupportedException("the " + workspaces.name() + " driver has no workdir snapshots");
        }
    }

    private Map<String, String> fleet() {
        Map<String, String> labels = new HashMap<>();
        labels.put(SandboxLabels.MANAGED, "true");
        labels.put(SandboxLabels.FLEET, identity.fleet());
        return labels;
    }

    private static SnapshotInfo info(SnapshotDescriptor d) {
        return new SnapshotInfo(new SnapshotId(d.labels().get(SandboxLabels.SNAPSHOT)),
                d.labels().getOrDefault(SandboxLabels.SESSION, ""), d.createdAt(), d.sizeBytes(),
                Boolean.parseBoolean(d.labels().get(SandboxLabels.KEPT)));
    }
}
