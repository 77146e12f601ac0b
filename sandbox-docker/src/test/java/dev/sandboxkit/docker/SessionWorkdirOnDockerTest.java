package dev.sandboxkit.docker;

import com.github.dockerjava.api.DockerClient;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.docker.internal.files.FilesTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A session's workdir through the public API on the real engine (issue 13 D, F, G): destroy and an
 * ephemeral release leave nothing behind even past PATH_MAX, uids at the engine's limit work end to end
 * and larger ones fail typed, and a session whose user changes keeps a usable workdir (re-owned).
 */
@Tag("slow")
@DisplayName("Session workdirs on the real Docker engine")
class SessionWorkdirOnDockerTest {
    private static final Duration TIMEOUT = Duration.ofMinutes(2);
    private static final String CHAIN14 = ("a".repeat(250) + "/").repeat(14);
    /** The recipe: 14 nested 250-character directories, and another such chain moved under them. */
    private static final String DEEP_TREE = "mkdir -p x/" + CHAIN14 + " y/" + CHAIN14 + " && echo f > y/" + CHAIN14
            + "f && mv y x/" + CHAIN14;

    @TempDir
    Path tmp;
    private Path root;
    private SandboxManager manager;
    private DockerClient docker;

    @BeforeEach
    void start() {
        docker = ManagerOnDockerTest.EngineCheck.requireEngine();
        root = tmp.resolve("ws");
        manager = SandboxManager.builder().driver("docker").workspaceRoot(root).build();
    }

    @AfterEach
    void stop() {
        DockerTestSupport.closeAndCheckNothingLeft(manager, docker);
    }

    private static SandboxSpec.Builder spec() {
        return FilesTestSupport.spec();
    }

    private static String run(Sandbox sandbox, String script) {
        ExecResult r = sandbox.exec(ExecRequest.shell(script).withTimeout(TIMEOUT));
        assertThat(r.exitCode()).as("`%s` failed: %s%s", script.length() > 200 ? script.substring(0, 200) + "..." : script,
                r.stdout(), r.stderr()).isZero();
        return r.stdout();
    }

    // ------------------------------------------------------------------ D: purge past PATH_MAX

    @Test
    @DisplayName("destroy deletes a workdir nested past PATH_MAX; a re-acquire of the id starts empty")
    void destroyPurgesADeepTree() {
        Sandbox s = manager.acquire("deep-destroy", spec().build());
        Path workdir = Path.of(s.info().workspace());
        run(s, "cd /workspace && " + DEEP_TREE + " && echo top > top.txt");

        manager.destroy("deep-destroy");

        assertThat(workdir).doesNotExist();
        Sandbox again = manager.acquire("deep-destroy", spec().build());
        assertThat(run(again, "ls -A /workspace | wc -l").trim()).isEqualTo("0");
        assertThat(again.files().list("")).isEmpty();
    }

    @Test
    @DisplayName("an ephemeral release purges a workdir nested past PATH_MAX")
    void ephemeralReleasePurgesADeepTree() {
        Sandbox s = manager.acquire("deep-ephemeral", spec().ephemeral().build());
        Path workdir = Path.of(s.info().workspace());
        run(s, "cd /workspace && " + DEEP_TREE);

        s.release();

        assertThat(workdir).doesNotExist();
        assertThat(root.toFile().list()).doesNotContain("deep-ephemeral");
    }

    // ------------------------------------------------------------------ F: uids

    @Test
    @DisplayName("uid:gid 2147483647 (the engine's highest) acquires, execs and writes through the files API")
    void theHighestUidTheEngineRuns() throws IOException {
        Sandbox s = manager.acquire("uid-max", spec().user("2147483647:2147483647").build());
        assertThat(run(s, "id -u; id -g")).isEqualTo("2147483647\n2147483647\n");
        s.files().write("dir/from-host.txt", "host".getBytes(StandardCharsets.UTF_8));
        assertThat(run(s, "cat /workspace/dir/from-host.txt && echo sb > /workspace/dir/from-sandbox.txt")).isEqualTo("host");
        assertThat(s.files().readBytes("dir/from-sandbox.txt")).asString(StandardCharsets.UTF_8).isEqualTo("sb\n");
        Path workdir = Path.of(s.info().workspace());
        for (String p : List.of("", "dir", "dir/from-host.txt", "dir/from-sandbox.txt")) {
            assertThat(Files.getAttribute(workdir.resolve(p), "unix:uid", LinkOption.NOFOLLOW_LINKS)).as(p)
                    .isEqualTo(Integer.MAX_VALUE);
        }
    }

