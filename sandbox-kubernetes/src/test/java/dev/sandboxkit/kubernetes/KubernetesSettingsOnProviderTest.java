package dev.sandboxkit.kubernetes;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.DriverContext;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The Kubernetes driver's settings through its provider, as every entry point hands them over: the one duration and
 * size syntax, failures that name the key as the user set it, and an unknown {@code kubernetes.*} key refused with
 * the nearest one; and settings that reach the pods the driver creates on fabric8's mock API server.
 */
@EnableKubernetesMockClient(crud = true)
class KubernetesSettingsOnProviderTest {
    static KubernetesMockServer server;
    static KubernetesClient client;

    @TempDir
    Path dir;

    private KubernetesSandboxDriver create(Map<String, String> properties) {
        return (KubernetesSandboxDriver) new KubernetesDriverProvider()
                .create(new DriverContext("m-1", dir, Clock.systemUTC(), properties));
    }

    @Test
    void aMistypedKeyIsRefusedWithTheKeyMeant() {
        assertThatThrownBy(() -> create(Map.of("kubernetes.namspace", "agents")).close())
                .isInstanceOf(SandboxConfigurationException.class)
                .hasMessage("driverProperty(\"kubernetes.namspace\"): no such setting; "
                        + "did you mean driverProperty(\"kubernetes.namespace\")?");
    }

    @Test
    void durationsAndSizesTakeTheOneSyntax() {
        try (KubernetesSandboxDriver d = create(Map.of("kubernetes.readinessTimeout", "1h30m",
                "kubernetes.terminationGracePeriod", "1500ms", "kubernetes.workspaceSize", "512MB",
                "kubernetes.namespace", "agents"))) {
            assertThat(d.settings().readinessTimeout()).isEqualTo(Duration.ofMinutes(90));
            assertThat(d.settings().graceSeconds()).isEqualTo(2);
            assertThat(d.settings().workspaceSize()).isEqualTo("512Mi");
        }
        try (KubernetesSandboxDriver d = create(Map.of("kubernetes.workspaceSize", "10Gi",
                "kubernetes.namespace", "agents"))) {
            assertThat(d.settings().workspaceSize()).isEqualTo("10Gi");
        }
    }

    @Test
    void anInvalidValueIsNamedAsTheUserSetIt() {
        Map<String, String> bad = Map.of("kubernetes.runAsUser", "0", "kubernetes.readinessTimeout", "0s",
                "kubernetes.workspaceSize", "1.5Gi", "kubernetes.networkPolicy", "maybe",
                "kubernetes.resourceRequestRatio", "2", "kubernetes.namespace", "Not_A_Namespace");
        bad.forEach((key, value) -> assertThatThrownBy(() -> create(Map.of(key, value)).close()).as(key)
                .isInstanceOf(SandboxConfigurationException.class)
                .hasMessageStartingWith("driverProperty(\"" + key + "\"): "));
        // Through another entry point, its own name for the key.
        assertThatThrownBy(() -> new KubernetesDriverProvider().create(new DriverContext("m-1", dir,
                Clock.systemUTC(), Map.of("kubernetes.readOnlyRootFilesystem", "yes"),
                k -> "sandboxkit.driver-properties." + k)))
                .hasMessage("sandboxkit.driver-properties.kubernetes.readOnlyRootFilesystem: expected true or false, "
                        + "got 'yes'");
    }

    @Test
    void settingsReachThePodsAndClaimsTheDriverCreates() throws IOException {
        // The provider configures its own client, as in production: from a kubeconfig naming the mock server.
        Path kubeconfig = Files.writeString(dir.resolve("config"), """
                apiVersion: v1
                kind: Config
                clusters:
                - name: mock
                  cluster:
                    server: %s
                    insecure-skip-tls-verify: true
                contexts:
                - name: mock
                  context:
                    cluster: mock
                    user: u
                current-context: mock
                users:
                - name: u
                  user:
                    token: t
                """.formatted(client.getMasterUrl()));
        String previous = System.getProperty("kubeconfig");
        System.setProperty("kubeconfig", kubeconfig.toString());
        try (FakeKubelet kubelet = FakeKubelet.always(client, "settings", FakeKubelet.Mode.RUN);
             KubernetesSandboxDriver d = create(Map.of("kubernetes.namespace", "settings",
                     "kubernetes.workspaceSize", "512MB", "kubernetes.terminationGracePeriod", "1500ms",
                     "kubernetes.readinessTimeout", "1m", "kubernetes.runAsUser", "2000",
                     "kubernetes.runtimeClassName", "gvisor", "kubernetes.imagePullSecrets", "regcred"))) {
            SandboxSpec spec = SandboxSpec.builder().image("registry.example/sandbox:1").build();
            String ws = d.createWorkspace("s1", spec);
            String id = d.create(new CreateRequest("s1", spec, ws, KubernetesDriverCrudTest.labels("s1")));

            Pod pod = client.pods().inNamespace("settings").withName(id).get();
            assertThat(pod.getSpec().getRuntimeClassName()).isEqualTo("gvisor");
            assertThat(pod.getSpec().getTerminationGracePeriodSeconds()).isEqualTo(2L);
            assertThat(pod.getSpec().getSecurityContext().getRunAsUser()).isEqualTo(2000L);
            assertThat(pod.getSpec().getImagePullSecrets()).extracting(r -> r.getName()).containsExactly("regcred");
            PersistentVolumeClaim claim = client.persistentVolumeClaims().inNamespace("settings")
                    .withName(Names.claimName("s1")).get();
            assertThat(claim.getSpec().getResources().getRequests().get("storage").toString()).isEqualTo("512Mi");
        } finally {
            if (previous == null) {
                System.clearProperty("kubeconfig");
            } else {
                System.setProperty("kubeconfig", previous);
            }
        }
    }
}
