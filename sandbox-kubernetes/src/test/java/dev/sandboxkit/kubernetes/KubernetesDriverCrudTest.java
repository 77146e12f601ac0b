package dev.sandboxkit.kubernetes;

import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxTimeoutException;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.ComputeCapability;
import dev.sandboxkit.spi.DriverCapability;
import dev.sandboxkit.spi.SandboxDescriptor;
import dev.sandboxkit.spi.SandboxLabels;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The driver against fabric8's mock API server in CRUD mode. The mock has no scheduler and no kubelet:
 * {@link FakeKubelet} writes the pod status a node would report. Nothing here runs a process.
 */
@EnableKubernetesMockClient(crud = true)
class KubernetesDriverCrudTest {
    private static final java.util.concurrent.atomic.AtomicInteger NAMESPACES = new java.util.concurrent.atomic.AtomicInteger();
    static final String OWNER = "m-test";
    static final String IMAGE = "registry.example/sandbox:1";

    static KubernetesMockServer server;
    static KubernetesClient client;
    /** One mock server per class (it takes a second to start); one namespace per test keeps them apart. */
    private final String NS = "agents-" + NAMESPACES.incrementAndGet();
    private KubernetesSandboxDriver driver;
    private FakeKubelet kubelet;

    @AfterEach
    void tearDown() {
        if (kubelet != null) {
            kubelet.close();
        }
        if (driver != null) {
            driver.close();
        }
    }

    private KubernetesSandboxDriver driver(UnaryOperator<KubernetesSandboxDriver.Builder> options) {
        driver = options.apply(KubernetesSandboxDriver.builder().client(client).namespace(NS)).build();
        return driver;
    }

    private KubernetesSandboxDriver driver() {
        return driver(b -> b.readinessTimeout(Duration.ofSeconds(10)));
    }

    private void kubelet(FakeKubelet.Mode mode) {
        kubelet = FakeKubelet.always(client, NS, mode);
    }

    static SandboxSpec.Builder spec() {
        return SandboxSpec.builder().image(IMAGE);
    }

    static Map<String, String> labels(String session) {
        return Map.of(SandboxLabels.MANAGED, "true", SandboxLabels.SESSION, session, SandboxLabels.OWNER, OWNER);
    }

    private String start(String session, SandboxSpec spec) {
        String ws = driver.createWorkspace(session, spec);
        return driver.create(new CreateRequest(session, spec, ws, labels(session)));
    }

    private Pod pod(String name) {
        return client.pods().inNamespace(NS).withName(name).get();
    }

    private List<NetworkPolicy> policies() {
        return client.network().v1().networkPolicies().inNamespace(NS).list().getItems();
    }

    // ------------------------------------------------------------------ pod spec