    @Test
    @DisplayName("uid 2147483648 (valid on Linux, refused by the engine): a typed configuration error, nothing left behind")
    void aUidBeyondTheEngineFailsTyped() {
        for (String user : List.of("2147483648:2147483648", "4294967294", "1000:2147483648")) {
            SandboxSpec spec = spec().user(user).build();
            assertThatThrownBy(() -> manager.acquire("uid-big", spec)).as(user)
                    .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("0..2147483647");
        }
        assertThat(root.resolve("uid-big")).doesNotExist();
        assertThat(manager.session("uid-big")).isEmpty();
    }

    // ------------------------------------------------------------------ G: user change

    @Test
    @DisplayName("a session resumed under another user: its workdir is re-owned (links not followed), and every exec works")
    void aUserChangeReownsTheWorkdir() throws IOException {
        Path canary = Files.createDirectories(tmp.resolve("canary"));
        Path secret = Files.writeString(canary.resolve("secret.txt"), "CANARY\n");
        Files.setAttribute(canary, "unix:uid", 12345);
        Files.setAttribute(secret, "unix:uid", 12345);

        Sandbox first = manager.acquire("switch", spec().user("10001:10001").build());
        run(first, "cd /workspace && mkdir -p a/b private && echo x > a/b/f && echo s > private/secret"
                + " && chmod 700 private a && chmod 600 private/secret && mkfifo a/fifo"
                + " && ln -s " + secret + " to-secret && ln -s " + canary + " to-canary && ln -s /etc to-etc");
        first.files().write("from-host/h.txt", "h".getBytes(StandardCharsets.UTF_8));
        Path workdir = Path.of(first.info().workspace());

        Sandbox second = manager.acquire("switch", spec().user("10002:10002").build());

        assertThat(run(second, "id -u; pwd")).isEqualTo("10002\n/workspace\n");
        assertThat(run(second, "cd /workspace && cat a/b/f private/secret from-host/h.txt && echo n > private/new"
                + " && rm a/b/f && mkdir a/b/c && echo z >> private/secret && ls a")).isEqualTo("x\ns\nhb\nfifo\n");
        for (String p : List.of("", "a", "a/b", "a/fifo", "private", "private/secret", "from-host", "from-host/h.txt",
                "to-secret", "to-canary", "to-etc")) {
            assertThat(Files.getAttribute(workdir.resolve(p), "unix:uid", LinkOption.NOFOLLOW_LINKS)).as(p)
                    .isEqualTo(10002);
            assertThat(Files.getAttribute(workdir.resolve(p), "unix:gid", LinkOption.NOFOLLOW_LINKS)).as(p)
                    .isEqualTo(10002);
        }
        assertThat(Files.getAttribute(canary, "unix:uid")).as("link target outside, never followed").isEqualTo(12345);
        assertThat(Files.getAttribute(secret, "unix:uid")).isEqualTo(12345);
        assertThat(Files.getAttribute(Path.of("/etc"), "unix:uid")).isEqualTo(0);
        assertThat(secret).hasContent("CANARY");
        second.files().write("private/from-host-2.txt", "2".getBytes(StandardCharsets.UTF_8));
        assertThat(Files.getAttribute(workdir.resolve("private/from-host-2.txt"), "unix:uid")).isEqualTo(10002);

        // And back again.
        Sandbox third = manager.acquire("switch", spec().user("10001:10001").build());
        assertThat(run(third, "cat /workspace/private/new /workspace/private/from-host-2.txt")).isEqualTo("n\n2");
    }
}
