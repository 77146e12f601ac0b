package dev.sandboxkit.kubernetes;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriverProvider;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KubernetesDriverProviderTest {
    private static final String KUBECONFIG = """
            apiVersion: v1
            kind: Config
            clusters:
            - name: c
              cluster:
                server: https://127.0.0.1:6443
            contexts:
            - name: ctx
              context:
                cluster: c
                user: u
                namespace: from-kubeconfig
            current-context: ctx
            users:
            - name: u
              user:
                token: abc
            """;

    @TempDir
    Path dir;

    @Test
    void foundThroughServiceLoaderWithNameAndPriority() {
        List<SandboxDriverProvider> providers = ServiceLoader.load(SandboxDriverProvider.class).stream()
                .map(ServiceLoader.Provider::get).filter(p -> p.name().equals("kubernetes")).toList();

        assertThat(providers).singleElement().isInstanceOf(KubernetesDriverProvider.class)
                .satisfies(p -> assertThat(p.priority()).isEqualTo(50));
    }

    @Test
    void availableOnlyWithAKubeconfigOrAServiceAccount() throws IOException {
        Path kubeconfig = Files.writeString(dir.resolve("config"), KUBECONFIG);
        Path token = Files.writeString(dir.resolve("token"), "t");
        Path home = Files.createDirectories(dir.resolve("home"));
        Map<String, String> none = Map.of();

        assertThat(KubernetesDriverProvider.unavailableReason(none, props(home, null), dir.resolve("no-token")))
                .hasValueSatisfying(r -> assertThat(r).contains("no kubeconfig").contains("not running in a cluster"));
        assertThat(KubernetesDriverProvider.unavailableReason(Map.of("KUBECONFIG", kubeconfig.toString()),
                props(home, null), dir.resolve("no-token"))).isEmpty();
        assertThat(KubernetesDriverProvider.unavailableReason(Map.of("KUBECONFIG", dir.resolve("missing").toString()),
                props(home, null), dir.resolve("no-token"))).hasValueSatisfying(r -> assertThat(r).contains("KUBECONFIG="));
        assertThat(KubernetesDriverProvider.unavailableReason(none, props(home, kubeconfig.toString()),
                dir.resolve("no-token"))).isEmpty();
        assertThat(KubernetesDriverProvider.unavailableReason(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1"),
                props(home, null), token)).isEmpty();
        assertThat(KubernetesDriverProvider.unavailableReason(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1"),
                props(home, null), dir.resolve("no-token"))).isPresent();
        Files.createDirectories(home.resolve(".kube"));
        Files.writeString(home.resolve(".kube/config"), KUBECONFIG);
        assertThat(KubernetesDriverProvider.unavailableReason(none, props(home, null), dir.resolve("no-token"))).isEmpty();
    }

    private static java.util.function.Function<String, String> props(Path home, String kubeconfig) {
        Map<String, String> p = new HashMap<>();
        p.put("user.home", home.toString());
        if (kubeconfig != null) {
            p.put("kubeconfig", kubeconfig);
        }
        return p::get;
    }

    @Test
    void createReadsEverySettingFromTheContext() throws IOException {
        Path kubeconfig = Files.writeString(dir.resolve("config"), KUBECONFIG);
        String previous = System.getProperty("kubeconfig");
        System.setProperty("kubeconfig", kubeconfig.toString());
        try {
            Map<String, String> p = new HashMap<>();
            p.put("kubernetes.storageClass", "fast");
            p.put("kubernetes.workspaceSize", "3Gi");
            p.put("kubernetes.runAsUser", "2000");
            p.put("kubernetes.runAsGroup", "2001");
            p.put("kubernetes.fsGroup", "2002");
            p.put("kubernetes.readOnlyRootFilesystem", "true");
            p.put("kubernetes.readinessTimeout", "2m");
            p.put("kubernetes.terminationGracePeriod", "3");
            p.put("kubernetes.networkPolicy", "false");
            p.put("kubernetes.resourceRequestRatio", "0.5");
            p.put("kubernetes.runtimeClassName", "gvisor");
            p.put("kubernetes.imagePullSecrets", "a, b");
            try (KubernetesSandboxDriver d = (KubernetesSandboxDriver) new KubernetesDriverProvider()
                    .create(new DriverContext("m-1", dir, Clock.systemUTC(), p))) {
                Settings s = d.settings();
                assertThat(s.namespace()).as("from the kubeconfig context").isEqualTo("from-kubeconfig");
                assertThat(s.storageClass()).isEqualTo("fast");
                assertThat(s.workspaceSize()).isEqualTo("3Gi");
                assertThat(s.runAsUser()).isEqualTo(2000);
                assertThat(s.runAsGroup()).isEqualTo(2001);
                assertThat(s.fsGroup()).isEqualTo(2002);
                assertThat(s.readOnlyRootFilesystem()).isTrue();
                assertThat(s.readinessTimeout()).isEqualTo(Duration.ofMinutes(2));
                assertThat(s.terminationGrace()).isEqualTo(Duration.ofSeconds(3));
                assertThat(s.networkPolicy()).isFalse();
                assertThat(s.requestRatio()).isEqualTo(0.5);
                assertThat(s.runtimeClassName()).isEqualTo("gvisor");
                assertThat(s.imagePullSecrets()).containsExactly("a", "b");
                assertThat(s.owner()).isEqualTo("m-1");
                assertThat(d.client().getMasterUrl().toString()).startsWith("https://127.0.0.1:6443");
                assertThat(d.client().getConfiguration().getRequestRetryBackoffLimit()).isEqualTo(2);
            }
            try (KubernetesSandboxDriver d = (KubernetesSandboxDriver) new KubernetesDriverProvider()
                    .create(new DriverContext("m-1", dir, Clock.systemUTC(), Map.of("kubernetes.namespace", "agents")))) {
                assertThat(d.settings().namespace()).isEqualTo("agents");
                assertThat(d.settings().networkPolicy()).as("auto").isNull();
                assertThat(d.settings().workspaceSize()).isEqualTo("1Gi");
                assertThat(d.settings().runAsUser()).isEqualTo(10001);
                assertThat(d.settings().readinessTimeout()).isEqualTo(Duration.ofSeconds(120));
                assertThat(d.settings().graceSeconds()).isEqualTo(1);
            }
        } finally {
            if (previous == null) {
                System.clearProperty("kubeconfig");
            } else {
                System.setProperty("kubeconfig", previous);
            }
        }
    }

    @Test
    void badSettingsAreConfigurationErrorsNamingTheKey() {
        DriverContext ctx = new DriverContext("m-1", dir, Clock.systemUTC(), Map.of("kubernetes.readinessTimeout", "soon"));
        assertThatThrownBy(() -> new KubernetesDriverProvider().create(ctx))
                .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("kubernetes.readinessTimeout");
        DriverContext ratio = new DriverContext("m-1", dir, Clock.systemUTC(), Map.of("kubernetes.resourceRequestRatio", "2"));
        assertThatThrownBy(() -> new KubernetesDriverProvider().create(ratio))
                .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("resourceRequestRatio");
    }

    @Test
    void durationsInSeveralSpellings() {
        Map<String, Duration> spellings = Map.of("90", Duration.ofSeconds(90), "500ms", Duration.ofMillis(500),
                "30s", Duration.ofSeconds(30), "2m", Duration.ofMinutes(2), "1h", Duration.ofHours(1),
                "PT2M", Duration.ofMinutes(2), "1h30m", Duration.ofMinutes(90));
        spellings.forEach((text, expected) -> assertThat(KubernetesDriverProvider.builder(new DriverContext("m-1", dir,
                Clock.systemUTC(), Map.of("kubernetes.readinessTimeout", text))).settings().readinessTimeout())
                .as(text).isEqualTo(expected));
    }

    @Test
    void builderOptionsAreSetOnceAndValidated() {
        KubernetesSandboxDriver.Builder b = KubernetesSandboxDriver.builder().namespace("a");
        assertThatThrownBy(() -> b.namespace("b")).isInstanceOf(IllegalStateException.class);
        Config cfg = new ConfigBuilder(Config.empty()).withMasterUrl("https://127.0.0.1:1").build();
        assertThatThrownBy(() -> KubernetesSandboxDriver.builder().config(cfg).workspaceSize("lots").build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> KubernetesSandboxDriver.builder().config(cfg).runAsUser(0).build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> KubernetesSandboxDriver.builder().config(cfg).namespace("Not_A_Namespace").build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> KubernetesSandboxDriver.builder().config(cfg).kubeContext("x").build())
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void unreachableApiIsUnavailableNamingTheMasterUrl() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // closed again: connections are refused
        }
        Config cfg = new ConfigBuilder(Config.empty()).withMasterUrl("https://127.0.0.1:" + port)
                .withRequestRetryBackoffLimit(0).withNamespace("agents").build();
        try (KubernetesSandboxDriver d = KubernetesSandboxDriver.builder().config(cfg).build()) {
            assertThatThrownBy(d::ping).isInstanceOf(SandboxUnavailableException.class)
                    .hasMessageContaining("https://127.0.0.1:" + port)
                    .satisfies(e -> assertThat(((SandboxUnavailableException) e).isRetryable()).isTrue());
            assertThatThrownBy(() -> d.createWorkspace("s", dev.sandboxkit.SandboxSpec.builder().image("i").build()))
                    .isInstanceOf(SandboxUnavailableException.class).hasMessageContaining("127.0.0.1:" + port);
            assertThatThrownBy(() -> d.list(Map.of())).isInstanceOf(SandboxUnavailableException.class);
        }
    }
}
