package dev.sandboxkit.docker;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecStream;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.ProcessStatus;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxProcess;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnsupportedException;
import dev.sandboxkit.TerminalSize;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static dev.sandboxkit.docker.DockerTestSupport.context;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue #19's background processes on a terminal, on the real engine: script(1) in the container holds the pty
 * ({@link DockerTestSupport#SCRIPT_IMAGE}, built by scripts/build-test-images.sh), a later exec resizes it, and
 * the image without script refuses the start as unsupported.
 */
@Tag("slow")
@DisplayName("Background processes on a pseudo-terminal (script(1) in the container), on the real Docker engine")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ProcessTerminalOnDockerTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path root;
    private DockerSandboxDriver driver;
    private SandboxManager manager;

    @BeforeEach
    void start() {
        DockerTestSupport.requireScriptImage();
        driver = (DockerSandboxDriver) new DockerDriverProvider().create(context(DockerTestSupport.newInstanceId(),
                root));
        manager = SandboxManager.builder().driver(driver).workspaceRoot(root).build();
    }

    @AfterEach
    void stop() {
        manager.close();
        driver.close();
    }

    private Sandbox withScript(String session) {
        return manager.acquire(session, SandboxSpec.builder().image(DockerTestSupport.SCRIPT_IMAGE)
                .pullPolicy(PullPolicy.NEVER).build());
    }

    @Test
    @DisplayName("tty reports a terminal of the size asked for; stderr merges into the one stream; exit code kept")
    void ttyAndSize() {
        Sandbox sandbox = withScript("pty-tty");
        SandboxProcess p = sandbox.start(ExecRequest.shell("tty; stty size; echo oops >&2; exit 3")
                .withTty(TerminalSize.of(100, 30)));
        assertThat(p.waitFor(WAIT)).isEqualTo(ProcessStatus.exited(3));
        String out = p.output(ExecStream.STDOUT, 0, 10_000).text();
        assertThat(out).matches("(?s)/dev/pts/\\d+\r\n30 100\r\noops\r\n");
        assertThat(p.output(ExecStream.STDERR, 0, 10_000).length()).isZero();
        assertThat(p.hasTerminal()).isTrue();

        SandboxProcess plain = sandbox.start(ExecRequest.shell("tty; true"));
        assertThat(plain.waitFor(WAIT)).isEqualTo(ProcessStatus.exited(0));
        assertThat(plain.output(ExecStream.STDOUT, 0, 1000).text()).isEqualTo("not a tty\n");
        assertThat(plain.hasTerminal()).isFalse();
        assertThatThrownBy(() -> plain.resize(TerminalSize.DEFAULT)).isInstanceOf(SandboxUnsupportedException.class)
                .hasMessageContaining("no terminal");
    }

    @Test
    @DisplayName("stty size follows a resize made after the start, through a second handle; kill takes the group")
    void resizeAfterStart() throws InterruptedException {
        Sandbox sandbox = withScript("pty-resize");
        SandboxProcess p = sandbox.start(ExecRequest.shell(
                "trap 'echo winch' WINCH; while :; do stty size; sleep 0.1; done").withTty(TerminalSize.of(80, 24)));
        awaitOutput(p, "24 80\r\n");
        SandboxProcess again = sandbox.process(p.id());
        assertThat(again.hasTerminal()).isTrue();
        again.resize(TerminalSize.of(132, 43));
        String out = awaitOutput(p, "43 132\r\n");
        assertThat(out).contains("winch");
        assertThat(out.substring(out.indexOf("43 132"))).doesNotContain("24 80");

        assertThat(again.kill()).isTrue();
        assertThat(p.waitFor(WAIT)).isEqualTo(ProcessStatus.signaled(9));
        p.resize(TerminalSize.DEFAULT); // ignored once ended
        assertThat(awaitNoProcess(sandbox, "stty size")).doesNotContain("stty size", "script");
    }

    @Test
    @DisplayName("a scripted interactive sh reading lines through writeStdin round-trips; closeStdin is an EOF")
    void interactiveShell() throws InterruptedException {
        Sandbox sandbox = withScript("pty-sh");
        SandboxProcess p = sandbox.start(ExecRequest.shell(
                "while IFS= read -r line; do echo \"got[$line]\"; done; echo bye").withTty(TerminalSize.DEFAULT));
        p.writeStdin("hello world\n".getBytes(StandardCharsets.UTF_8));
        awaitOutput(p, "got[hello world]\r\n");
        p.writeStdin("second\n".getBytes(StandardCharsets.UTF_8));
        String out = awaitOutput(p, "got[second]\r\n");
        assertThat(out).startsWith("hello world\r\n").as("the terminal echoes what is typed")
                .contains("second\r\ngot[second]");
        p.closeStdin();
        assertThat(p.waitFor(WAIT)).isEqualTo(ProcessStatus.exited(0));
        assertThat(p.output(ExecStream.STDOUT, 0, 10_000).text()).endsWith("bye\r\n");
    }

    @Test
    @DisplayName("the image without script(1): the start is refused with SandboxUnsupportedException naming it")
    void noScriptInImage() {
        Sandbox sandbox = manager.acquire("pty-none", DockerTestSupport.spec().build());
        assertThatThrownBy(() -> sandbox.start(ExecRequest.of("tty").withTty(TerminalSize.DEFAULT)))
                .isInstanceOf(SandboxUnsupportedException.class).hasMessageContaining("script(1)");
        assertThat(sandbox.processes()).isEmpty();
    }

    static String awaitOutput(SandboxProcess p, String expected) throws InterruptedException {
        String out = "";
        for (int i = 0; i < 600; i++) { // 30 s: bounds a wait for an event, generously
            out = p.output(ExecStream.STDOUT, 0, 100_000).text();
            if (out.contains(expected)) {
                return out;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no '" + expected + "' from " + p + " in: " + out);
    }

    private static String awaitNoProcess(Sandbox sandbox, String what) throws InterruptedException {
        String ps = "";
        for (int i = 0; i < 600; i++) { // 30 s at most
            ps = sandbox.exec(ExecRequest.of("ps", "-o", "pid,args")).stdout();
            if (!ps.contains(what)) {
                break;
            }
            Thread.sleep(50);
        }
        return ps;
    }
}
