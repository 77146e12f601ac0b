package dev.sandboxkit.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.InspectVolumeResponse;
import com.github.dockerjava.api.model.ChangeLog;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Event;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.docker.internal.files.FilesTestSupport;
import dev.sandboxkit.docker.internal.workdir.VolumeWorkdirs;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.testkit.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A volume session resumed under another user on the real engine: the previous owner's entries are re-owned
 * (links, FIFOs, devices as themselves, never followed; mode-000 directories too), other owners' are not, the
 * new user works everywhere the old one did; an unchanged user costs no one-off container; an image that cannot
 * re-own fails the start typed and leaves the workdir as it was.
 */
@Tag("volume")
@DisplayName("Volume workdirs re-owned on a user change (real Docker engine)")
class VolumeReownOnDockerTest {
    private static final Duration TTL = Duration.ofMinutes(1);
    /** Entries the sandbox users make; each is the current user's. */
    private static final List<String> OWN = List.of(".", "rootfile", "dev", "other-dir/mine", "a", "a/b", "a/b/f",
            "hard", "to-passwd", "to-other", "dangling", "fifo", "locked", "locked/in", "locked/in/s", "-h", "from-host",
            "from-host/h.txt");

    @TempDir
    Path tmp;
    private final ManualClock clock = new ManualClock();
    private final List<String> images = new ArrayList<>();
    private final List<String> sessions = new ArrayList<>();
    private DockerClient docker;
    private SandboxManager manager;

    @BeforeEach
    void start() {
        docker = ManagerOnDockerTest.EngineCheck.requireEngine();
        manager = SandboxManager.builder().driver("docker").workspaceRoot(tmp.resolve("root")).clock(clock)
                .idleTimeout(TTL).reaperInterval(Duration.ofMillis(50)).reconcileInterval(Duration.ofMinutes(30))
                .driverProperty("docker.workdirs", "volume").build();
    }

    @AfterEach
    void stop() throws Exception {
        try {
            for (String id : sessions) {
                manager.destroy(id);
            }
            manager.close();
            List<Container> left = docker.listContainersCmd().withShowAll(true)
                    .withLabelFilter(Map.of(SandboxLabels.OWNER, manager.instanceId())).exec();
            left.forEach(c -> docker.removeContainerCmd(c.getId()).withForce(true).exec());
            List<InspectVolumeResponse> volumes = docker.listVolumesCmd()
                    .withFilter("label", List.of(SandboxLabels.OWNER + "=" + manager.instanceId())).exec().getVolumes();
            if (volumes != null) {
                volumes.forEach(v -> docker.removeVolumeCmd(v.getName()).exec());
            }
            images.forEach(i -> docker.removeImageCmd(i).withForce(true).exec());
            assertThat(left).as("containers left").isEmpty();
            assertThat(volumes == null ? List.of() : volumes).as("volumes left").isEmpty();
        } finally {
            docker.close();
        }
    }

    private static SandboxSpec.Builder spec(String user) {
        return FilesTestSupport.spec().user(user);
    }

    private static String run(Sandbox sandbox, String script) {
        ExecResult r = sandbox.exec(ExecRequest.shell(script).withTimeout(Duration.ofMinutes(2)));
        assertThat(r.exitCode()).as("`%s` failed: %s%s", script, r.stdout(), r.stderr()).isZero();
        return r.stdout();
    }

