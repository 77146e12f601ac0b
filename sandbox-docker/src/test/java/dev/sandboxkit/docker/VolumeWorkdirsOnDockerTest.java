package dev.sandboxkit.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.InspectVolumeResponse;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Container;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.SnapshotId;
import dev.sandboxkit.WorkspaceTemplate;
import dev.sandboxkit.docker.internal.files.FilesTestSupport;
import dev.sandboxkit.docker.internal.workdir.VolumeWorkdirs;
import dev.sandboxkit.spi.WorkspaceCapability;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.testkit.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The named-volume workdir backend's own lifecycle on the real engine: the labelled volume, its removal on
 * destroy, helpers hidden from the sandbox listing, suspend and resume on the same volume, snapshots as volumes,
 * archives moving between a host-directory manager and a volume manager, and the remote-engine refusal lifted.
 */
@Tag("volume")
@DisplayName("Named-volume workdirs on the real Docker engine")
class VolumeWorkdirsOnDockerTest {
    private static final Duration TTL = Duration.ofMinutes(1);
    @TempDir
    Path tmp;
    private final ManualClock clock = new ManualClock();
    private final List<SandboxManager> managers = new ArrayList<>();
    private DockerClient docker;

    @BeforeEach
    void engine() {
        docker = ManagerOnDockerTest.EngineCheck.requireEngine();
    }

    @AfterEach
    void cleanUp() throws Exception {
        try {
            for (SandboxManager m : managers) {
                m.close();
                List<Container> left = docker.listContainersCmd().withShowAll(true)
                        .withLabelFilter(Map.of(SandboxLabels.OWNER, m.instanceId())).exec();
                left.forEach(c -> docker.removeContainerCmd(c.getId()).withForce(true).exec());
                assertThat(left).as("containers (sandboxes and helpers) left by " + m.instanceId()).isEmpty();
                List<InspectVolumeResponse> volumes = volumes(Map.of(SandboxLabels.OWNER, m.instanceId()));
                volumes.forEach(v -> docker.removeVolumeCmd(v.getName()).exec());
                assertThat(volumes).as("volumes left by " + m.instanceId()).isEmpty();
            }
        } finally {
            docker.close();
        }
    }

    private SandboxManager manager(String name, boolean volumes, SessionStore store) {
        SandboxManager.Builder b = SandboxManager.builder().driver("docker").workspaceRoot(tmp.resolve("root-" + name))
                .store(store).clock(clock).idleTimeout(TTL).reaperInterval(Duration.ofMillis(50))
                .reconcileInterval(Duration.ofMinutes(30));
        if (volumes) {
            b.driverProperty("docker.workdirs", "volume");
        }
        SandboxManager m = b.build();
        managers.add(m);
        return m;
    }

    private List<InspectVolumeResponse> volumes(Map<String, String> labels) {
        List<String> filter = new ArrayList<>();
        labels.forEach((k, v) -> filter.add(k + "=" + v));
        List<InspectVolumeResponse> found = docker.listVolumesCmd().withFilter("label", filter).exec().getVolumes();
        return found == null ? List.of() : found;
    }

    private static SandboxSpec spec() {
        return FilesTestSupport.spec().build();
    }

    private static String run(Sandbox sandbox, String script) {
        ExecResult r = sandbox.exec(ExecRequest.shell(script).withTimeout(Duration.ofMinutes(2)));
        assertThat(r.exitCode()).as("`%s` failed: %s%s", script, r.stdout(), r.stderr()).isZero();
        return r.stdout();
    }

    private void suspend(SandboxManager m, String sessionId) throws InterruptedException {
        ArchiveOnDockerTest.suspend(clock, TTL, m, sessionId);
    }

    private String volumeName(Sandbox sandbox) {
        String ws = sandbox.info().workspace();
        assertThat(ws).startsWith(VolumeWorkdirs.PREFIX);
        return ws.substring(VolumeWorkdirs.PREFIX.length());
    }

