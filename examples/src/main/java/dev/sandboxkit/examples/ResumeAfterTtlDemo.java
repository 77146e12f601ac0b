package dev.sandboxkit.examples;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The main demo: one agent session, its container reaped after a short idle TTL, then resumed
 * transparently in a fresh container with the workdir intact. Prints each step with its timing.
 *
 * <p>Run it with {@code scripts/demo.sh}. Settings: {@code -Dimage=...} (default: the local busybox
 * test image), {@code -Dttl=PT2S}.
 */
public final class ResumeAfterTtlDemo {

    private ResumeAfterTtlDemo() {
    }

    /**
     * Runs the demo.
     *
     * @param args unused
     * @throws Exception if a step fails
     */
    public static void main(String[] args) throws Exception {
        String image = System.getProperty("image", "sandboxkit-test:latest");
        Duration ttl = Duration.parse(System.getProperty("ttl", "PT2S"));
        Path root = Files.createTempDirectory("sandboxkit-demo");

        try (SandboxManager manager = SandboxManager.builder()
                .driver("docker")
                .workspaceRoot(root)
                .idleTimeout(ttl)
                .reaperInterval(Duration.ofMillis(200))
                .build()) {
            SandboxSpec spec = SandboxSpec.builder().image(image).pullPolicy(PullPolicy.IF_MISSING).build();
            String session = "demo-chat-" + ProcessHandle.current().pid();
            step("manager up: driver=%s, idle TTL=%s, workdirs under %s", manager.driverName(), ttl, root);

            long t = System.nanoTime();
            Sandbox sandbox = manager.acquire(session, spec);
            String first = sandbox.info().sandboxId();
            step("1. acquire  -> created container %s in %d ms", shortId(first), ms(t));

            t = System.nanoTime();
            ExecResult wrote = sandbox.exec(ExecRequest.shell("echo 'written before the reap' > note.txt && cat note.txt"));
            step("2. exec     -> exit %d, stdout %s(%d ms)", wrote.exitCode(), quote(wrote.stdout()), ms(t));

            t = System.nanoTime();
            ExecResult warm = sandbox.exec(ExecRequest.of("true"));
            step("   exec     -> `true` on the live container: exit %d in %d ms", warm.exitCode(), ms(t));

            step("3. idle     -> no calls for %s ...", ttl);
            t = System.nanoTime();
            SessionInfo info;
            while ((info = sandbox.info()).state() == SessionState.ACTIVE) {
                Thread.sleep(50);
            }
            step("   reaped   -> after %d ms idle: state=%s, container removed, workdir kept (%s)", ms(t),
                    info.state(), Files.exists(Path.of(info.workspace(), "note.txt")) ? "note.txt on disk" : "MISSING");

            t = System.nanoTime();
            ExecResult read = sandbox.exec(ExecRequest.of("cat", "note.txt"));
            String second = sandbox.info().sandboxId();
            step("4. exec     -> resumed in fresh container %s (was %s) in %d ms", shortId(second), shortId(first), ms(t));
            step("   file     -> %s", quote(read.stdout()));
            if (!read.stdout().contains("written before the reap") || second.equals(first)) {
                throw new IllegalStateException("resume did not behave as expected: " + read);
            }

            manager.destroy(session);
            step("5. destroy  -> container and workdir removed; done");
        } finally {
            Files.deleteIfExists(root);
        }
    }

    private static long ms(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

    private static String shortId(String id) {
        return id == null ? "-" : id.substring(0, Math.min(12, id.length()));
    }

    private static String quote(String s) {
        return '"' + s.strip() + "\" ";
    }

    private static void step(String format, Object... args) {
        System.out.printf(format + "%n", args);
    }
}
