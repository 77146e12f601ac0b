package dev.sandboxkit.docker;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxManager;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Not part of the test run (the name matches no Surefire include): {@code mvn -pl sandbox-docker test
 * -Dtest=TlsExecBenchmark}. {@code exec("true")} p50 through the manager, on the command channel and on plain
 * execs, over the TLS engine ({@link TlsEngine}) and over the local unix socket, interleaved round-robin so that
 * both engines see the same machine load. The TLS figures of docs/docker.md come from here.
 */
class TlsExecBenchmark {
    private static final int WARMUP = 30;
    private static final int ROUNDS = Integer.getInteger("bench.rounds", 300);

    @Test
    void execLatency() throws Exception {
        TlsEngine tls = TlsEngine.get();
        Path root = Files.createTempDirectory("sandboxkit-tls-bench");
        SandboxManager.Builder overTls = SandboxManager.builder().driver("docker").workspaceRoot(root.resolve("tls"));
        tls.properties(tls.clientDir).forEach(overTls::driverProperty);
        try (SandboxManager t = overTls.build();
             SandboxManager u = SandboxManager.builder().driver("docker").workspaceRoot(root.resolve("unix")).build()) {
            Map<String, Sandbox> sandboxes = new LinkedHashMap<>();
            for (ExecMode mode : new ExecMode[] {ExecMode.CHANNEL, ExecMode.PLAIN}) {
                sandboxes.put("TLS " + mode, t.acquire("tls-" + mode, DockerTestSupport.spec().execMode(mode).build()));
                sandboxes.put("unix " + mode, u.acquire("unix-" + mode, DockerTestSupport.spec().execMode(mode).build()));
            }
            Map<String, long[]> samples = new LinkedHashMap<>();
            sandboxes.keySet().forEach(k -> samples.put(k, new long[ROUNDS]));
            for (int i = -WARMUP; i < ROUNDS; i++) {
                for (Map.Entry<String, Sandbox> e : sandboxes.entrySet()) {
                    long t0 = System.nanoTime();
                    if (e.getValue().exec(ExecRequest.of("true")).exitCode() != 0) {
                        throw new AssertionError(e.getKey() + ": exit code");
                    }
                    long took = System.nanoTime() - t0;
                    if (i >= 0) {
                        samples.get(e.getKey())[i] = took;
                    }
                }
            }
            System.out.println("exec(\"true\"), " + ROUNDS + " rounds, interleaved:");
            samples.forEach((k, v) -> {
                long[] s = v.clone();
                Arrays.sort(s);
                System.out.printf("  %-14s p50 %6.2f ms  p90 %6.2f ms%n", k, s[s.length / 2] / 1e6,
                        s[(int) (s.length * 0.9)] / 1e6);
            });
            for (String k : sandboxes.keySet()) {
                String[] parts = k.split(" ");
                (parts[0].equals("TLS") ? t : u).destroy(parts[0].toLowerCase(java.util.Locale.ROOT) + "-" + parts[1]);
            }
        } finally {
            DockerTestSupport.deleteTree(root);
        }
    }
}