    @Test
    void podHasTheHardenedSpecFieldByField() {
        driver();
        kubelet(FakeKubelet.Mode.RUN);
        SandboxSpec spec = spec().memoryBytes(256L * 1024 * 1024).cpus(1.5).tmpSizeBytes(32L * 1024 * 1024)
                .addCapability("NET_BIND_SERVICE").label("team", "research").pullPolicy(PullPolicy.ALWAYS).build();

        String id = start("s1", spec);
        Pod pod = pod(id);

        assertThat(pod).isNotNull();
        assertThat(Names.isDnsLabel(id)).as("pod name %s is a DNS-1123 label", id).isTrue();
        assertThat(id).startsWith("sbx-s1-");
        assertThat(pod.getMetadata().getLabels())
                .containsEntry(SandboxLabels.MANAGED, "true")
                .containsEntry(SandboxLabels.SESSION, "s1")
                .containsEntry(SandboxLabels.OWNER, OWNER)
                .containsEntry("team", "research");
        assertThat(pod.getMetadata().getAnnotations()).containsEntry(SandboxLabels.SESSION, "s1")
                .containsEntry(Manifests.WORKSPACE_ANNOTATION, "pvc:" + NS + "/" + Names.claimName("s1"));

        var podSpec = pod.getSpec();
        assertThat(podSpec.getRestartPolicy()).isEqualTo("Never");
        assertThat(podSpec.getTerminationGracePeriodSeconds()).isEqualTo(1L);
        assertThat(podSpec.getAutomountServiceAccountToken()).isFalse();
        assertThat(podSpec.getEnableServiceLinks()).isFalse();
        assertThat(podSpec.getHostNetwork()).isFalse();
        assertThat(podSpec.getHostPID()).isFalse();
        assertThat(podSpec.getHostIPC()).isFalse();
        assertThat(podSpec.getShareProcessNamespace()).as("init: pause is PID 1 and reaps zombies").isTrue();
        assertThat(podSpec.getRuntimeClassName()).isNull();
        assertThat(podSpec.getContainers()).hasSize(1);

        PodSecurityContext psc = podSpec.getSecurityContext();
        assertThat(psc.getRunAsNonRoot()).isTrue();
        assertThat(psc.getRunAsUser()).isEqualTo(10001L);
        assertThat(psc.getRunAsGroup()).isEqualTo(10001L);
        assertThat(psc.getFsGroup()).isEqualTo(10001L);
        assertThat(psc.getFsGroupChangePolicy()).isEqualTo("OnRootMismatch");
        assertThat(psc.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");

        Container main = podSpec.getContainers().get(0);
        assertThat(main.getName()).isEqualTo("main");
        assertThat(main.getImage()).isEqualTo(IMAGE);
        assertThat(main.getImagePullPolicy()).isEqualTo("Always");
        assertThat(main.getCommand()).containsExactly("sleep", "infinity");
        assertThat(main.getArgs()).isNullOrEmpty();
        assertThat(main.getWorkingDir()).isEqualTo("/workspace");
        assertThat(main.getEnv()).as("spec env is applied per exec, never stored in the pod").isNullOrEmpty();

        SecurityContext sc = main.getSecurityContext();
        assertThat(sc.getRunAsNonRoot()).isTrue();
        assertThat(sc.getRunAsUser()).isEqualTo(10001L);
        assertThat(sc.getRunAsGroup()).isEqualTo(10001L);
        assertThat(sc.getAllowPrivilegeEscalation()).isFalse();
        assertThat(sc.getPrivileged()).isFalse();
        assertThat(sc.getReadOnlyRootFilesystem()).isFalse();
        assertThat(sc.getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(sc.getCapabilities().getAdd()).containsExactly("NET_BIND_SERVICE");
        assertThat(sc.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");

        assertThat(main.getResources().getLimits()).containsEntry("memory", new Quantity("268435456"))
                .containsEntry("cpu", new Quantity("1500m"));
        assertThat(main.getResources().getRequests()).containsEntry("memory", new Quantity("268435456"))
                .containsEntry("cpu", new Quantity("1500m"));

        assertThat(main.getVolumeMounts()).extracting(m -> m.getName() + "=" + m.getMountPath())
                .containsExactly("workspace=/workspace", "tmp=/tmp");
        Volume workspace = podSpec.getVolumes().get(0);
        assertThat(workspace.getName()).isEqualTo("workspace");
        assertThat(workspace.getPersistentVolumeClaim().getClaimName()).isEqualTo(Names.claimName("s1"));
        assertThat(workspace.getPersistentVolumeClaim().getReadOnly()).isFalse();
        Volume tmp = podSpec.getVolumes().get(1);
        assertThat(tmp.getName()).isEqualTo("tmp");
        assertThat(tmp.getEmptyDir().getMedium()).isEqualTo("Memory");
        assertThat(tmp.getEmptyDir().getSizeLimit()).isEqualTo(new Quantity("33554432"));
    }

    @Test
    void theSpecsRuntimeBecomesTheRuntimeClassAndWinsOverTheDriversDefault() {
        driver(b -> b.runtimeClassName("gvisor"));
        kubelet(FakeKubelet.Mode.RUN);
        assertThat(pod(start("rt-1", spec().runtime("kata").build())).getSpec().getRuntimeClassName()).isEqualTo("kata");
        assertThat(pod(start("rt-2", spec().build())).getSpec().getRuntimeClassName()).isEqualTo("gvisor");
    }

    @Test
    void specUserReadOnlyRootAndNoInitAreHonoured() {
        driver(b -> b.runAsUser(2000).runAsGroup(3000).fsGroup(4000).runtimeClassName("gvisor")
                .imagePullSecrets("regcred").terminationGracePeriod(Duration.ofSeconds(5)));
        kubelet(FakeKubelet.Mode.RUN);
        SandboxSpec spec = spec().user("1234:5678").readOnlyRootFilesystem(true).init(false).noNewPrivileges(false)
                .dropAllCapabilities(false).memoryBytes(0).tmpSizeBytes(0).pullPolicy(PullPolicy.NEVER).build();

        Pod pod = pod(start("s2", spec));

        var psc = pod.getSpec().getSecurityContext();
        assertThat(psc.getRunAsUser()).isEqualTo(1234L);
        assertThat(psc.getRunAsGroup()).isEqualTo(5678L);
        assertThat(psc.getFsGroup()).isEqualTo(4000L);
        SecurityContext sc = pod.getSpec().getContainers().get(0).getSecurityContext();
        assertThat(sc.getRunAsUser()).isEqualTo(1234L);
        assertThat(sc.getRunAsGroup()).isEqualTo(5678L);
        assertThat(sc.getReadOnlyRootFilesystem()).isTrue();
        assertThat(sc.getAllowPrivilegeEscalation()).isTrue();
        assertThat(sc.getCapabilities().getDrop()).isNullOrEmpty();
        assertThat(pod.getSpec().getShareProcessNamespace()).isFalse();
        assertThat(pod.getSpec().getRuntimeClassName()).isEqualTo("gvisor");
        assertThat(pod.getSpec().getImagePullSecrets()).extracting(r -> r.getName()).containsExactly("regcred");
        assertThat(pod.getSpec().getTerminationGracePeriodSeconds()).isEqualTo(5L);
        assertThat(pod.getSpec().getContainers().get(0).getImagePullPolicy()).isEqualTo("Never");
        assertThat(pod.getSpec().getContainers().get(0).getResources().getLimits()).isNullOrEmpty();
        assertThat(pod.getSpec().getVolumes()).extracting(Volume::getName).containsExactly("workspace");

        String defaultUser = start("s3", spec().user("4321").build());
        assertThat(pod(defaultUser).getSpec().getSecurityContext().getRunAsUser()).isEqualTo(4321L);
        assertThat(pod(defaultUser).getSpec().getSecurityContext().getRunAsGroup()).isEqualTo(3000L);
    }

    @Test
    void builderReadOnlyRootForcesItAndRequestRatioScalesRequests() {
        driver(b -> b.readOnlyRootFilesystem(true).resourceRequestRatio(0.25));
        kubelet(FakeKubelet.Mode.RUN);

        Pod pod = pod(start("s4", spec().memoryBytes(400_000_000L).cpus(2).build()));

        Container main = pod.getSpec().getContainers().get(0);
        assertThat(main.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(main.getResources().getLimits()).containsEntry("memory", new Quantity("400000000"))
                .containsEntry("cpu", new Quantity("2000m"));
        assertThat(main.getResources().getRequests()).containsEntry("memory", new Quantity("100000000"))
                .containsEntry("cpu", new Quantity("500m"));
    }

    @Test
    void rootUserFromTheSpecDropsRunAsNonRootInsteadOfFailingAtTheKubelet() {
        driver();
        kubelet(FakeKubelet.Mode.RUN);

        Pod pod = pod(start("root", spec().user("0:0").build()));

        assertThat(pod.getSpec().getSecurityContext().getRunAsNonRoot()).isFalse();
        assertThat(pod.getSpec().getContainers().get(0).getSecurityContext().getRunAsNonRoot()).isFalse();
        assertThat(pod.getSpec().getContainers().get(0).getSecurityContext().getRunAsUser()).isZero();
    }

    // ------------------------------------------------------------------ workspace claims

    @Test
    void createWorkspaceCreatesOneLabelledClaimIdempotently() {
        driver = KubernetesSandboxDriver.builder().client(client).namespace(NS).storageClass("fast-ssd")
                .workspaceSize("5Gi").owner(OWNER).build();

        String first = driver.createWorkspace("ws-1", spec().build());
        String second = driver.createWorkspace("ws-1", spec().build());

        assertThat(first).isEqualTo(second).isEqualTo("pvc:" + NS + "/" + Names.claimName("ws-1"));
        List<PersistentVolumeClaim> claims = client.persistentVolumeClaims().inNamespace(NS).list().getItems();
        assertThat(claims).hasSize(1);
        PersistentVolumeClaim pvc = claims.get(0);
        assertThat(pvc.getMetadata().getName()).isEqualTo(Names.claimName("ws-1"));
        assertThat(pvc.getMetadata().getLabels()).containsEntry(SandboxLabels.MANAGED, "true")
                .containsEntry(SandboxLabels.SESSION, "ws-1").containsEntry(SandboxLabels.OWNER, OWNER);
        assertThat(pvc.getMetadata().getAnnotations()).containsEntry(SandboxLabels.SESSION, "ws-1");
        assertThat(pvc.getSpec().getAccessModes()).containsExactly("ReadWriteOnce");
        assertThat(pvc.getSpec().getVolumeMode()).isEqualTo("Filesystem");
        assertThat(pvc.getSpec().getStorageClassName()).isEqualTo("fast-ssd");
        assertThat(pvc.getSpec().getResources().getRequests()).containsEntry("storage", new Quantity("5Gi"));
    }

    @Test
    void listWorkspacesGivesTheSessionClaimsWithTheirLabels() {
        driver = KubernetesSandboxDriver.builder().client(client).namespace(NS).owner(OWNER).build();
        String a = driver.createWorkspace("ws-a", spec().build());
        String b = driver.createWorkspace("Ws_B/odd", spec().build());
        driver.createWorkspace("tmp", spec().ephemeral(true).build()); // an emptyDir: no claim
        client.persistentVolumeClaims().inNamespace(NS).resource(new io.fabric8.kubernetes.api.model
                .PersistentVolumeClaimBuilder().withNewMetadata().withName("not-ours").withNamespace(NS).endMetadata()
                .build()).create();

        List<dev.sandboxkit.spi.WorkspaceDescriptor> all = driver.listWorkspaces(Map.of(SandboxLabels.MANAGED, "true"));
        assertThat(all).extracting(dev.sandboxkit.spi.WorkspaceDescriptor::location).containsExactlyInAnyOrder(a, b);
        assertThat(all).allSatisfy(w -> {
            assertThat(w.labels()).containsEntry(SandboxLabels.OWNER, OWNER).containsEntry(SandboxLabels.MANAGED, "true");
            assertThat(w.createdAt()).isAfter(java.time.Instant.now().minusSeconds(600));
        });
        assertThat(all).extracting(w -> w.labels().get(SandboxLabels.SESSION)).containsExactlyInAnyOrder("ws-a",
                "Ws_B/odd");
        assertThat(driver.listWorkspaces(Map.of(SandboxLabels.SESSION, "Ws_B/odd")))
                .extracting(dev.sandboxkit.spi.WorkspaceDescriptor::location).containsExactly(b);
        driver.deleteWorkspace(a);
        assertThat(driver.listWorkspaces(Map.of())).extracting(dev.sandboxkit.spi.WorkspaceDescriptor::location)
                .containsExactly(b);
    }

    @Test
    void reapDeletesThePodAndKeepsTheClaim_destroyDeletesBoth() {
        driver();
        kubelet(FakeKubelet.Mode.RUN);
        SandboxSpec spec = spec().build();
        String ws = driver.createWorkspace("life", spec);
        String first = driver.create(new CreateRequest("life", spec, ws, labels("life")));
        assertThat(policies()).hasSize(1);

        driver.remove(first); // reap
        assertThat(pod(first)).isNull();
        assertThat(policies()).isEmpty();
        assertThat(client.persistentVolumeClaims().inNamespace(NS).withName(Names.claimName("life")).get()).isNotNull();
        driver.remove(first); // idempotent

        String second = driver.create(new CreateRequest("life", spec, ws, labels("life"))); // resume
        assertThat(second).isNotEqualTo(first);
        assertThat(pod(second).getSpec().getVolumes().get(0).getPersistentVolumeClaim().getClaimName())
                .isEqualTo(Names.claimName("life"));

        driver.remove(second); // destroy = remove + deleteWorkspace
        driver.deleteWorkspace(ws);
        driver.deleteWorkspace(ws); // idempotent
        assertThat(pod(second)).isNull();
        assertThat(client.persistentVolumeClaims().inNamespace(NS).list().getItems()).isEmpty();
        assertThat(policies()).isEmpty();
    }

    @Test
    void ephemeralSpecUsesAnEmptyDirAndNoClaim() {
        driver(b -> b.workspaceSize("2Gi"));
        kubelet(FakeKubelet.Mode.RUN);
        SandboxSpec spec = spec().ephemeral().build();

        String ws = driver.createWorkspace("eph:1", spec);
        String id = driver.create(new CreateRequest("eph:1", spec, ws, labels("eph:1")));

        assertThat(ws).isEqualTo("emptydir:" + Names.sessionLabel("eph:1"));
        assertThat(client.persistentVolumeClaims().inNamespace(NS).list().getItems()).isEmpty();
        Volume workspace = pod(id).getSpec().getVolumes().get(0);
        assertThat(workspace.getPersistentVolumeClaim()).isNull();
        assertThat(workspace.getEmptyDir().getSizeLimit()).isEqualTo(new Quantity("2Gi"));
        driver.deleteWorkspace(ws); // nothing to delete, no error
    }

    @Test
    void aClaimInAnotherNamespaceIsAConfigurationError() {
        driver();
        SandboxSpec spec = spec().build();
        assertThatThrownBy(() -> driver.create(new CreateRequest("x", spec, "pvc:other/claim", labels("x"))))
                .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("other");
        assertThatThrownBy(() -> driver.create(new CreateRequest("x", spec, "/tmp/host/dir", labels("x"))))
                .isInstanceOf(SandboxConfigurationException.class);
        assertThat(client.pods().inNamespace(NS).list().getItems()).isEmpty();
    }

    // ------------------------------------------------------------------ labels and list

    @Test
    void sanitisedSessionLabelButExactIdInListAndAnnotation() {
        driver();
        kubelet(FakeKubelet.Mode.RUN);
        String session = "Tck:user@example.com+a=b_c.d";
        String id = start(session, spec().build());
        String other = start("plain", spec().build());

        Pod pod = pod(id);
        String label = pod.getMetadata().getLabels().get(SandboxLabels.SESSION);
        assertThat(label).isNotEqualTo(session).isEqualTo(Names.sessionLabel(session));
        assertThat(Names.isValidLabelValue(label)).isTrue();
        assertThat(pod.getMetadata().getAnnotations()).containsEntry(SandboxLabels.SESSION, session);

        List<SandboxDescriptor> found = driver.list(Map.of(SandboxLabels.SESSION, session));
        assertThat(found).singleElement().satisfies(d -> {
            assertThat(d.id()).isEqualTo(id);
            assertThat(d.sessionId()).isEqualTo(session);
            assertThat(d.owner()).isEqualTo(OWNER);
            assertThat(d.running()).isTrue();
            assertThat(d.createdAt()).isAfter(java.time.Instant.EPOCH);
        });
        assertThat(driver.list(Map.of(SandboxLabels.OWNER, OWNER))).extracting(SandboxDescriptor::sessionId)
                .containsExactlyInAnyOrder(session, "plain");
        assertThat(driver.list(Map.of(SandboxLabels.SESSION, "plain"))).extracting(SandboxDescriptor::id)
                .containsExactly(other);
        assertThat(driver.list(Map.of(SandboxLabels.OWNER, "someone-else"))).isEmpty();
    }

    @Test
    void longSessionIdIsTruncatedWithAHash() {
        driver();
        kubelet(FakeKubelet.Mode.RUN);
        String session = "L" + "x".repeat(127);
        String id = start(session, spec().build());

        String label = pod(id).getMetadata().getLabels().get(SandboxLabels.SESSION);
        assertThat(label).hasSizeLessThanOrEqualTo(63).endsWith("-" + Names.hash(session));
        assertThat(driver.list(Map.of(SandboxLabels.SESSION, session))).singleElement()
                .satisfies(d -> assertThat(d.sessionId()).isEqualTo(session));
        assertThat(Names.isDnsLabel(id)).isTrue();
        assertThat(Names.isDnsLabel(Names.claimName(session))).isTrue();
    }

    // ------------------------------------------------------------------ network policy

    @Test
    void denyAllPolicyForNetworkNoneSelectsTheSessionAndGoesWithThePod() {
        driver();
        kubelet(FakeKubelet.Mode.RUN);
        String session = "net:1";
        String id = start(session, spec().build());

        assertThat(policies()).singleElement().satisfies(np -> {
            assertThat(np.getMetadata().getName()).isEqualTo(Names.networkPolicyName(id));
            assertThat(np.getMetadata().getLabels()).containsEntry(SandboxLabels.MANAGED, "true")
                    .containsEntry(SandboxLabels.SESSION, Names.sessionLabel(session))
                    .containsEntry(SandboxLabels.OWNER, OWNER);
            assertThat(np.getMetadata().getAnnotations()).containsEntry(SandboxLabels.SESSION, session);
            assertThat(np.getSpec().getPodSelector().getMatchLabels()).containsExactlyInAnyOrderEntriesOf(
                    Map.of(SandboxLabels.MANAGED, "true", SandboxLabels.SESSION, Names.sessionLabel(session)));
            assertThat(np.getSpec().getPolicyTypes()).containsExactlyInAnyOrder("Ingress", "Egress");
            assertThat(np.getSpec().getIngress()).isNullOrEmpty();
            assertThat(np.getSpec().getEgress()).isNullOrEmpty();
        });

        driver.remove(id);
        assertThat(policies()).isEmpty();
    }

    @Test
    void noPolicyForAnotherNetworkModeOrWhenDisabled() {
        driver();
        kubelet(FakeKubelet.Mode.RUN);
        start("bridge", spec().network("bridge").build());
        assertThat(policies()).isEmpty();
        driver.close();

        driver(b -> b.networkPolicy(false));
        start("off", spec().build());
        assertThat(policies()).isEmpty();
        driver.close();

        driver(b -> b.networkPolicy(true));
        start("forced", spec().network("bridge").build());
        assertThat(policies()).hasSize(1);
    }

    // ------------------------------------------------------------------ readiness failures

    @Test
    void podThatNeverStartsTimesOutAndIsDeleted() {
        driver(b -> b.readinessTimeout(Duration.ofMillis(1500)).networkPolicy(true));
        kubelet(FakeKubelet.Mode.NEVER);
        SandboxSpec spec = spec().build();
        String ws = driver.createWorkspace("slow", spec);
        client.persistentVolumeClaims().inNamespace(NS).withName(Names.claimName("slow")).editStatus(p -> {
            p.setStatus(new io.fabric8.kubernetes.api.model.PersistentVolumeClaimStatusBuilder().withPhase("Bound").build());
            return p;
        });

        long t0 = System.nanoTime();
        assertThatThrownBy(() -> driver.create(new CreateRequest("slow", spec, ws, labels("slow"))))
                .isInstanceOf(SandboxTimeoutException.class)
                .hasMessageContaining("did not start within 1 s").hasMessageContaining(IMAGE);
        long ms = (System.nanoTime() - t0) / 1_000_000;

        assertThat(ms).as("ms until the timeout was reported").isBetween(1400L, 10_000L);
        assertThat(client.pods().inNamespace(NS).list().getItems()).as("half-created pods").isEmpty();
        assertThat(policies()).as("its network policy").isEmpty();
        assertThat(client.persistentVolumeClaims().inNamespace(NS).list().getItems()).as("the workdir is kept").hasSize(1);
    }

    @Test
    void imagePullBackOffNamesTheImageAndDeletesThePod() {
        driver(b -> b.readinessTimeout(Duration.ofSeconds(60)));
        kubelet(FakeKubelet.Mode.IMAGE_PULL_BACKOFF);

        long t0 = System.nanoTime();
        assertThatThrownBy(() -> start("pull", spec().build()))
                .isInstanceOf(SandboxAcquireException.class)
                .hasMessageContaining("image " + IMAGE + " cannot be pulled")
                .hasMessageContaining("ImagePullBackOff");
        assertThat((System.nanoTime() - t0) / 1_000_000).as("fails fast, not at the 60 s timeout").isLessThan(30_000);
        assertThat(client.pods().inNamespace(NS).list().getItems()).isEmpty();
        assertThat(policies()).isEmpty();
    }

    @Test
    void unschedulableGivesTheSchedulerMessageAndDeletesThePod() {
        driver();
        kubelet(FakeKubelet.Mode.UNSCHEDULABLE);

        assertThatThrownBy(() -> start("sched", spec().build()))
                .isInstanceOf(SandboxAcquireException.class)
                .hasMessageContaining("cannot be scheduled")
                .hasMessageContaining("3 Insufficient memory")
                .satisfies(e -> assertThat(((SandboxAcquireException) e).isRetryable()).isTrue());
        assertThat(client.pods().inNamespace(NS).list().getItems()).isEmpty();
    }

    @Test
    void unboundClaimIsWaitedForThenNamedInTheTimeout() {
        driver(b -> b.readinessTimeout(Duration.ofSeconds(1)));
        kubelet(FakeKubelet.Mode.UNBOUND_CLAIM);

        assertThatThrownBy(() -> start("unbound", spec().build()))
                .isInstanceOf(SandboxTimeoutException.class)
                .hasMessageContaining("workspace claim " + NS + "/" + Names.claimName("unbound") + " is not bound");
        assertThat(client.pods().inNamespace(NS).list().getItems()).isEmpty();
    }

    // ------------------------------------------------------------------ misc

    @Test
    void pingListsPodsAndCapabilitiesAreHonest() {
        driver().ping();
        assertThat(driver.name()).isEqualTo("kubernetes");
        assertThat(driver.computeCapabilities()).containsExactlyInAnyOrder(ComputeCapability.STDIN,
                ComputeCapability.STREAMING, ComputeCapability.KILL_PROCESS_GROUP, ComputeCapability.REAL_PROCESSES,
                ComputeCapability.PORT_FORWARD, ComputeCapability.TTY);
        assertThat(driver.workspaceCapabilities()).isEmpty();
        // The deprecated single set, derived from the two.
        assertThat(driver.capabilities()).containsExactlyInAnyOrder(DriverCapability.STDIN,
                DriverCapability.STREAMING, DriverCapability.KILL_PROCESS_GROUP, DriverCapability.REAL_PROCESSES,
                DriverCapability.PORT_FORWARD, DriverCapability.TTY);
    }

    @Test
    void namespaceDefaultsToTheClients() {
        driver = KubernetesSandboxDriver.builder().client(client).build();
        assertThat(driver.namespace()).isEqualTo(client.getNamespace()).isNotBlank();
    }
}
