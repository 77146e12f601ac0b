package dev.sandboxkit.docker;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.docker.internal.files.FilesTestSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A per-exec secret appears in no log line, with sandboxkit's loggers at DEBUG. Runs in its own Surefire
 * execution ({@code debug-logging} in the pom) that sets {@code org.slf4j.simpleLogger.log.dev.sandboxkit=debug}
 * before SLF4J starts; slf4j-simple writes to whatever {@code System.err} is at the time, which this test tees.
 */
@Tag("slow")
@DisplayName("Secrets never reach the logs (real Docker, DEBUG logging)")
class SecretLogTest {
    private static final String SECRET = "sk-live-" + UUID.randomUUID();
    private static final ByteArrayOutputStream CAPTURED = new ByteArrayOutputStream();
    private static PrintStream originalErr;
    private static PrintStream originalOut;
    @TempDir
    static Path tmp;

    @BeforeAll
    static void capture() {
        originalErr = System.err;
        originalOut = System.out;
        System.setErr(new PrintStream(new Tee(originalErr), true, StandardCharsets.UTF_8));
        System.setOut(new PrintStream(new Tee(originalOut), true, StandardCharsets.UTF_8));
    }

    @AfterAll
    static void restore() {
        System.setErr(originalErr);
        System.setOut(originalOut);
    }

    @Test
    @DisplayName("acquire, execs (ok, failing, timed out, stdin), hook, reap, resume, files and close: the secret is in no log line")
    void secretNeverLogged() throws Exception {
        assumeTrue(Boolean.getBoolean("sandboxkit.test.debugLogging"),
                "runs only in the debug-logging Surefire execution, where SLF4J starts at DEBUG");
        Logger engineLog = LoggerFactory.getLogger("dev.sandboxkit.internal.LifecycleEngine");
        assertThat(engineLog.isDebugEnabled()).as("this test must run with dev.sandboxkit at DEBUG (debug-logging "
                + "execution); otherwise it would prove nothing").isTrue();
        ManagerOnDockerTest.EngineCheck.requireEngine().close();
        Logger userLog = LoggerFactory.getLogger("dev.sandboxkit.test.events");
        SandboxSpec spec = FilesTestSupport.spec().env("MODE", "m")
                .postCreate(ExecRequest.shell("echo hook-ran"))
                .extraCaCertificates(SetupOnDockerTest.PEM).build();
        try (SandboxManager manager = SandboxManager.builder().driver("docker").workspaceRoot(tmp.resolve("ws"))
                .idleTimeout(Duration.ofSeconds(2)).reaperInterval(Duration.ofMillis(200))
                // An application that logs every event it receives, at INFO.
                .listener(event -> userLog.info("event: {}", event)).build()) {
            Sandbox sandbox = manager.acquire("secrets", spec);
            // Delivered (compared by hash: the command line itself is logged by the application's listener).
            ExecResult ok = sandbox.exec(ExecRequest.shell("printf %s \"$TOKEN\" | sha256sum | cut -d' ' -f1")
                    .withEnv("TOKEN", SECRET));
            assertThat(ok.stdout().trim()).isEqualTo(FilesTestSupport.sha256(SECRET.getBytes(StandardCharsets.UTF_8)));
            assertThat(sandbox.exec(ExecRequest.shell("exit 3").withEnv("TOKEN", SECRET)).exitCode()).isEqualTo(3);
            assertThat(sandbox.exec(ExecRequest.of("no-such-binary").withEnv("TOKEN", SECRET)).exitCode()).isIn(126, 127);
            assertThat(sandbox.exec(ExecRequest.shell("sleep 30").withEnv("TOKEN", SECRET)
                    .withTimeout(Duration.ofMillis(500))).timedOut()).isTrue();
            assertThat(sandbox.exec(ExecRequest.of("cat").withStdin("data").withEnv("TOKEN", SECRET)).stdout())
                    .isEqualTo("data");
            sandbox.files().write("out.txt", "result".getBytes(StandardCharsets.UTF_8));
            long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (manager.session("secrets").orElseThrow().state() != SessionState.SUSPENDED) {
                assertThat(System.nanoTime()).as("reaped in time").isLessThan(end);
                Thread.sleep(100);
            }
            assertThat(sandbox.exec(ExecRequest.shell("cat out.txt").withEnv("TOKEN", SECRET)).stdout())
                    .isEqualTo("result"); // resumed, hook and CA again
            userLog.info("request as an application might log it: {}", ExecRequest.shell("x").withEnv("TOKEN", SECRET));
            manager.destroy("secrets");
        }
        String logs = CAPTURED.toString(StandardCharsets.UTF_8);
        assertThat(logs).as("non-vacuous: the run was logged").contains("created container")
                .contains("resumed with fresh container").contains("event: ExecStarted");
        assertThat(logs).doesNotContain(SECRET);
    }

    /** Copies everything written to the captured buffer and to the original stream. */
    private static final class Tee extends OutputStream {
        private final PrintStream original;

        Tee(PrintStream original) {
            this.original = original;
        }

        @Override
        public void write(int b) {
            synchronized (CAPTURED) {
                CAPTURED.write(b);
            }
            original.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            synchronized (CAPTURED) {
                CAPTURED.write(b, off, len);
            }
            original.write(b, off, len);
        }

        @Override
        public void flush() {
            original.flush();
        }
    }
}