    @Test
    @DisplayName("a labelled volume per session, owned by the sandbox user, nothing on the host; removed on destroy")
    void labelledVolumeRemovedOnDestroy() throws Exception {
        SandboxManager m = manager("v", true, SessionStore.inMemory());
        String session = "vol-" + UUID.randomUUID().toString().substring(0, 8);
        Sandbox sandbox = m.acquire(session, spec());
        String name = volumeName(sandbox);
        Map<String, String> labels = docker.inspectVolumeCmd(name).exec().getLabels();
        assertThat(labels).containsEntry(SandboxLabels.MANAGED, "true").containsEntry(SandboxLabels.SESSION, session)
                .containsEntry(SandboxLabels.OWNER, m.instanceId());
        assertThat(run(sandbox, "stat -c '%u %a' /workspace && echo hi > /workspace/f && cat /workspace/f"))
                .isEqualTo("10001 700\nhi\n");
        assertThat(Files.exists(tmp.resolve("root-v").resolve(session))).as("no host workdir").isFalse();
        // The files API's helper is a container of its own, never listed as a sandbox.
        assertThat(sandbox.files().readBytes("f")).isEqualTo("hi\n".getBytes());
        List<Container> helpers = docker.listContainersCmd().withShowAll(true)
                .withLabelFilter(Map.of(VolumeWorkdirs.VOLUME, name)).exec();
        assertThat(helpers).hasSize(1);
        assertThat(helpers.get(0).getState()).as("never started").isEqualTo("created");
        assertThat(helpers.get(0).getLabels()).containsEntry(SandboxLabels.SESSION, session)
                .containsEntry(SandboxLabels.MANAGED, "true");
        assertThat(m.snapshots(session)).isEmpty();

        m.destroy(session);

        assertThatThrownBy(() -> docker.inspectVolumeCmd(name).exec()).isInstanceOf(NotFoundException.class);
        assertThat(docker.listContainersCmd().withShowAll(true).withLabelFilter(Map.of(VolumeWorkdirs.VOLUME, name))
                .exec()).as("helpers removed with the volume").isEmpty();
    }

    @Test
    @DisplayName("suspend and resume keep the files: the new container mounts the same volume")
    void suspendResumeKeepsFiles() throws Exception {
        SandboxManager m = manager("v", true, SessionStore.inMemory());
        String session = "vol-" + UUID.randomUUID().toString().substring(0, 8);
        Sandbox sandbox = m.acquire(session, spec());
        String first = sandbox.info().sandboxId();
        run(sandbox, ArchiveOnDockerTest.TREE);
        String before = run(sandbox, ArchiveOnDockerTest.FINGERPRINT);
        suspend(m, session);
        assertThat(sandbox.files().readBytes("src/a.txt")).as("files API while suspended").isEqualTo("hello\n".getBytes());
        assertThat(m.session(session).orElseThrow().state()).isEqualTo(SessionState.SUSPENDED);
        assertThat(run(sandbox, ArchiveOnDockerTest.FINGERPRINT)).isEqualTo(before);
        assertThat(sandbox.info().sandboxId()).isNotEqualTo(first);
        m.destroy(session);
    }

