package dev.sandboxkit.docker;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.ShellSession;
import dev.sandboxkit.ShellSessionEndedException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Stateful shell sessions through the public API, on the real engine. */
@DisplayName("Shell sessions on the real Docker engine")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ShellSessionDockerTest {
    private static final SandboxSpec SPEC = DockerTestSupport.spec().build();

    @TempDir
    Path root;
    private SandboxManager manager;

    @BeforeEach
    void start() {
        DockerTestSupport.requireEngine();
        manager = SandboxManager.builder().driver("docker").workspaceRoot(root)
                .idleTimeout(Duration.ofSeconds(2)).reaperInterval(Duration.ofMillis(200)).build();
    }

    @AfterEach
    void stop() {
        manager.close();
    }

    @Test
    @DisplayName("cd and export carry over between commands; a plain exec does not see them")
    void cdAndExportPersist() {
        Sandbox sandbox = manager.acquire("sh-state", SPEC);
        try (ShellSession shell = sandbox.shell()) {
            assertThat(shell.exec("mkdir -p sub/dir && cd sub").exitCode()).isZero();
            assertThat(shell.exec("export GREETING='hello world' QUOTE=\"it's\"").exitCode()).isZero();
            shell.exec(ExecRequest.of("cd", "dir"));

            ExecResult r = shell.exec("pwd; echo \"$GREETING|$QUOTE\"");

            assertThat(r.stdout()).isEqualTo("/workspace/sub/dir\nhello world|it's\n");
            assertThat(sandbox.exec(ExecRequest.shell("pwd; echo \"${GREETING-unset}\"")).stdout())
                    .isEqualTo("/workspace\nunset\n");
            assertThat(shell.exec("unset GREETING").exitCode()).isZero();
            assertThat(shell.exec("echo \"${GREETING-unset}\"").stdout()).isEqualTo("unset\n");
        }
    }

    @Test
    @DisplayName("a command's own env is visible to it only and never saved; non-exported variables last one command")
    void perCommandEnvAndShellVariables() {
        try (ShellSession shell = manager.acquire("sh-env", SPEC).shell()) {
            ExecResult with = shell.exec(ExecRequest.shell("echo \"$TOKEN\"; export KEPT=yes; plain=1")
                    .withEnv("TOKEN", "s3cret"));
            assertThat(with.stdout()).isEqualTo("s3cret\n");

            ExecResult after = shell.exec("echo \"${TOKEN-unset} ${KEPT-unset} ${plain-unset}\"");

            assertThat(after.stdout()).isEqualTo("unset yes unset\n");
        }
    }

    @Test
    @DisplayName("the spec's env is there from the start and can be overridden by export")
    void specEnv() {
        SandboxSpec spec = SPEC.toBuilder().env("FROM_SPEC", "spec").build();
        try (ShellSession shell = manager.acquire("sh-spec", spec).shell()) {
            assertThat(shell.exec("echo $FROM_SPEC").stdout()).isEqualTo("spec\n");
            shell.exec("export FROM_SPEC=mine");
            assertThat(shell.exec("echo $FROM_SPEC").stdout()).isEqualTo("mine\n");
        }
    }

    @Test
    @DisplayName("exit ends the command, not the session; stdin, stderr and exit codes work as for exec")
    void exitCodesStreamsAndStdin() {
        try (ShellSession shell = manager.acquire("sh-exit", SPEC).shell()) {
            ExecResult exit = shell.exec("cd /tmp; echo out; echo err >&2; exit 3");
            assertThat(exit.exitCode()).isEqualTo(3);
            assertThat(exit.stdout()).isEqualTo("out\n");
            assertThat(exit.stderr()).isEqualTo("err\n");
            assertThat(shell.exec(ExecRequest.shell("pwd; cat").withStdin("in")).stdout()).isEqualTo("/tmp\nin");
            assertThat(shell.exec("echo \"x").exitCode()).as("a syntax error").isNotZero();
            assertThat(shell.exec("pwd").stdout()).isEqualTo("/tmp\n");
            assertThat(shell.isOpen()).isTrue();
        }
    }

    @Test
    @DisplayName("a timeout kills the command and keeps the state from before it")
    void timeoutKeepsEarlierState() {
        try (ShellSession shell = manager.acquire("sh-timeout", SPEC).shell()) {
            shell.exec("mkdir -p a && cd a && export V=1");

            ExecResult slow = shell.exec(ExecRequest.shell("cd /; export V=2; sleep 300")
                    .withTimeout(Duration.ofSeconds(1)));

            assertThat(slow.timedOut()).isTrue();
            assertThat(shell.exec("pwd; echo $V").stdout()).isEqualTo("/workspace/a\n1\n");
            assertThat(shell.exec("ps -o args").stdout()).doesNotContain("sleep 300");
        }
    }

    @Test
    @DisplayName("two sessions in one sandbox are independent")
    void independentSessions() {
        Sandbox sandbox = manager.acquire("sh-two", SPEC);
        try (ShellSession one = sandbox.shell(); ShellSession two = sandbox.shell()) {
            one.exec("cd /tmp && export WHO=one");
            two.exec("cd /workspace && export WHO=two");
            assertThat(one.exec("pwd; echo $WHO").stdout()).isEqualTo("/tmp\none\n");
            assertThat(two.exec("pwd; echo $WHO").stdout()).isEqualTo("/workspace\ntwo\n");
        }
    }

    @Test
    @DisplayName("close discards the state; the closed session refuses commands")
    void closeDiscardsState() {
        Sandbox sandbox = manager.acquire("sh-close", SPEC);
        ShellSession shell = sandbox.shell();
        shell.exec("cd /tmp");
        assertThat(sandbox.exec(ExecRequest.shell("ls -a /tmp /dev/shm")).stdout()).contains(".sandboxkit-shell-");

        shell.close();
        shell.close();

        assertThat(shell.isOpen()).isFalse();
        assertThatThrownBy(() -> shell.exec("pwd")).isInstanceOf(ShellSessionEndedException.class);
        assertThat(sandbox.exec(ExecRequest.shell("ls -a /tmp /dev/shm")).stdout()).doesNotContain(".sandboxkit-shell-");
    }

    @Test
    @DisplayName("a running command is activity: the sandbox is not reaped under it, only once the session idles")
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

    @Test
    @DisplayName("destroying the sandbox ends its sessions")
    void destroyEndsTheSession() {
        Sandbox sandbox = manager.acquire("sh-destroy", SPEC);
        ShellSession shell = sandbox.shell();
        shell.exec("true");
        sandbox.destroy();
        assertThat(shell.isOpen()).isFalse();
        assertThatThrownBy(() -> shell.exec("pwd")).isInstanceOf(ShellSessionEndedException.class);
        shell.close();
    }

    @Test
    @DisplayName("sessions work the same with ExecMode.PLAIN")
    void plainMode() {
        SandboxSpec plain = SPEC.toBuilder().execMode(ExecMode.PLAIN).build();
        try (ShellSession shell = manager.acquire("sh-plain", plain).shell()) {
            shell.exec("cd /tmp && export P=1");
            assertThat(shell.exec("pwd; echo $P").stdout()).isEqualTo("/tmp\n1\n");
        }
    }

    @Test
    @DisplayName("a working directory on a session request is refused")
    void workingDirRefused() {
        try (ShellSession shell = manager.acquire("sh-wd", SPEC).shell()) {
            assertThatThrownBy(() -> shell.exec(ExecRequest.of("pwd").withWorkingDir("sub")))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }
}
