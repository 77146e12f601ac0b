package dev.sandboxkit.docker;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxManager;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The Docker driver's settings through the manager's own door, {@code SandboxManager.builder().driverProperty(..)}:
 * one syntax for durations, every value checked, and an unknown {@code docker.*} key refused with the nearest one.
 */
class DockerSettingsOnManagerTest {
    @TempDir
    Path root;

    @BeforeEach
    void engine() {
        DockerTestSupport.requireEngine();
    }

    private SandboxManager.Builder docker() {
        return SandboxManager.builder().driver("docker").workspaceRoot(root);
    }

    /** Builds the manager (which creates the driver) and closes it again. */
    private static void build(SandboxManager.Builder builder) {
        builder.build().close();
    }

    @Test
    @DisplayName("a mistyped docker.* key fails the build, named as it was set, with the key meant")
    void unknownKeyIsRefused() {
        assertThatThrownBy(() -> build(docker().driverProperty("docker.pullTimout", "1m")))
                .isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("driverProperty(\"docker.pullTimout\"): no such setting")
                .hasMessageContaining("did you mean driverProperty(\"docker.pullTimeout\")?");
    }

    @Test
    @DisplayName("docker.defaultUser set through driverProperty is the user the sandbox runs as")
    void aSettingTakesEffect() {
        try (SandboxManager m = docker().driverProperty("docker.defaultUser", " 2345:2346 ").build()) {
            assertThat(idOf(m)).isEqualTo(expectedIds("2345 2346"));
        }
    }

    @Test
    @DisplayName("a bare uid (docker.defaultUser or the spec's user) runs with the same gid, never group 0 (root)")
    void aBareUidIsNotRootsGroup() {
        try (SandboxManager m = docker().driverProperty("docker.defaultUser", "2349").build()) {
            assertThat(idOf(m)).isEqualTo(expectedIds("2349 2349"));
            // The spec's bare uid too (a spec's user applies whoever the JVM runs as).
            try (Sandbox s = m.acquire("settings-" + DockerTestSupport.newInstanceId(),
                    DockerTestSupport.spec().user("2350").build())) {
                assertThat(s.exec(ExecRequest.of("sh", "-c", "echo $(id -u) $(id -g)")).stdout().trim())
                        .isEqualTo("2350 2350");
            }
        }
    }

    @Test
    @DisplayName("the same setting as -Dsandboxkit.docker.defaultUser, and a mistyped system property is refused")
    void systemPropertiesAreTheSameSettings() {
        System.setProperty("sandboxkit.docker.defaultUser", "2347:2348");
        try (SandboxManager m = docker().build()) {
            assertThat(idOf(m)).isEqualTo(expectedIds("2347 2348"));
        } finally {
            System.clearProperty("sandboxkit.docker.defaultUser");
        }
        System.setProperty("sandboxkit.docker.defaultUsr", "2347");
        try {
            assertThatThrownBy(() -> build(docker())).isInstanceOf(SandboxConfigurationException.class)
                    .hasMessage("-Dsandboxkit.docker.defaultUsr: no such setting; did you mean "
                            + "-Dsandboxkit.docker.defaultUser?");
        } finally {
            System.clearProperty("sandboxkit.docker.defaultUsr");
        }
    }

    /** uid and gid of a new sandbox of the manager whose spec names no user. */
    private static String idOf(SandboxManager m) {
        try (Sandbox s = m.acquire("settings-" + DockerTestSupport.newInstanceId(), DockerTestSupport.spec().build())) {
            return s.exec(ExecRequest.of("sh", "-c", "echo $(id -u) $(id -g)")).stdout().trim();
        }
    }

    /** docker.defaultUser applies to a root JVM; any other runs its sandboxes as itself. */
    private static String expectedIds(String configured) {
        try {
            int uid = (Integer) java.nio.file.Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            int gid = (Integer) java.nio.file.Files.getAttribute(Path.of("/proc/self"), "unix:gid");
            return uid == 0 ? configured : uid + " " + gid;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    @DisplayName("docker durations take the one syntax (1h30m, 30s), and the manager runs with them")
    void durationsInTheOneSyntax() {
        try (SandboxManager m = docker().driverProperty("docker.pullTimeout", "1h30m")
                .driverProperty("docker.channelIdleTimeout", "30s").build()) {
            try (Sandbox s = m.acquire("settings-" + DockerTestSupport.newInstanceId(),
                    DockerTestSupport.spec().build())) {
                assertThat(s.exec(ExecRequest.of("echo", "ok")).stdout()).isEqualTo("ok\n");
            }
        }
    }

    @Test
    @DisplayName("a boolean setting that is neither true nor false is an error naming the key, not a silent true")
    void booleansAreChecked() {
        assertThatThrownBy(() -> build(docker().driverProperty("docker.channelSetsid", "no")))
                .isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("driverProperty(\"docker.channelSetsid\"): expected true or false, got 'no'");
    }
}
