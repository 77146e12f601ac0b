package dev.sandboxkit.examples;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.WarmPool;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Runs untrusted tasks, each in its own single-use sandbox: taken from a warm pool, hard-killed and purged
 * when the task ends, never reused. A task that runs too long is cut off by the lifetime janitor.
 *
 * <p>Run it with {@code mvn -q -pl examples exec:java -Dexec.mainClass=dev.sandboxkit.examples.EphemeralTaskRunner}
 * after {@code scripts/setup-env.sh}.
 */
public final class EphemeralTaskRunner {

    private EphemeralTaskRunner() {
    }

    /**
     * Runs three tasks, one of which overruns its lifetime.
     *
     * @param args unused
     * @throws Exception if a step fails
     */
    public static void main(String[] args) throws Exception {
        SandboxSpec oneShot = SandboxSpec.builder()
                .image(System.getProperty("image", "sandboxkit-test:latest"))
                .pullPolicy(PullPolicy.IF_MISSING)
                .ephemeral()                              // release = hard kill + workdir purge, never reused
                .maxLifetime(Duration.ofSeconds(5))       // the janitor kills runaway tasks
                .build();
        Path root = Files.createTempDirectory("sandboxkit-tasks");
        try (SandboxManager manager = SandboxManager.builder().driver("docker").workspaceRoot(root)
                .warmPool(WarmPool.of(oneShot, 2))        // hides container start-up
                .reaperInterval(Duration.ofMillis(200)).build()) {
            List<String> tasks = List.of(
                    "echo 'computing...' && seq 1 5 | awk '{s+=$1} END {print s}'",
                    "echo SECRET=$TOKEN is visible only to this task > out.txt && wc -c out.txt",
                    "sleep 600");                         // overruns: killed at 5 s
            for (int i = 0; i < tasks.size(); i++) {
                String taskId = "task-" + i + "-" + ProcessHandle.current().pid();
                long t0 = System.nanoTime();
                try (Sandbox sandbox = manager.acquire(taskId, oneShot)) {
                    ExecResult r = sandbox.exec(ExecRequest.shell(tasks.get(i)).withEnv("TOKEN", "t-" + i));
                    System.out.printf("%s: exit %d%s in %d ms -> %s%n", taskId, r.exitCode(),
                            r.lifetimeExceeded() ? " (lifetime exceeded)" : "", (System.nanoTime() - t0) / 1_000_000,
                            r.stdout().strip().replace('\n', ' '));
                } // released: container killed, workdir purged
                System.out.printf("%s: released; workdir left on disk: %s%n", taskId,
                        Files.exists(root.resolve(taskId)));
            }
            System.out.println("stats: " + manager.stats());
        } finally {
            Files.deleteIfExists(root);
        }
    }
}
