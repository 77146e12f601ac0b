package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.ShellSession;
import dev.sandboxkit.ShellSessionEndedException;
import dev.sandboxkit.spi.ComputeCapability;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link ComputeDriverTck}'s shell sessions group ({@link dev.sandboxkit.ShellSession}). */
abstract class ShellSessionConformance extends KitSupport {
    ShellSessionConformance(DriverKit kit) {
        super(kit);
    }

    @Test
    @DisplayName("cd and export carry over between commands; a plain exec does not see them")
    void cdAndExportPersist() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        Sandbox sandbox = acquire();
        try (ShellSession shell = sandbox.shell()) {
            assertSucceeded(shell.exec("mkdir -p sub/dir && cd sub"));
            assertSucceeded(shell.exec("export GREETING='hello world' QUOTE=\"it's\""));
            assertSucceeded(shell.exec(ExecRequest.of("cd", "dir")));

            ExecResult r = shell.exec("pwd; echo \"$GREETING|$QUOTE\"");

            assertThat(r.stdout()).isEqualTo(SandboxSpec.WORKSPACE + "/sub/dir\nhello world|it's\n");
            assertThat(sh(sandbox, "pwd; echo \"${GREETING-unset}\"").stdout()).isEqualTo(SandboxSpec.WORKSPACE + "\nunset\n");
            assertSucceeded(shell.exec("unset GREETING"));
            assertThat(shell.exec("echo \"${GREETING-unset}\"").stdout()).isEqualTo("unset\n");
        }
    }

    @Test
    @DisplayName("a command's own env is visible to it only and never saved; non-exported variables last one command")
    void perCommandEnv() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        try (ShellSession shell = acquire().shell()) {
            ExecResult with = shell.exec(ExecRequest.shell("echo \"$TOKEN\"; export KEPT=yes; plain=1")
                    .withEnv("TOKEN", "s3cret"));
            assertThat(with.stdout()).isEqualTo("s3cret\n");

            ExecResult after = shell.exec("echo \"${TOKEN-unset} ${KEPT-unset} ${plain-unset}\"");

            assertThat(after.stdout()).isEqualTo("unset yes unset\n");
        }
    }

    @Test
    @DisplayName("the spec's env is there from the start and export overrides it")
    void specEnv() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        Sandbox sandbox = manager.acquire(newSessionId("tck-shell"), spec().toBuilder().env("FROM_SPEC", "spec").build());
        try (ShellSession shell = sandbox.shell()) {
            assertThat(shell.exec("echo $FROM_SPEC").stdout()).isEqualTo("spec\n");
            assertSucceeded(shell.exec("export FROM_SPEC=mine"));
            assertThat(shell.exec("echo $FROM_SPEC").stdout()).isEqualTo("mine\n");
        }
    }

    @Test
    @DisplayName("exit ends the command, not the session; exit codes, streams and syntax errors work as for exec")
    void exitCodesAndStreams() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        try (ShellSession shell = acquire().shell()) {
            ExecResult exit = shell.exec("cd /tmp; echo out; echo err >&2; exit 3");
            assertThat(exit.exitCode()).isEqualTo(3);
            assertThat(exit.stdout()).isEqualTo("out\n");
            assertThat(exit.stderr()).isEqualTo("err\n");
            assertThat(shell.exec("echo \"x").exitCode()).as("a syntax error").isNotZero();
            assertThat(shell.exec("pwd").stdout()).isEqualTo("/tmp\n");
            assertThat(shell.isOpen()).isTrue();
        }
    }

    @Test
    @DisplayName("a command reads its stdin up to EOF")
    void stdin() {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.STDIN);
        try (ShellSession shell = acquire().shell()) {
            assertThat(shell.exec(ExecRequest.shell("cat; echo .").withStdin("in")).stdout()).isEqualTo("in.\n");
        }
    }

    @Test
    @DisplayName("a timeout kills the command and its children and keeps the state from before it")
    void timeoutKeepsEarlierState() {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.KILL_PROCESS_GROUP);
        try (ShellSession shell = acquire().shell()) {
            assertSucceeded(shell.exec("mkdir -p a && cd a && export V=1"));

            ExecResult slow = shell.exec(ExecRequest.shell("cd /; export V=2; sleep 300 & sleep 300")
                    .withTimeout(Duration.ofSeconds(1)));

            assertThat(slow.timedOut()).isTrue();
            assertThat(slow.stderr()).isEmpty();
            assertThat(shell.exec("pwd; echo $V").stdout()).isEqualTo(SandboxSpec.WORKSPACE + "/a\n1\n");
            String ps = "";
            for (int i = 0; i < 30 && (ps = shell.exec("ps").stdout()).contains("sleep 300"); i++) {
                sleep(100);
            }
            assertThat(ps).doesNotContain("sleep 300");
        }
    }

    @Test
    @DisplayName("two sessions in one sandbox are independent")
    void independentSessions() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        Sandbox sandbox = acquire();
        try (ShellSession one = sandbox.shell(); ShellSession two = sandbox.shell()) {
            assertSucceeded(one.exec("cd /tmp && export WHO=one"));
            assertSucceeded(two.exec("cd " + SandboxSpec.WORKSPACE + " && export WHO=two"));
            assertThat(one.exec("pwd; echo $WHO").stdout()).isEqualTo("/tmp\none\n");
            assertThat(two.exec("pwd; echo $WHO").stdout()).isEqualTo(SandboxSpec.WORKSPACE + "\ntwo\n");
        }
    }

    @Test
    @DisplayName("close discards the state in the sandbox; the closed session refuses commands")
    void closeDiscardsState() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        Sandbox sandbox = acquire();
        ShellSession shell = sandbox.shell();
        assertSucceeded(shell.exec("cd /tmp"));
        assertThat(sh(sandbox, "ls -a /tmp /dev/shm").stdout()).contains(".sandboxkit-shell-");

        shell.close();
        shell.close();

        assertThat(shell.isOpen()).isFalse();
        assertThatThrownBy(() -> shell.exec("pwd")).isInstanceOf(ShellSessionEndedException.class);
        assertThat(sh(sandbox, "ls -a /tmp /dev/shm").stdout()).doesNotContain(".sandboxkit-shell-");
    }

    @Test
    @DisplayName("an idle reap ends the session; a new one starts in the resumed sandbox with fresh state")
    void reapEndsTheSession() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        Sandbox sandbox = acquire();
        ShellSession shell = sandbox.shell();
        assertSucceeded(shell.exec("cd /tmp"));

        scheduler.advance(TTL.plus(REAPER_INTERVAL));

        assertThat(sandbox.info().state()).isEqualTo(SessionState.SUSPENDED);
        assertThat(shell.isOpen()).isFalse();
        assertThatThrownBy(() -> shell.exec("pwd")).isInstanceOf(ShellSessionEndedException.class);
        shell.close();
        try (ShellSession fresh = sandbox.shell()) {
            assertThat(fresh.exec("pwd").stdout()).isEqualTo(SandboxSpec.WORKSPACE + "\n");
        }
        assertThat(sandbox.info().state()).isEqualTo(SessionState.ACTIVE);
    }

    @Test
    @DisplayName("destroying the sandbox ends its sessions")
    void destroyEndsTheSession() {
        requireCapability(ComputeCapability.REAL_PROCESSES);
        Sandbox sandbox = acquire();
        ShellSession shell = sandbox.shell();
        assertSucceeded(shell.exec("true"));

        sandbox.destroy();

        assertThat(shell.isOpen()).isFalse();
        assertThatThrownBy(() -> shell.exec("pwd")).isInstanceOf(ShellSessionEndedException.class);
        shell.close();
    }
}
