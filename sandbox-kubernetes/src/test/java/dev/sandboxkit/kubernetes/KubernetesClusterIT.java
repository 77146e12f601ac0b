package dev.sandboxkit.kubernetes;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.SandboxLabels;
import io.fabric8.kubernetes.client.utils.Serialization;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What only a real cluster can show: the hardened pod as the kernel sees it, the kubelet's failure
 * reasons, a pod deleted under an exec. Runs with {@code -Pkubernetes-it}; see {@link ClusterSupport}.
 */
class KubernetesClusterIT {
    private final String owner = "it-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<String> workspaces = new ArrayList<>();
    private KubernetesSandboxDriver driver;

    @BeforeAll
    static void clusterMustBeReachable() {
        ClusterSupport.requireCluster();
    }

    @BeforeEach
    void open() {
        driver = ClusterSupport.driver(owner);
    }

    @AfterEach
    void cleanUp() {
        driver.list(Map.of(SandboxLabels.OWNER, owner)).forEach(d -> driver.remove(d.id()));
        workspaces.forEach(driver::deleteWorkspace);
        driver.close();
    }

    private String start(String session, SandboxSpec spec) {
        String ws = driver.createWorkspace(session, spec);
        workspaces.add(ws);
        return driver.create(new CreateRequest(session, spec, ws, Map.of(SandboxLabels.MANAGED, "true",
                SandboxLabels.SESSION, session, SandboxLabels.OWNER, owner)));
    }

    private ExecResult sh(String pod, String script) {
        return driver.exec(pod, ExecRequest.shell(script).withTimeout(Duration.ofSeconds(30)));
    }

    @Test
    void theKernelSeesTheHardenedDefaults() {
        String pod = start(owner + ":hardened", ClusterSupport.spec().build());

        assertThat(sh(pod, "id -u; id -g").stdout()).isEqualTo("10001\n10001\n");
        assertThat(sh(pod, "grep -E '^(CapEff|NoNewPrivs)' /proc/self/status").stdout())
                .contains("CapEff:\t0000000000000000").containsPattern("NoNewPrivs:\\s+1");
        assertThat(sh(pod, "grep -E '^Seccomp:' /proc/self/status").stdout()).containsPattern("Seccomp:\\s+2");
        assertThat(sh(pod, "pwd; touch /workspace/w && touch /tmp/t && echo ok").stdout()).isEqualTo("/workspace\nok\n");
        assertThat(sh(pod, "ps").stdout()).contains("sleep infinity");
        assertThat(sh(pod, "test -e /var/run/secrets/kubernetes.io/serviceaccount/token; echo $?").stdout()).isEqualTo("1\n");
    }

    @Test
    void perExecEnvNeverReachesThePodSpec() {
        String pod = start(owner + ":env", ClusterSupport.spec().build());

        ExecResult r = driver.exec(pod, ExecRequest.shell("echo \"$SECRET\"").withEnv("SECRET", "it-s3cr3t"));

        assertThat(r.stdout()).isEqualTo("it-s3cr3t\n");
        String yaml = Serialization.asYaml(driver.client().pods().inNamespace(driver.namespace()).withName(pod).get());
        assertThat(yaml).doesNotContain("it-s3cr3t");
        assertThat(sh(pod, "echo \"${SECRET:-unset}\"").stdout()).isEqualTo("unset\n");
    }

    @Test
    void anImageThatDoesNotExistIsNamedAndThePodDeleted() {
        String image = "registry.invalid/sandboxkit/does-not-exist:" + UUID.randomUUID().toString().substring(0, 8);

        assertThatThrownBy(() -> start(owner + ":pull", ClusterSupport.spec().image(image)
                .pullPolicy(dev.sandboxkit.PullPolicy.ALWAYS).build()))
                .isInstanceOf(SandboxAcquireException.class).hasMessageContaining(image);
        assertThat(driver.list(Map.of(SandboxLabels.OWNER, owner))).isEmpty();
    }

    @Test
    void aPodNoNodeCanHoldIsUnschedulable() {
        assertThatThrownBy(() -> start(owner + ":huge", ClusterSupport.spec().memoryBytes(1L << 50).build()))
                .isInstanceOf(SandboxAcquireException.class).hasMessageContaining("cannot be scheduled");
        assertThat(driver.list(Map.of(SandboxLabels.OWNER, owner))).isEmpty();
    }

    @Test
    void deletingThePodUnderAnExecGivesKilled() throws Exception {
        String pod = start(owner + ":killed", ClusterSupport.spec().build());
        CompletableFuture<ExecResult> running = CompletableFuture.supplyAsync(() ->
                driver.exec(pod, ExecRequest.shell("echo started; sleep 120").withTimeout(Duration.ofSeconds(90))));
        Thread.sleep(2000);

        driver.remove(pod);

        ExecResult r = running.get();
        assertThat(r.termination()).isEqualTo(ExecResult.Termination.KILLED);
        assertThat(r.stdout()).isEqualTo("started\n");
    }

    @Test
    void aRemovedPodIsResumedOnTheSameClaim() {
        String session = owner + ":resume";
        String first = start(session, ClusterSupport.spec().build());
        assertThat(sh(first, "echo kept > /workspace/f && echo ok").stdout()).isEqualTo("ok\n");

        driver.remove(first);
        String second = driver.create(new CreateRequest(session, ClusterSupport.spec().build(), workspaces.get(0),
                Map.of(SandboxLabels.MANAGED, "true", SandboxLabels.SESSION, session, SandboxLabels.OWNER, owner)));

        assertThat(sh(second, "cat /workspace/f").stdout()).isEqualTo("kept\n");
    }
}