    /** {@code uid:gid} of each path below /workspace, links not followed (busybox stat). */
    private static Map<String, String> owners(Sandbox sandbox, List<String> paths) {
        StringBuilder script = new StringBuilder("cd /workspace");
        for (String p : paths) {
            script.append(" && stat -c %u:%g -- '").append(p).append("'");
        }
        String[] lines = run(sandbox, script.toString()).split("\n");
        assertThat(lines).hasSize(paths.size());
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = 0; i < lines.length; i++) {
            out.put(paths.get(i), lines[i]);
        }
        return out;
    }

    private static Map<String, String> all(List<String> paths, String owner) {
        Map<String, String> out = new LinkedHashMap<>();
        paths.forEach(p -> out.put(p, owner));
        return out;
    }

    /** The one-off containers created on {@code volume} since {@code since} (they are removed once done). */
    private List<String> oneOffsSince(String volume, Instant since) throws InterruptedException {
        List<String> ids = new ArrayList<>();
        docker.eventsCmd().withSince(since.getEpochSecond() + "." + String.format("%09d", since.getNano()))
                .withUntil(Long.toString(Instant.now().getEpochSecond() + 1))
                .withEventFilter("create").withLabelFilter(Map.of(VolumeWorkdirs.VOLUME, volume,
                        VolumeWorkdirs.ROLE, VolumeWorkdirs.RUN))
                .exec(new com.github.dockerjava.api.async.ResultCallback.Adapter<Event>() {
                    @Override
                    public void onNext(Event e) {
                        ids.add(e.getId());
                    }
                }).awaitCompletion(30, TimeUnit.SECONDS);
        return ids;
    }

    /** Remembered for destroy after the test: sessions outlive the manager, their volumes too. */
    private Sandbox sessions(Sandbox sandbox) {
        sessions.add(sandbox.info().sessionId());
        return sandbox;
    }

    private static String volumeOf(Sandbox sandbox) {
        String ws = sandbox.info().workspace();
        assertThat(ws).startsWith(VolumeWorkdirs.PREFIX);
        return ws.substring(VolumeWorkdirs.PREFIX.length());
    }

    @Test
    @DisplayName("1000 -> 2000: the previous owner's entries (links, FIFO, device, mode-000 dir, hard link, odd names) "
            + "re-owned as themselves, other owners' untouched, nothing followed; and back")
    void aUserChangeReownsTheVolumeTree() throws Exception {
        Path hostPasswd = Path.of("/etc/passwd");
        byte[] passwdBefore = Files.readAllBytes(hostPasswd);
        Object passwdOwner = Files.getAttribute(hostPasswd, "unix:uid") + ":" + Files.getAttribute(hostPasswd, "unix:gid");
        String session = "reown-" + UUID.randomUUID().toString().substring(0, 8);

        // Root plants entries of another owner, mixed owners, a device, and one root-owned file.
        Sandbox asRoot = sessions(manager.acquire(session, spec("0:0").addCapability("CHOWN").addCapability("MKNOD")
                .build()));
        String volume = volumeOf(asRoot);
        run(asRoot, "cd /workspace && echo o > other && ln other other-hard && mkdir other-dir && touch other-dir/mine"
                + " && touch mixu mixg rootfile && mknod dev c 1 3 && chown 3000:3000 other other-dir"
                + " && chown 1000:1000 other-dir/mine dev && chown 1000:3000 mixu && chown 3000:1000 mixg");

        Sandbox first = manager.acquire(session, spec("1000:1000").build());
        assertThat(run(first, "stat -c %u:%g /workspace /workspace/rootfile")).as("root's entries re-owned 0 -> 1000")
                .isEqualTo("1000:1000\n1000:1000\n");
        run(first, "cd /workspace && mkdir -p a/b locked/in && echo x > a/b/f && ln a/b/f hard && echo s > locked/in/s"
                + " && ln -s /etc/passwd to-passwd && ln -s /workspace/other to-other && ln -s /nowhere dangling"
                + " && mkfifo fifo && touch -- -h \"$(printf 'nl\\nname')\" && chmod 000 locked");
        first.files().write("from-host/h.txt", "h".getBytes(StandardCharsets.UTF_8));

        Instant beforeSwitch = Instant.now();
        Sandbox second = manager.acquire(session, spec("2000:2000").build());

        assertThat(run(second, "id -u; id -g")).isEqualTo("2000\n2000\n");
        // The mode-000 directory is the new user's: it can open it (and then see inside).
        run(second, "chmod 700 /workspace/locked");
        Map<String, String> expected = all(OWN, "2000:2000");
        expected.put("other", "3000:3000");
        expected.put("other-hard", "3000:3000");
        expected.put("other-dir", "3000:3000");
        expected.put("mixu", "2000:3000");
        expected.put("mixg", "3000:2000");
        assertThat(owners(second, new ArrayList<>(expected.keySet()))).isEqualTo(expected);
        assertThat(run(second, "stat -c %u:%g \"/workspace/$(printf 'nl\\nname')\"")).isEqualTo("2000:2000\n");
        assertThat(run(second, "cd /workspace && readlink to-passwd && readlink to-other && readlink dangling"
                + " && stat -c %F fifo dev"))
                .as("links and special files are themselves").isEqualTo("/etc/passwd\n/workspace/other\n/nowhere\n"
                        + "fifo\ncharacter special file\n");
        // The new user writes wherever the old one could.
        run(second, "cd /workspace && echo n > new && echo n > a/b/new && echo n > a/b/f && echo n > locked/in/new"
                + " && echo n >> locked/in/s && echo n > other-dir/mine && rm hard && mkdir a/c && echo n > from-host/h.txt");
        second.files().write("a/b/api.txt", "api".getBytes(StandardCharsets.UTF_8));
        assertThat(run(second, "stat -c %u:%g /workspace/a/b/api.txt")).isEqualTo("2000:2000\n");
        assertThat(oneOffsSince(volume, beforeSwitch)).as("one one-off container re-owned the tree").hasSize(1);

        // Nothing outside the volume changed: the host's /etc/passwd, and the helper's own root filesystem.
        assertThat(Files.readAllBytes(hostPasswd)).isEqualTo(passwdBefore);
        assertThat(Files.getAttribute(hostPasswd, "unix:uid") + ":" + Files.getAttribute(hostPasswd, "unix:gid"))
                .isEqualTo(passwdOwner);
        List<Container> helpers = docker.listContainersCmd().withShowAll(true)
                .withLabelFilter(Map.of(VolumeWorkdirs.VOLUME, volume, VolumeWorkdirs.ROLE, "helper")).exec();
        assertThat(helpers).hasSize(1);
        List<ChangeLog> diff = docker.containerDiffCmd(helpers.get(0).getId()).exec();
        assertThat(diff == null ? List.<String>of() : diff.stream().map(ChangeLog::getPath)
                .filter(p -> !p.equals("/workspace")).toList()).as("the helper's root filesystem").isEmpty();

        // And back: 2000 is now the previous owner.
        Sandbox third = manager.acquire(session, spec("1000:1000").build());
        Map<String, String> back = owners(third, List.of(".", "a/b/f", "a/b/api.txt", "locked/in/new", "other",
                "mixu", "mixg", "to-other"));
        assertThat(back).isEqualTo(Map.of(".", "1000:1000", "a/b/f", "1000:1000",
                "a/b/api.txt", "1000:1000", "locked/in/new", "1000:1000", "other", "3000:3000", "mixu", "1000:3000",
                "mixg", "3000:1000", "to-other", "1000:1000"));
        assertThat(run(third, "cat /workspace/other /workspace/locked/in/s")).isEqualTo("o\ns\nn\n");
    }

    @Test
    @DisplayName("an unchanged user on resume: no one-off container, the workdir as it was")
    void anUnchangedUserRunsNothing() throws Exception {
        String session = "same-" + UUID.randomUUID().toString().substring(0, 8);
        Sandbox s = sessions(manager.acquire(session, spec("1000:1000").build()));
        String volume = volumeOf(s);
        run(s, "cd /workspace && mkdir d && echo x > d/f");
        Instant before = Instant.now();
        ArchiveOnDockerTest.suspend(clock, TTL, manager, session);

        Sandbox again = manager.acquire(session, spec("1000:1000").build());

        assertThat(run(again, "stat -c %u:%g /workspace /workspace/d/f; cat /workspace/d/f"))
                .isEqualTo("1000:1000\n1000:1000\nx\n");
        assertThat(oneOffsSince(volume, before)).isEmpty();
    }

    /** An argv exec (the image may have no shell). */
    private static String exec(Sandbox sandbox, String... argv) {
        ExecResult r = sandbox.exec(ExecRequest.of(argv).withTimeout(Duration.ofMinutes(2)));
        assertThat(r.exitCode()).as("`%s` failed: %s%s", String.join(" ", argv), r.stdout(), r.stderr()).isZero();
        return r.stdout();
    }

    @Test
    @DisplayName("an image without sh (busybox's sh runs find and chown itself): the start under the new user fails "
            + "typed; the old user still resumes")
    void anImageThatCannotReownFailsTyped() throws Exception {
        Path context = Files.createDirectories(tmp.resolve("nosh"));
        Files.writeString(context.resolve("Dockerfile"), "FROM " + FilesTestSupport.spec().build().image()
                + "\nRUN [\"/bin/busybox\", \"rm\", \"/bin/sh\"]\n");
        String image = "sandboxkit-test-nosh:" + UUID.randomUUID().toString().substring(0, 8);
        DockerTestSupport.docker(context, "build", "-q", "-t", image, ".");
        images.add(image);
        String session = "nosh-" + UUID.randomUUID().toString().substring(0, 8);
        Sandbox s = sessions(manager.acquire(session, spec("1000:1000").image(image).build()));
        s.files().write("f", "x".getBytes(StandardCharsets.UTF_8));

        assertThatThrownBy(() -> manager.acquire(session, spec("2000:2000").image(image).build()))
                .isInstanceOf(SandboxException.class)
                .hasMessageContaining("cannot give workdir volume:").hasMessageContaining("to the sandbox user 2000:2000")
                .hasMessageContaining("cannot run sh").hasMessageContaining("re-owning runs sh, find, chown and chgrp");

        Sandbox back = manager.acquire(session, spec("1000:1000").image(image).build());
        assertThat(exec(back, "stat", "-c", "%u:%g", "/workspace", "/workspace/f")).isEqualTo("1000:1000\n1000:1000\n");
    }
}
