package dev.sandboxkit.kubernetes;

import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.SandboxLabels;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.utils.Serialization;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Writes the manifests the driver generates for a default spec to {@code target/manifests/} as YAML
 * (fabric8's serialization), for the documentation, and checks they parse back unchanged.
 */
class ManifestSamplesTest {

    @Test
    void dumpPodClaimAndPolicyForTheDefaultSpec() throws IOException {
        Settings settings = new Settings("agents", "standard", "1Gi", 10001, 10001, 10001, false,
                Duration.ofSeconds(120), null, Duration.ofSeconds(1), 1.0, null, List.of(), "m-3f2a9c1b7d4e", null);
        String session = "user-42:chat";
        SandboxSpec spec = SandboxSpec.builder().image("python:3.12-slim").build();
        String claimName = Names.claimName(session);
        String workspace = WorkspaceLocation.claim("agents", claimName).toString();
        CreateRequest request = new CreateRequest(session, spec, workspace, Map.of(SandboxLabels.MANAGED, "true",
                SandboxLabels.SESSION, session, SandboxLabels.OWNER, "m-3f2a9c1b7d4e"));
        String podName = Names.podName(session);

        Pod pod = Manifests.pod(settings, podName, request, WorkspaceLocation.parse(workspace));
        PersistentVolumeClaim pvc = Manifests.claim(settings, session, claimName);
        NetworkPolicy policy = Manifests.denyAll(settings, Names.networkPolicyName(podName), request);

        Path out = Files.createDirectories(Path.of("target", "manifests"));
        Files.writeString(out.resolve("pod.yaml"), Serialization.asYaml(pod));
        Files.writeString(out.resolve("pvc.yaml"), Serialization.asYaml(pvc));
        Files.writeString(out.resolve("networkpolicy.yaml"), Serialization.asYaml(policy));

        assertThat(Serialization.unmarshal(Files.readString(out.resolve("pod.yaml")), Pod.class)).isEqualTo(pod);
        assertThat(Serialization.unmarshal(Files.readString(out.resolve("pvc.yaml")), PersistentVolumeClaim.class))
                .isEqualTo(pvc);
        assertThat(Serialization.unmarshal(Files.readString(out.resolve("networkpolicy.yaml")), NetworkPolicy.class))
                .isEqualTo(policy);
    }
}