    @Test
    @DisplayName("a workdir archive moves between a host-directory manager and a volume manager, both ways, intact")
    void archiveRoundTripBetweenHostAndVolume() throws Exception {
        SessionStore store = SessionStore.inMemory();
        SandboxManager hostManager = manager("h", false, store);
        SandboxManager volumeManager = manager("v", true, SessionStore.inMemory());
        String onHost = "host-" + UUID.randomUUID().toString().substring(0, 8);
        Sandbox h = hostManager.acquire(onHost, spec());
        run(h, ArchiveOnDockerTest.TREE);
        String fingerprint = run(h, ArchiveOnDockerTest.FINGERPRINT);
        suspend(hostManager, onHost);

        try (DockerSandboxDriver hostDriver = driver("h", false); DockerSandboxDriver volumeDriver = driver("v", true)) {
            ByteArrayOutputStream fromHost = new ByteArrayOutputStream();
            hostDriver.exportWorkspace(h.info().workspace(), spec(), fromHost);
            String ws = volumeDriver.createWorkspace("imported-" + UUID.randomUUID().toString().substring(0, 8), spec());
            try {
                volumeDriver.importWorkspace(ws, spec(), new ByteArrayInputStream(fromHost.toByteArray()));
                ByteArrayOutputStream fromVolume = new ByteArrayOutputStream();
                volumeDriver.exportWorkspace(ws, spec(), fromVolume);
                String back = hostDriver.createWorkspace("back-" + UUID.randomUUID().toString().substring(0, 8), spec());
                try {
                    hostDriver.importWorkspace(back, spec(), new ByteArrayInputStream(fromVolume.toByteArray()));
                    // Same names, types, modes, links and contents through volume and back.
                    assertThat(listing(hostDriver, back)).isEqualTo(listing(hostDriver, h.info().workspace()));
                } finally {
                    hostDriver.deleteWorkspace(back);
                }
                // And inside a volume session: seed a session's volume with the archive, compare from inside.
                String session = "vsess-" + UUID.randomUUID().toString().substring(0, 8);
                Sandbox v = volumeManager.acquire(session, spec());
                volumeDriver.importWorkspace(v.info().workspace(), spec(), new ByteArrayInputStream(fromHost.toByteArray()));
                assertThat(run(v, ArchiveOnDockerTest.FINGERPRINT)).isEqualTo(fingerprint);
                volumeManager.destroy(session);
            } finally {
                volumeDriver.deleteWorkspace(ws);
            }
        }
        hostManager.destroy(onHost);
    }

    /** Everything the files API reports of a workdir, recursively. */
    private static List<String> listing(DockerSandboxDriver driver, String ws) {
        List<String> out = new ArrayList<>();
        walk(driver.files(ws, spec(), dev.sandboxkit.FileLimits.DEFAULT), "", out);
        return out;
    }

    private static void walk(dev.sandboxkit.SandboxFiles files, String dir, List<String> out) {
        for (dev.sandboxkit.FileInfo f : files.list(dir)) {
            out.add(f.path() + " " + f.type() + " " + Integer.toOctalString(f.permissions()) + " " + f.linkTarget()
                    + (f.type() == dev.sandboxkit.FileType.FILE ? " " + FilesTestSupport.sha256(files.readBytes(f.path()))
                    : ""));
            if (f.type() == dev.sandboxkit.FileType.DIRECTORY) {
                walk(files, f.path(), out);
            }
        }
    }

    private DockerSandboxDriver driver(String name, boolean volumes) {
        Map<String, String> p = new HashMap<>();
        if (volumes) {
            p.put(DockerSettings.WORKDIRS_KEY, "volume");
        }
        return new DockerSandboxDriver(new DriverContext("vtest-" + UUID.randomUUID().toString().substring(0, 8),
                tmp.resolve("root-" + name), Clock.systemUTC(), p));
    }

