package dev.sandboxkit.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.InspectExecResponse;
import com.github.dockerjava.api.model.Frame;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.spi.SandboxDriver;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Median latency of {@code true} through this driver's exec path vs docker-java's own
 * execCreate/execStart/inspect, on one container. Not a test (no timing assertions): run with
 * {@code java -cp <test classpath> dev.sandboxkit.docker.ExecLatencyBenchmark [runs]}.
 */
final class ExecLatencyBenchmark {
    private ExecLatencyBenchmark() {
    }

    /**
     * Runs the comparison and prints medians.
     *
     * @param args optional number of runs per client (default 200)
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        String instanceId = DockerTestSupport.newInstanceId();
        Path root = Files.createTempDirectory("sbx-bench-").resolve("ws");
        try (SandboxDriver driver = new DockerDriverProvider().create(DockerTestSupport.context(instanceId, root));
             DockerClient docker = DockerTestSupport.dockerClient()) {
            String id = DockerTestSupport.start(driver, instanceId, "bench", DockerTestSupport.spec().build());
            try {
                List<Long> ours = new ArrayList<>();
                List<Long> theirs = new ArrayList<>();
                for (int i = 0; i < 20; i++) { // warm-up both
                    ours(driver, id);
                    dockerJava(docker, id);
                }
                // Alternate run by run, so that load from elsewhere on the machine hits both alike.
                for (int i = 0; i < runs; i++) {
                    if (i % 2 == 0) {
                        ours.add(ours(driver, id));
                        theirs.add(dockerJava(docker, id));
                    } else {
                        theirs.add(dockerJava(docker, id));
                        ours.add(ours(driver, id));
                    }
                }
                System.out.printf("exec 'true' x%d  sandboxkit: median %.2f ms (p10 %.2f, p90 %.2f)%n", ours.size(),
                        pct(ours, 50), pct(ours, 10), pct(ours, 90));
                System.out.printf("exec 'true' x%d  docker-java: median %.2f ms (p10 %.2f, p90 %.2f)%n", theirs.size(),
                        pct(theirs, 50), pct(theirs, 10), pct(theirs, 90));
                System.out.printf("ratio sandboxkit/docker-java (median): %.3f%n", pct(ours, 50) / pct(theirs, 50));
            } finally {
                driver.remove(id);
                driver.deleteWorkspace(root.resolve("bench").toString());
                Files.deleteIfExists(root);
                Files.deleteIfExists(root.getParent());
            }
        }
    }

    private static long ours(SandboxDriver driver, String id) {
        long t0 = System.nanoTime();
        ExecResult r = driver.exec(id, ExecRequest.of("true"));
        long took = System.nanoTime() - t0;
        if (r.exitCode() != 0) {
            throw new IllegalStateException("ours: " + r);
        }
        return took;
    }

    private static long dockerJava(DockerClient docker, String id) throws InterruptedException {
        long t0 = System.nanoTime();
        String execId = docker.execCreateCmd(id).withCmd("true").withAttachStdout(true).withAttachStderr(true).exec()
                .getId();
        docker.execStartCmd(execId).exec(new ResultCallback.Adapter<Frame>()).awaitCompletion();
        InspectExecResponse inspect = docker.inspectExecCmd(execId).exec();
        while (Boolean.TRUE.equals(inspect.isRunning()) || inspect.getExitCodeLong() == null) {
            Thread.sleep(1);
            inspect = docker.inspectExecCmd(execId).exec();
        }
        long took = System.nanoTime() - t0;
        if (inspect.getExitCodeLong() != 0) {
            throw new IllegalStateException("docker-java: exit " + inspect.getExitCodeLong());
        }
        return took;
    }

    private static double pct(List<Long> nanos, int percentile) {
        List<Long> sorted = new ArrayList<>(nanos);
        Collections.sort(sorted);
        int i = Math.min(sorted.size() - 1, (int) Math.round(percentile / 100.0 * (sorted.size() - 1)));
        return sorted.get(i) / 1e6;
    }
}
