package dev.sandboxkit.docker;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.ShellSession;
import dev.sandboxkit.ShellSessionEndedException;
import dev.sandboxkit.docker.internal.channel.ChannelProbe;
import dev.sandboxkit.docker.internal.channel.ExecChannels;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static dev.sandboxkit.docker.DockerTestSupport.context;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Shell sessions on the real engine, for what the conformance kit (which runs them on a manual clock) does not
 * cover: which exec path their commands take, and the idle TTL in real time.
 */
@Tag("slow")
@DisplayName("Shell sessions on the real Docker engine")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ShellSessionDockerTest {
    private static final SandboxSpec SPEC = DockerTestSupport.spec().build();

    @TempDir
    Path root;
    private DockerSandboxDriver driver;
    private SandboxManager manager;

    @BeforeEach
    void start() {
        DockerTestSupport.requireEngine();
        driver = (DockerSandboxDriver) new DockerDriverProvider().create(context(DockerTestSupport.newInstanceId(),
                root));
        manager = SandboxManager.builder().driver(driver).workspaceRoot(root)
                .idleTimeout(Duration.ofSeconds(2)).reaperInterval(Duration.ofMillis(200)).build();
    }

    @AfterEach
    void stop() {
        manager.close();
        driver.close();
    }

    @Test
    @DisplayName("commands run on the command channel by default and as plain execs with ExecMode.PLAIN")
    void execPath() {
        ExecChannels channels = driver.channels();
        try (ShellSession shell = manager.acquire("sh-channel", SPEC).shell()) {
            long plainBefore = ChannelProbe.plainExecs(channels);
            long channelBefore = ChannelProbe.channelExecs(channels);
            shell.exec("cd /tmp && export P=1");
            assertThat(shell.exec("pwd; echo $P").stdout()).isEqualTo("/tmp\n1\n");
            assertThat(ChannelProbe.channelExecs(channels) - channelBefore).isEqualTo(2);
            assertThat(ChannelProbe.plainExecs(channels)).isEqualTo(plainBefore);
        }
        SandboxSpec plain = SPEC.toBuilder().execMode(ExecMode.PLAIN).build();
        try (ShellSession shell = manager.acquire("sh-plain", plain).shell()) {
            long channelBefore = ChannelProbe.channelExecs(channels);
            shell.exec("cd /tmp && export P=1");
            assertThat(shell.exec("pwd; echo $P").stdout()).isEqualTo("/tmp\n1\n");
            assertThat(ChannelProbe.channelExecs(channels)).isEqualTo(channelBefore);
        }
    }

    @Test
    @DisplayName("real time: a running command is activity, the sandbox is reaped once the session idles")
    void runningCommandIsActivityAndReapEndsTheSession() throws Exception {
        Sandbox sandbox = manager.acquire("sh-reap", SPEC);
        String first = sandbox.info().sandboxId();
        ShellSession shell = sandbox.shell();
        shell.exec("cd /tmp");

        ExecResult longer = shell.exec("sleep 3; pwd"); // longer than the 2 s idle TTL

        assertThat(longer.stdout()).isEqualTo("/tmp\n");
        assertThat(sandbox.info().sandboxId()).isEqualTo(first);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (sandbox.info().state() != SessionState.SUSPENDED && System.nanoTime() < until) {
            Thread.sleep(100);
        }
        assertThat(sandbox.info().state()).as("reaped once idle").isEqualTo(SessionState.SUSPENDED);
        assertThat(shell.isOpen()).isFalse();
        assertThatThrownBy(() -> shell.exec("pwd")).isInstanceOf(ShellSessionEndedException.class)
                .hasMessageContaining("Sandbox.shell()");
        try (ShellSession fresh = sandbox.shell()) {
            assertThat(fresh.exec("pwd").stdout()).as("a new session, state lost").isEqualTo("/workspace\n");
        }
        assertThat(sandbox.info().sandboxId()).isNotEqualTo(first);
        shell.close();
    }
}