    @Test
    @DisplayName("snapshots are volumes: restore, fork, a kept snapshot seeding a new session, all removed at the end")
    void snapshotsAreVolumes() throws Exception {
        SandboxManager m = manager("v", true, SessionStore.inMemory());
        String golden = "gold-" + UUID.randomUUID().toString().substring(0, 8);
        Sandbox g = m.acquire(golden, spec());
        run(g, "echo golden > /workspace/seed.txt && ln -s seed.txt /workspace/link");
        SnapshotId id = m.snapshot(golden);
        List<InspectVolumeResponse> snaps = volumes(Map.of(SandboxLabels.SNAPSHOT, id.toString()));
        assertThat(snaps).hasSize(1);
        m.keepSnapshot(id, true);
        run(g, "echo changed > /workspace/seed.txt");
        m.restore(golden, id);
        assertThat(run(g, "cat /workspace/seed.txt && readlink /workspace/link")).isEqualTo("golden\nseed.txt\n");
        m.destroy(golden);
        assertThat(volumes(Map.of(SandboxLabels.SESSION, golden, VolumeWorkdirs.ROLE, "workdir")))
                .as("the golden workdir's volume").isEmpty();

        String child = "child-" + UUID.randomUUID().toString().substring(0, 8);
        Sandbox c = m.acquire(child, FilesTestSupport.spec().template(WorkspaceTemplate.snapshot(id)).build());
        assertThat(run(c, "cat /workspace/seed.txt")).isEqualTo("golden\n");
        m.destroy(child);
        m.deleteSnapshot(id);
        assertThat(volumes(Map.of(SandboxLabels.SNAPSHOT, id.toString()))).isEmpty();
        assertThat(volumes(Map.of(VolumeWorkdirs.ROLE, "helper"))).isEmpty();
        assertThat(docker.listContainersCmd().withShowAll(true).withLabelFilter(Map.of(SandboxLabels.OWNER,
                m.instanceId())).exec()).as("no helper left after the sessions and snapshot went").isEmpty();
    }

    @Test
    @DisplayName("listing snapshots reads only the matching ones: no helper on another fleet's snapshot volume")
    void listingReadsOnlyMatchingSnapshots() {
        SandboxManager mine = manager("mine", true, SessionStore.inMemory());
        SandboxManager theirs = SandboxManager.builder().driver("docker").workspaceRoot(tmp.resolve("root-theirs"))
                .fleet("theirs-" + UUID.randomUUID().toString().substring(0, 8)).clock(clock).idleTimeout(TTL)
                .driverProperty("docker.workdirs", "volume").build();
        managers.add(theirs);
        String session = "s-" + UUID.randomUUID().toString().substring(0, 8);
        run(mine.acquire(session, spec()), "echo mine > /workspace/f");
        SnapshotId own = mine.snapshot(session);
        String foreign = "f-" + UUID.randomUUID().toString().substring(0, 8);
        run(theirs.acquire(foreign, spec()), "echo theirs > /workspace/f");
        SnapshotId theirSnapshot = theirs.snapshot(foreign);
        String theirVolume = volumes(Map.of(SandboxLabels.SNAPSHOT, theirSnapshot.toString())).get(0).getName();

        assertThat(mine.snapshots(session)).extracting(s -> s.id()).containsExactly(own);
        mine.keepSnapshot(own, true);

        assertThat(docker.listContainersCmd().withShowAll(true).withLabelFilter(Map.of(VolumeWorkdirs.VOLUME,
                theirVolume, SandboxLabels.OWNER, mine.instanceId())).exec())
                .as("helpers this manager made on the other fleet's snapshot volume").isEmpty();
        theirs.destroy(foreign);
        mine.destroy(session);
        mine.deleteSnapshot(own);
        assertThat(volumes(Map.of(SandboxLabels.SNAPSHOT, theirSnapshot.toString())))
                .as("the other fleet's unkept snapshot goes with its session").isEmpty();
    }

