package dev.sandboxkit.kubernetes;

import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.SandboxLabels;
import io.fabric8.kubernetes.api.model.CapabilitiesBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EmptyDirVolumeSourceBuilder;
import io.fabric8.kubernetes.api.model.LocalObjectReference;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.SeccompProfileBuilder;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds the Pod, PersistentVolumeClaim and NetworkPolicy of a session. Pure functions of the settings
 * and the request, so tests can check every field and dump them as YAML.
 */
final class Manifests {
    static final String CONTAINER = "main";
    static final String WORKSPACE_VOLUME = "workspace";
    static final String TMP_VOLUME = "tmp";
    static final String WORKSPACE_ANNOTATION = "dev.sandboxkit.workspace";

    private Manifests() {
    }

    /** The session's pod: PID 1 {@code sleep infinity}, hardened, workdir at /workspace. */
    static Pod pod(Settings s, String podName, CreateRequest request, WorkspaceLocation workspace) {
        SandboxSpec spec = request.spec();
        long[] ids = userAndGroup(s, spec);
        long uid = ids[0];
        long gid = ids[1];
        // A spec that explicitly asks for uid 0 gets it; runAsNonRoot would make the kubelet refuse to start it.
        boolean nonRoot = uid != 0;

        List<VolumeMount> mounts = new ArrayList<>();
        List<Volume> volumes = new ArrayList<>();
        mounts.add(new VolumeMountBuilder().withName(WORKSPACE_VOLUME).withMountPath(SandboxSpec.WORKSPACE).build());
        if (workspace.isEmptyDir()) {
            volumes.add(new VolumeBuilder().withName(WORKSPACE_VOLUME).withEmptyDir(new EmptyDirVolumeSourceBuilder()
                    .withSizeLimit(new Quantity(s.workspaceSize())).build()).build());
        } else {
            volumes.add(new VolumeBuilder().withName(WORKSPACE_VOLUME).withNewPersistentVolumeClaim()
                    .withClaimName(workspace.claim()).withReadOnly(false).endPersistentVolumeClaim().build());
        }
        if (spec.tmpSizeBytes() > 0) {
            // Memory-backed like Docker's tmpfs; it counts against the container's memory limit.
            mounts.add(new VolumeMountBuilder().withName(TMP_VOLUME).withMountPath("/tmp").build());
            volumes.add(new VolumeBuilder().withName(TMP_VOLUME).withEmptyDir(new EmptyDirVolumeSourceBuilder()
                    .withMedium("Memory").withSizeLimit(new Quantity(Long.toString(spec.tmpSizeBytes()))).build())
                    .build());
        }

        CapabilitiesBuilder caps = new CapabilitiesBuilder();
        if (spec.dropAllCapabilities()) {
            caps.withDrop("ALL");
        }
        spec.addCapabilities().stream().sorted().forEach(c -> caps.addToAdd(stripCapPrefix(c)));

        Container main = new ContainerBuilder()
                .withName(CONTAINER)
                .withImage(spec.image())
                .withImagePullPolicy(pullPolicy(spec.pullPolicy()))
                // The image's entrypoint never runs: PID 1 only keeps the sandbox alive for execs.
                .withCommand("sleep", "infinity")
                .withWorkingDir(SandboxSpec.WORKSPACE)
                .withStdin(false)
                .withTty(false)
                .withVolumeMounts(mounts)
                .withResources(resources(s, spec))
                .withSecurityContext(new SecurityContextBuilder()
                        .withRunAsNonRoot(nonRoot)
                        .withRunAsUser(uid)
                        .withRunAsGroup(gid)
                        .withAllowPrivilegeEscalation(!spec.noNewPrivileges())
                        .withPrivileged(false)
                        .withReadOnlyRootFilesystem(spec.readOnlyRootFilesystem() || s.readOnlyRootFilesystem())
                        .withCapabilities(caps.build())
                        .withSeccompProfile(new SeccompProfileBuilder().withType("RuntimeDefault").build())
                        .build())
                .build();

        PodBuilder pod = new PodBuilder()
                .withNewMetadata()
                .withName(podName)
                .withNamespace(s.namespace())
                .withLabels(podLabels(request))
                .withAnnotations(Map.of(SandboxLabels.SESSION, request.sessionId(),
                        WORKSPACE_ANNOTATION, request.workspace()))
                .endMetadata()
                .withNewSpec()
                .withRestartPolicy("Never")
                .withTerminationGracePeriodSeconds(s.graceSeconds())
                .withAutomountServiceAccountToken(false)
                .withEnableServiceLinks(false)
                .withHostNetwork(false)
                .withHostPID(false)
                .withHostIPC(false)
                // Kubernetes has no --init; with a shared process namespace the pause container is PID 1
                // and reaps zombies, which is what the spec's init asks for.
                .withShareProcessNamespace(spec.init())
                // The spec's runtime wins over the driver's default RuntimeClass.
                .withRuntimeClassName(spec.runtime() != null ? spec.runtime() : s.runtimeClassName())
                .withImagePullSecrets(s.imagePullSecrets().stream().map(LocalObjectReference::new).toList())
                .withSecurityContext(new PodSecurityContextBuilder()
                        .withRunAsNonRoot(nonRoot)
                        .withRunAsUser(uid)
                        .withRunAsGroup(gid)
                        .withFsGroup(s.fsGroup())
                        // Resuming a session with a large workdir must not re-chown every file.
                        .withFsGroupChangePolicy("OnRootMismatch")
                        .withSeccompProfile(new SeccompProfileBuilder().withType("RuntimeDefault").build())
                        .build())
                .withContainers(main)
                .withVolumes(volumes)
                .endSpec();
        return pod.build();
    }

