package dev.sandboxkit.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.InspectExecResponse;
import com.github.dockerjava.api.model.Frame;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Latency of {@code exec("true")} on one container of the test image, five ways, interleaved in one run so
 * that load from elsewhere on the machine hits all alike (the order rotates every iteration):
 * <ol>
 * <li>{@code channel}: the driver's default path, the command channel (commands in their own session via
 *     {@code setsid}, the default);</li>
 * <li>{@code channel, no setsid}: the channel of a second driver with {@code docker.channelSetsid=false}
 *     (one exec less per command; commands share the supervisor's process group);</li>
 * <li>{@code plain exec}: the driver's plain path ({@link EngineExec}: create, start, inspect over the raw
 *     client), what {@code ExecMode.PLAIN} runs;</li>
 * <li>{@code docker-java}: the raw Engine API with docker-java 3.7.1 (execCreate, execStart, inspect until
 *     the exit code is there);</li>
 * <li>{@code docker exec CLI}: {@code /usr/bin/docker exec <id> true}.</li>
 * </ol>
 * Prints p50/p95/p99 per path, the ratios to the channel's p50, and the 1-minute load average sampled
 * before, during (every 25 iterations) and after the run. Not a test: run with
 * {@code java -cp <sandbox-docker test classpath> dev.sandboxkit.docker.ChannelExecBenchmark [iterations] [warm-up]}
 * (defaults 300 and 30) against the local engine and {@code sandboxkit-test:latest}.
 */
final class ChannelExecBenchmark {
    private ChannelExecBenchmark() {
    }

    private interface Path_ {
        void run() throws Exception;
    }

    /**
     * Runs the comparison.
     *
     * @param args optional iterations per path (default 300) and warm-up runs per path (default 30)
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        int warmUp = args.length > 1 ? Integer.parseInt(args[1]) : 30;
        String instanceId = DockerTestSupport.newInstanceId();
        Path root = Files.createTempDirectory("sbx-chbench-").resolve("ws");
        DockerSandboxDriver driver = (DockerSandboxDriver) new DockerDriverProvider()
                .create(DockerTestSupport.context(instanceId, root));
        DockerSandboxDriver noSetsid = (DockerSandboxDriver) new DockerDriverProvider()
                .create(DockerTestSupport.context(instanceId, root, Map.of(ExecChannels.SETSID_PROPERTY, "false")));
        EngineExec plain = new EngineExec(new EngineClient(DockerHost.resolve(DockerTestSupport.context("b", root))));
        DockerClient docker = DockerTestSupport.dockerClient();
        String id = DockerTestSupport.start(driver, instanceId, "bench", DockerTestSupport.spec().build());
        try {
            Map<String, Path_> paths = new LinkedHashMap<>();
            paths.put("channel (setsid, default)", () -> check(driver.exec(id, ExecRequest.of("true")), "channel"));
            paths.put("channel, no setsid", () -> check(noSetsid.exec(id, ExecRequest.of("true")), "no setsid"));
            paths.put("plain exec (library)", () -> check(plain.exec(id, ExecRequest.of("true")), "plain"));
            paths.put("raw Engine API (docker-java)", () -> dockerJava(docker, id));
            paths.put("docker exec CLI", () -> cli(id));
            List<String> names = new ArrayList<>(paths.keySet());
            Map<String, List<Long>> samples = new LinkedHashMap<>();
            names.forEach(n -> samples.put(n, new ArrayList<>()));
            for (int i = 0; i < warmUp; i++) {
                for (Path_ p : paths.values()) {
                    p.run();
                }
            }
            long channelBefore = driver.channels().channelExecs.sum();
            List<Double> loads = new ArrayList<>();
            double loadBefore = load();
            long t0 = System.nanoTime();
            for (int i = 0; i < iterations; i++) {
                for (int k = 0; k < names.size(); k++) {
                    String name = names.get((i + k) % names.size());
                    long start = System.nanoTime();
                    paths.get(name).run();
                    samples.get(name).add(System.nanoTime() - start);
                }
                if (i % 25 == 0) {
                    loads.add(load());
                }
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            double loadAfter = load();
            if (driver.channels().channelExecs.sum() - channelBefore != iterations) {
                throw new IllegalStateException("the default path did not run on the channel");
            }
            double channelP50 = pct(samples.get(names.get(0)), 50);
            System.out.printf("exec(\"true\"), %d iterations per path after %d warm-up, interleaved, %.0f s; "
                    + "%d cores; load average (1 min) before %.2f, during %.2f-%.2f (mean %.2f), after %.2f%n",
                    iterations, warmUp, seconds, Runtime.getRuntime().availableProcessors(), loadBefore,
                    Collections.min(loads), Collections.max(loads), loads.stream().mapToDouble(d -> d).average().orElse(0),
                    loadAfter);
            System.out.println();
            System.out.println("| path | p50 ms | p95 ms | p99 ms | p50 / channel p50 |");
            System.out.println("|---|---:|---:|---:|---:|");
            for (String name : names) {
                List<Long> s = samples.get(name);
                System.out.printf("| %s | %.2f | %.2f | %.2f | %.1fx |%n", name, pct(s, 50), pct(s, 95), pct(s, 99),
                        pct(s, 50) / channelP50);
            }
        } finally {
            driver.remove(id);
            driver.deleteWorkspace(root.resolve("bench").toString());
            noSetsid.close();
            driver.close();
            docker.close();
            Files.deleteIfExists(root);
            Files.deleteIfExists(root.getParent());
        }
    }

    private static void check(ExecResult r, String what) {
        if (r.exitCode() != 0) {
            throw new IllegalStateException(what + ": " + r);
        }
    }

    private static void dockerJava(DockerClient docker, String id) throws InterruptedException {
        String execId = docker.execCreateCmd(id).withCmd("true").withAttachStdout(true).withAttachStderr(true).exec()
                .getId();
        docker.execStartCmd(execId).exec(new ResultCallback.Adapter<Frame>()).awaitCompletion();
        InspectExecResponse inspect = docker.inspectExecCmd(execId).exec();
        while (Boolean.TRUE.equals(inspect.isRunning()) || inspect.getExitCodeLong() == null) {
            Thread.sleep(1);
            inspect = docker.inspectExecCmd(execId).exec();
        }
        if (inspect.getExitCodeLong() != 0) {
            throw new IllegalStateException("docker-java: exit " + inspect.getExitCodeLong());
        }
    }

    private static void cli(String id) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("/usr/bin/docker", "exec", id, "true").redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        if (p.waitFor() != 0) {
            throw new IllegalStateException("docker exec: exit " + p.exitValue());
        }
    }

    private static double load() throws IOException {
        return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
    }

    private static double pct(List<Long> nanos, int percentile) {
        List<Long> sorted = new ArrayList<>(nanos);
        Collections.sort(sorted);
        int i = Math.min(sorted.size() - 1, (int) Math.round(percentile / 100.0 * (sorted.size() - 1)));
        return sorted.get(i) / 1e6;
    }
}