    @Test
    @DisplayName("the orphan sweep removes workdir volumes no record refers to (own, dead owner) and unkept snapshots "
            + "of gone sessions, once past the grace; live, suspended, unknown owners' and kept ones stay")
    void orphanWorkdirsAndSnapshotsSwept() throws Exception {
        clock.set(Instant.now()); // volumes carry the engine's real creation time
        String rnd = UUID.randomUUID().toString().substring(0, 8);
        SessionStore store = SessionStore.inMemory();
        SandboxManager m = manager("sweep", true, store);
        String live = "live-" + rnd;
        run(m.acquire(live, spec()), "echo keep > /workspace/k.txt");
        String suspended = "susp-" + rnd;
        m.acquire(suspended, spec());
        suspend(m, suspended);
        // A session of a manager that closed (its owner id unknown to the store afterwards), whose record is lost.
        SandboxManager gone = manager("gone", true, store);
        String other = "other-" + rnd;
        gone.acquire(other, spec());
        SnapshotId unkept = gone.snapshot(other);
        SnapshotId kept = gone.snapshot(other);
        gone.keepSnapshot(kept, true);
        String goneId = gone.instanceId();
        gone.close();
        store.delete(other, store.find(other).orElseThrow().version());
        // As if it had crashed: its presence record stays behind, with a lease that has run out.
        expiredPresence(store, goneId);
        // Workdirs whose record never got written: this manager's, a dead manager's, an unknown one's.
        String dead = "m-dead" + rnd;
        expiredPresence(store, dead);
        // Another application's on the same engine (its own store): an unknown owner here, never touched.
        SandboxManager elsewhere = manager("elsewhere", true, SessionStore.inMemory());
        String foreign = "foreign-" + rnd;
        elsewhere.acquire(foreign, spec());
        SnapshotId foreignSnap = elsewhere.snapshot(foreign);
        String ownOrphan = orphanVolume("ghost-own-" + rnd, m.instanceId());
        String deadOrphan = orphanVolume("ghost-dead-" + rnd, dead);
        String unknownOrphan = orphanVolume("ghost-unknown-" + rnd, "m-unknown" + rnd);
        // A dead manager's warm-pool slot, adopted by a session: labelled with the slot id, named by the record.
        String adopted = orphanVolume("_pool.f." + rnd + "." + dead, dead);
        store.insert(dev.sandboxkit.spi.SessionRecord.builder().sessionId("adopter-" + rnd).driver("docker")
                .state(SessionState.SUSPENDED).sandboxId(null).workspace(VolumeWorkdirs.PREFIX + adopted).spec("-")
                .specFingerprint("-").ephemeral(false).createdAt(clock.instant()).lastActivity(clock.instant())
                .sandboxStartedAt(null).owner(null).leaseExpiry(null).version(1).attributes(Map.of()).build());
        String liveVolume = volumeName(m.acquire(live, spec()));
        try {
            m.reconcile();
            assertThat(volumeExists(ownOrphan)).as("an orphan younger than the grace stays").isTrue();
            assertThat(volumes(Map.of(SandboxLabels.SNAPSHOT, unkept.toString()))).as("young snapshot").hasSize(1);

            clock.advance(Duration.ofMinutes(11));
            m.keepAlive(live);
            m.reconcile();
            assertThat(volumeExists(ownOrphan)).as("this manager's orphan").isFalse();
            assertThat(volumeExists(deadOrphan)).as("a dead manager's orphan").isFalse();
            assertThat(volumeExists(unknownOrphan)).as("an unknown owner's workdir is never guessed at").isTrue();
            assertThat(volumeExists(adopted)).as("a pool slot's workdir that a session record names").isTrue();
            assertThat(volumeExists(liveVolume)).as("the live session's workdir").isTrue();
            assertThat(volumes(Map.of(SandboxLabels.SESSION, suspended, VolumeWorkdirs.ROLE, "workdir")))
                    .as("the suspended session's workdir").hasSize(1);
            assertThat(volumes(Map.of(SandboxLabels.SESSION, other, VolumeWorkdirs.ROLE, "workdir")))
                    .as("the crashed manager's workdir that lost its record").isEmpty();
            assertThat(volumes(Map.of(SandboxLabels.SNAPSHOT, unkept.toString()))).as("unkept snapshot of a gone "
                    + "session").isEmpty();
            assertThat(volumes(Map.of(SandboxLabels.SNAPSHOT, foreignSnap.toString())))
                    .as("another application's snapshot (its session unknown to this store)").hasSize(1);
            assertThat(volumes(Map.of(SandboxLabels.SESSION, foreign, VolumeWorkdirs.ROLE, "workdir")))
                    .as("another application's workdir").hasSize(1);
            assertThat(volumes(Map.of(SandboxLabels.SNAPSHOT, kept.toString()))).as("kept snapshot").hasSize(1);
            assertThat(run(m.acquire(live, spec()), "cat /workspace/k.txt")).isEqualTo("keep\n");
            assertThat(run(m.acquire(suspended, spec()), "echo ok")).isEqualTo("ok\n");
        } finally {
            for (InspectVolumeResponse v : volumes(Map.of(SandboxLabels.OWNER, goneId))) {
                docker.removeVolumeCmd(v.getName()).exec();
            }
            for (String v : List.of(ownOrphan, deadOrphan, unknownOrphan, adopted)) {
                if (volumeExists(v)) {
                    docker.removeVolumeCmd(v).exec();
                }
            }
            m.deleteSnapshot(kept);
            elsewhere.deleteSnapshot(foreignSnap);
            elsewhere.destroy(foreign);
            m.destroy(live);
            m.destroy(suspended);
            managers.remove(gone);
        }
    }