    /** The session's durable workdir. */
    static PersistentVolumeClaim claim(Settings s, String sessionId, String claimName) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(SandboxLabels.MANAGED, "true");
        labels.put(SandboxLabels.SESSION, Names.sessionLabel(sessionId));
        if (s.owner() != null) {
            labels.put(SandboxLabels.OWNER, s.owner());
        }
        return new PersistentVolumeClaimBuilder()
                .withNewMetadata()
                .withName(claimName)
                .withNamespace(s.namespace())
                .withLabels(labels)
                .withAnnotations(Map.of(SandboxLabels.SESSION, sessionId))
                .endMetadata()
                .withNewSpec()
                .withAccessModes("ReadWriteOnce")
                .withVolumeMode("Filesystem")
                .withStorageClassName(s.storageClass())
                .withNewResources()
                .withRequests(Map.of("storage", new Quantity(s.workspaceSize())))
                .endResources()
                .endSpec()
                .build();
    }

    /** Denies all ingress and egress of the session's pods, like Docker's network mode {@code none}. */
    static NetworkPolicy denyAll(Settings s, String policyName, CreateRequest request) {
        Map<String, String> labels = podLabels(request);
        return new NetworkPolicyBuilder()
                .withNewMetadata()
                .withName(policyName)
                .withNamespace(s.namespace())
                .withLabels(sandboxkitLabels(labels))
                .withAnnotations(Map.of(SandboxLabels.SESSION, request.sessionId()))
                .endMetadata()
                .withNewSpec()
                .withNewPodSelector()
                .withMatchLabels(Map.of(SandboxLabels.MANAGED, "true",
                        SandboxLabels.SESSION, labels.get(SandboxLabels.SESSION)))
                .endPodSelector()
                // Listing both types with no rules denies all traffic in both directions.
                .withPolicyTypes("Ingress", "Egress")
                .endSpec()
                .build();
    }

    /** Whether the session gets a deny-all policy. */
    static boolean wantsNetworkPolicy(Settings s, SandboxSpec spec) {
        return s.networkPolicy() != null ? s.networkPolicy() : "none".equals(spec.network());
    }

    /** The request's labels, the session one sanitised, plus the spec's own labels. */
    static Map<String, String> podLabels(CreateRequest request) {
        Map<String, String> labels = new LinkedHashMap<>(request.spec().labels());
        labels.putAll(request.labels());
        labels.put(SandboxLabels.MANAGED, "true");
        labels.put(SandboxLabels.SESSION, Names.sessionLabel(request.sessionId()));
        return labels;
    }

    private static Map<String, String> sandboxkitLabels(Map<String, String> labels) {
        Map<String, String> out = new LinkedHashMap<>();
        labels.forEach((k, v) -> {
            if (k.startsWith(SandboxSpec.RESERVED_LABEL_PREFIX)) {
                out.put(k, v);
            }
        });
        return out;
    }

    /** uid and gid: from the spec's {@code uid[:gid]}, else the driver's defaults. */
    static long[] userAndGroup(Settings s, SandboxSpec spec) {
        if (spec.user() == null) {
            return new long[] {s.runAsUser(), s.runAsGroup()};
        }
        String[] parts = spec.user().split(":");
        long uid = Long.parseLong(parts[0]);
        long gid = parts.length > 1 ? Long.parseLong(parts[1]) : s.runAsGroup();
        return new long[] {uid, gid};
    }

    /**
     * Limits from the spec; requests are the limits times the configured ratio (1 by default, which gives
     * the Guaranteed QoS class when a CPU limit is set too).
     */
    static io.fabric8.kubernetes.api.model.ResourceRequirements resources(Settings s, SandboxSpec spec) {
        Map<String, Quantity> limits = new LinkedHashMap<>();
        Map<String, Quantity> requests = new LinkedHashMap<>();
        if (spec.memoryBytes() > 0) {
            limits.put("memory", new Quantity(Long.toString(spec.memoryBytes())));
            requests.put("memory", new Quantity(Long.toString(Math.max(1, (long) (spec.memoryBytes() * s.requestRatio())))));
        }
        if (spec.cpus() > 0) {
            long milli = Math.max(1, Math.round(spec.cpus() * 1000));
            limits.put("cpu", new Quantity(milli + "m"));
            requests.put("cpu", new Quantity(Math.max(1, (long) Math.ceil(milli * s.requestRatio())) + "m"));
        }
        return new ResourceRequirementsBuilder().withLimits(limits).withRequests(requests).build();
    }

    static String pullPolicy(PullPolicy policy) {
        return switch (policy) {
            case ALWAYS -> "Always";
            case IF_MISSING -> "IfNotPresent";
            case NEVER -> "Never";
        };
    }

    private static String stripCapPrefix(String capability) {
        String c = capability.trim().toUpperCase(java.util.Locale.ROOT);
        if (c.isEmpty()) {
            throw new SandboxConfigurationException("empty capability name in the spec");
        }
        return c.startsWith("CAP_") ? c.substring(4) : c;
    }
}
