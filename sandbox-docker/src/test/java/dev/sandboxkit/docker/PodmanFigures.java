package dev.sandboxkit.docker;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The Podman figures of docs/docker.md: exec {@code true} on the channel and on plain execs, back to back, and cold acquire,
 * on Docker and on Podman in one run (acquires alternate between the engines, so both see the same load). Not a
 * test; run it on the test classpath: {@code java -cp ... dev.sandboxkit.docker.PodmanFigures [iterations]}.
 */
final class PodmanFigures {
    private static final SandboxSpec SPEC = SandboxSpec.builder().image(DockerTestSupport.IMAGE)
            .pullPolicy(PullPolicy.NEVER).build();

    private PodmanFigures() {
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        Path root = Files.createTempDirectory("sandboxkit-podman-figures");
        Map<String, String> engines = new LinkedHashMap<>();
        engines.put("docker", "unix:///var/run/docker.sock");
        engines.put("podman", PodmanSupport.HOST);
        Map<String, SandboxManager> managers = new LinkedHashMap<>();
        try {
            for (Map.Entry<String, String> e : engines.entrySet()) {
                managers.put(e.getKey(), SandboxManager.builder().driver("docker").driverProperty("docker.host",
                        e.getValue()).workspaceRoot(root.resolve(e.getKey())).build());
            }
            for (Map.Entry<String, SandboxManager> e : managers.entrySet()) {
                Sandbox channel = e.getValue().acquire("fig-channel", SPEC);
                Sandbox plain = e.getValue().acquire("fig-plain", SPEC.toBuilder().execMode(ExecMode.PLAIN).build());
                for (Sandbox s : List.of(channel, plain)) {
                    for (int i = 0; i < 30; i++) { // warm-up: JIT, connections, the channel
                        check(s.exec(ExecRequest.of("true")).exitCode());
                    }
                }
                print(e.getKey() + " exec true, channel, back to back", times(n, channel));
                print(e.getKey() + " exec true, plain exec, back to back", times(n / 3, plain));
            }
            Map<String, List<Long>> acquire = new LinkedHashMap<>();
            managers.forEach((k, m) -> {
                m.acquire("fig-warm", SPEC);
                m.destroy("fig-warm");
                acquire.put(k, new ArrayList<>());
            });
            for (int i = 0; i < Math.max(10, n / 8); i++) {
                for (Map.Entry<String, SandboxManager> e : managers.entrySet()) {
                    String session = "fig-cold-" + i;
                    long t0 = System.nanoTime();
                    e.getValue().acquire(session, SPEC);
                    acquire.get(e.getKey()).add(System.nanoTime() - t0);
                    e.getValue().destroy(session);
                }
            }
            acquire.forEach((k, v) -> print(k + " cold acquire", v));
        } finally {
            managers.values().forEach(m -> {
                m.destroy("fig-channel");
                m.destroy("fig-plain");
                m.close();
            });
            DockerTestSupport.deleteTree(root);
        }
    }

    private static List<Long> times(int n, Sandbox s) {
        List<Long> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            check(s.exec(ExecRequest.of("true")).exitCode());
            out.add(System.nanoTime() - t0);
        }
        return out;
    }

    private static void check(int exitCode) {
        if (exitCode != 0) {
            throw new IllegalStateException("exit " + exitCode);
        }
    }

    private static void print(String what, List<Long> nanos) {
        List<Long> sorted = new ArrayList<>(nanos);
        Collections.sort(sorted);
        System.out.printf("%-45s n=%4d  p50 %8.2f ms  p90 %8.2f ms%n", what, sorted.size(),
                sorted.get(sorted.size() / 2) / 1e6, sorted.get((int) (sorted.size() * 0.9)) / 1e6);
    }
}