    /** A manager's presence record whose lease ran out: a manager that crashed. */
    private void expiredPresence(SessionStore store, String owner) {
        store.find("_manager." + owner).ifPresent(r -> store.delete(r.sessionId(), r.version()));
        store.insert(dev.sandboxkit.spi.SessionRecord.builder().sessionId("_manager." + owner).driver("docker")
                .state(SessionState.SUSPENDED).sandboxId(null).workspace("-").spec("-").specFingerprint("-")
                .ephemeral(false).createdAt(clock.instant()).lastActivity(clock.instant()).sandboxStartedAt(null)
                .owner(owner).leaseExpiry(clock.instant().minusSeconds(60)).version(1).attributes(Map.of()).build());
    }

    /** A workdir volume as the backend labels one, with no session record. */
    private String orphanVolume(String session, String owner) {
        String name = "sbk-" + session.replace('_', 'x');
        docker.createVolumeCmd().withName(name).withLabels(Map.of(SandboxLabels.MANAGED, "true",
                SandboxLabels.SESSION, session, SandboxLabels.OWNER, owner, VolumeWorkdirs.ROLE, "workdir",
                "dev.sandboxkit.docker.image", spec().image())).exec();
        return name;
    }

    private boolean volumeExists(String name) {
        try {
            docker.inspectVolumeCmd(name).exec();
            return true;
        } catch (NotFoundException e) {
            return false;
        }
    }

    @Test
    @DisplayName("the driver reports the volume backend's capabilities: no HOST_WORKSPACE")
    void capabilities() {
        try (DockerSandboxDriver v = driver("v", true); DockerSandboxDriver h = driver("h", false)) {
            assertThat(v.workspaceCapabilities()).doesNotContain(WorkspaceCapability.HOST_WORKSPACE).contains(
                    WorkspaceCapability.FILES, WorkspaceCapability.SNAPSHOTS, WorkspaceCapability.WORKSPACE_ARCHIVE,
                    WorkspaceCapability.DIRECTORY_TEMPLATES);
            assertThat(h.workspaceCapabilities()).contains(WorkspaceCapability.HOST_WORKSPACE);
        }
    }

    @Test
    @DisplayName("with docker.workdirs=volume a remote engine is accepted; an unknown mode is a configuration error")
    void remoteEngineAcceptedWithVolumes() throws Exception {
        Path certs = dev.sandboxkit.docker.internal.engine.Certificates.write(Files.createDirectories(tmp.resolve("certs")));
        // TEST-NET-1: never this host, never contacted (creating the driver does not connect).
        Map<String, String> remote = new HashMap<>(Map.of("docker.host", "tcp://192.0.2.10:2376", "docker.tlsVerify",
                "true", "docker.certPath", certs.toString()));
        remote.put(DockerSettings.WORKDIRS_KEY, "volume");
        new DockerDriverProvider().create(new DriverContext("remote", tmp.resolve("ws"), Clock.systemUTC(), remote))
                .close();
        remote.put(DockerSettings.WORKDIRS_KEY, "nfs");
        assertThatThrownBy(() -> new DockerDriverProvider().create(new DriverContext("remote", tmp.resolve("ws"),
                Clock.systemUTC(), remote))).isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("docker.workdirs");
    }
}
