package dev.sandboxkit.docker.internal.engine;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;

import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Measures the control calls on both clients the driver has (docker-java and {@link EngineClient}) against the real
 * engine: inspect, info, list by label, create+remove on runc. The figures in this package's doc come from it.
 * Run: {@code java -cp <test classpath> dev.sandboxkit.docker.internal.engine.ControlClientBench [N] [host] [image]}.
 */
public final class ControlClientBench {
    private ControlClientBench() {
    }

    interface Call {
        void run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        String address = args.length > 1 ? args[1] : "unix:///var/run/docker.sock";
        String image = args.length > 2 ? args[2] : "sandboxkit-test:latest";
        DockerHost host = DockerHost.parse(address);
        DockerClient docker = DockerClientImpl.getInstance(
                DefaultDockerClientConfig.createDefaultConfigBuilder().withDockerHost(host.dockerJavaHost()).build(),
                new ZerodepDockerHttpClient.Builder().dockerHost(URI.create(host.dockerJavaHost())).maxConnections(32)
                        .connectionTimeout(Duration.ofSeconds(10)).responseTimeout(Duration.ofMinutes(2)).build());
        String label = "sbk-bench=" + UUID.randomUUID();
        try (EngineClient own = new EngineClient(host)) {
            String id = docker.createContainerCmd(image).withCmd("sleep", "600")
                    .withLabels(Map.of("sbk-bench", label.substring(10))).exec().getId();
            try {
                String filters = URLEncoder.encode("{\"label\":[\"" + label + "\"]}", StandardCharsets.UTF_8);
                String create = "{\"Image\":\"" + image + "\",\"Cmd\":[\"true\"],\"Labels\":{\"sbk-bench\":\""
                        + label.substring(10) + "\"},\"HostConfig\":{\"Runtime\":\"runc\"}}";
                for (int round = 0; round < 2; round++) {
                    report("inspect", n, round,
                            () -> docker.inspectContainerCmd(id).exec(),
                            () -> ok(own.call("GET", "/containers/" + id + "/json", null)).json());
                    report("info", n, round,
                            () -> docker.infoCmd().exec(),
                            () -> ok(own.call("GET", "/info", null)).json());
                    report("list-by-label", n, round,
                            () -> docker.listContainersCmd().withShowAll(true).withLabelFilter(List.of(label)).exec(),
                            () -> ok(own.call("GET", "/containers/json?all=1&filters=" + filters, null)).json());
                    report("create+remove", n, round,
                            () -> {
                                String c = docker.createContainerCmd(image).withCmd("true")
                                        .withLabels(Map.of("sbk-bench", label.substring(10)))
                                        .withHostConfig(HostConfig.newHostConfig().withRuntime("runc")).exec().getId();
                                docker.removeContainerCmd(c).withForce(true).exec();
                            },
                            () -> {
                                String c = ok(own.call("POST", "/containers/create",
                                        EngineClient.JSON.readTree(create))).json().get("Id").asText();
                                ok(own.call("DELETE", "/containers/" + c + "?force=1", null));
                            });
                }
            } finally {
                docker.removeContainerCmd(id).withForce(true).exec();
                docker.close();
            }
        }
    }

    private static EngineClient.Response ok(EngineClient.Response r) {
        if (r.status() / 100 != 2) {
            throw new IllegalStateException(r.status() + ": " + r.message());
        }
        return r;
    }

    /** Runs both clients n times each, interleaved call by call so that load on the machine hits both alike. */
    private static void report(String name, int n, int round, Call dockerJava, Call own) throws Exception {
        for (int i = 0; i < 10; i++) {
            dockerJava.run();
            own.run();
        }
        long[] a = new long[n];
        long[] b = new long[n];
        for (int i = 0; i < n; i++) {
            boolean ownFirst = (i & 1) == 1;
            if (ownFirst) {
                b[i] = time(own);
                a[i] = time(dockerJava);
            } else {
                a[i] = time(dockerJava);
                b[i] = time(own);
            }
        }
        System.out.printf("round %d %-14s docker-java p50 %7.2f ms p99 %7.2f ms | own p50 %7.2f ms p99 %7.2f ms%n",
                round, name, pct(a, 50), pct(a, 99), pct(b, 50), pct(b, 99));
    }

    private static long time(Call c) throws Exception {
        long t = System.nanoTime();
        c.run();
        return System.nanoTime() - t;
    }

    private static double pct(long[] v, int p) {
        long[] s = v.clone();
        Arrays.sort(s);
        return s[Math.min(s.length - 1, (int) Math.ceil(p / 100.0 * s.length) - 1)] / 1e6;
    }
}
