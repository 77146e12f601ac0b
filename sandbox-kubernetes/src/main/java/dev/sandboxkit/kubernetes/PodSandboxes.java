package dev.sandboxkit.kubernetes;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.SandboxDescriptor;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.spi.TerminalConnection;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.KubernetesClientTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The driver's compute half: the pods (and their network policies) that run the sandboxes. Creates, lists and
 * removes pods, and opens execs, terminals and port forwards into them. The storage half is {@link ClaimWorkspaces}.
 */
final class PodSandboxes {
    /** How long {@link #remove} waits, beyond the grace period, for the kubelet to confirm the kill. */
    static final Duration REMOVE_WAIT = Duration.ofSeconds(30);
    private static final Logger log = LoggerFactory.getLogger(PodSandboxes.class);
    private static final AtomicInteger THREADS = new AtomicInteger();

    private final KubernetesClient client;
    private final Settings settings;
    private final ExecutorService stdinWriters;
    private final PodExec execs;

    PodSandboxes(KubernetesClient client, Settings settings, Supplier<String> execIds) {
        this.client = client;
        this.settings = settings;
        this.stdinWriters = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "sandboxkit-k8s-stdin-" + THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.execs = new PodExec(client, settings.namespace(), stdinWriters, execIds);
    }

    /**
     * Creates the policy (first, so that the pod is never reachable without it) and the pod, then waits
     * until the container runs. On any failure both are deleted again.
     */
    String create(CreateRequest request) {
        SandboxSpec spec = request.spec();
        WorkspaceLocation workspace = WorkspaceLocation.parse(request.workspace());
        String ns = settings.namespace();
        if (!workspace.isEmptyDir() && !ns.equals(workspace.namespace())) {
            throw new SandboxConfigurationException("workspace " + workspace + " is in namespace "
                    + workspace.namespace() + ", but this driver runs pods in " + ns + "; a pod can only mount a "
                    + "claim of its own namespace");
        }
        String podName = Names.podName(request.sessionId());
        Pod pod = Manifests.pod(settings, podName, request, workspace);
        boolean policy = Manifests.wantsNetworkPolicy(settings, spec);
        try {
            if (policy) {
                client.network().v1().networkPolicies().inNamespace(ns)
                        .resource(Manifests.denyAll(settings, Names.networkPolicyName(podName), request)).create();
            }
            client.pods().inNamespace(ns).resource(pod).create();
        } catch (KubernetesClientException e) {
            deleteQuietly(podName);
            throw Errors.createRefused(e, "pod " + ns + "/" + podName, masterUrl());
        }
        try {
            PodStartup.awaitRunning(client, ns, podName, workspace.claim(), spec.image(), settings.readinessTimeout());
        } catch (RuntimeException e) {
            deleteQuietly(podName);
            if (e instanceof KubernetesClientException k) {
                throw Errors.translate(k, "watch pods/" + podName, masterUrl(),
                        new SandboxAcquireException("pod " + ns + "/" + podName + " failed to start: "
                                + Errors.message(k), k));
            }
            throw e;
        }
        log.debug("Pod {}/{} running for session {}", ns, podName, request.sessionId());
        return podName;
    }

    /** Runs the command through the exec API. */
    ExecResult exec(String sandboxId, ExecRequest request) {
        Objects.requireNonNull(sandboxId, "sandboxId");
        Objects.requireNonNull(request, "request");
        return execs.run(sandboxId, request);
    }

    /** A port-forward stream through the API server. */
    dev.sandboxkit.spi.PortConnection connect(String sandboxId, int port) {
        Objects.requireNonNull(sandboxId, "sandboxId");
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException("port must be 1-65535, got: " + port);
        }
        return PodPortConnection.open(client, settings.namespace(), sandboxId, port);
    }

    /** Opens the command on a terminal. */
    TerminalConnection openTerminal(String sandboxId, ExecRequest request) {
        Objects.requireNonNull(sandboxId, "sandboxId");
        Objects.requireNonNull(request, "request");
        return execs.terminal(sandboxId, request);
    }

    /**
     * Deletes the pod (with the short grace period) and its policy, keeps the claim, and waits until the
     * kubelet has confirmed the kill, so a resumed pod does not meet the old one on the claim. Idempotent.
     */
    void remove(String sandboxId) {
        String ns = settings.namespace();
        try {
            client.pods().inNamespace(ns).withName(sandboxId).withGracePeriod(settings.graceSeconds()).delete();
            client.network().v1().networkPolicies().inNamespace(ns).withName(Names.networkPolicyName(sandboxId)).delete();
        } catch (KubernetesClientException e) {
            throw Errors.translate(e, "delete pods/" + sandboxId, masterUrl(),
                    new SandboxException("could not delete pod " + ns + "/" + sandboxId + ": " + Errors.message(e), e));
        }
        Duration wait = Duration.ofSeconds(settings.graceSeconds()).plus(REMOVE_WAIT);
        try {
            client.pods().inNamespace(ns).withName(sandboxId).waitUntilCondition(Objects::isNull, wait.toMillis(),
                    TimeUnit.MILLISECONDS);
        } catch (KubernetesClientTimeoutException e) {
            log.warn("Pod {}/{} is still terminating {} s after its deletion; continuing", ns, sandboxId,
                    wait.toSeconds());
        } catch (KubernetesClientException e) {
            log.debug("Could not watch the deletion of pod {}/{}: {}", ns, sandboxId, e.toString());
        }
    }

    /**
     * Pods with all the given labels (and {@value SandboxLabels#MANAGED}). A session label in the selector
     * is sanitised for the query; the result carries the exact session id from the annotation.
     */
    List<SandboxDescriptor> list(Map<String, String> labels) {
        Map<String, String> selector = Metadata.selector(labels);
        String exact = labels.get(SandboxLabels.SESSION);
        List<Pod> pods;
        try {
            pods = client.pods().inNamespace(settings.namespace()).withLabels(selector).list().getItems();
        } catch (KubernetesClientException e) {
            throw Errors.translate(e, "list pods", masterUrl(),
                    new SandboxException("could not list pods: " + Errors.message(e), e));
        }
        List<SandboxDescriptor> out = new ArrayList<>(pods.size());
        for (Pod pod : pods) {
            Map<String, String> podLabels = new HashMap<>(pod.getMetadata().getLabels() == null ? Map.of()
                    : pod.getMetadata().getLabels());
            Map<String, String> annotations = pod.getMetadata().getAnnotations() == null ? Map.of()
                    : pod.getMetadata().getAnnotations();
            String session = annotations.get(SandboxLabels.SESSION);
            if (exact != null && !exact.equals(session)) {
                continue; // another id that sanitises to the same label value
            }
            if (session != null) {
                podLabels.put(SandboxLabels.SESSION, session);
            }
            out.add(new SandboxDescriptor(pod.getMetadata().getName(), podLabels,
                    Metadata.createdAt(pod.getMetadata().getCreationTimestamp()), PodStartup.isRunning(pod)));
        }
        return out;
    }

    /** Stops the stdin writer threads. */
    void close() {
        stdinWriters.shutdownNow();
    }

    private void deleteQuietly(String podName) {
        String ns = settings.namespace();
        try {
            client.pods().inNamespace(ns).withName(podName).withGracePeriod(settings.graceSeconds()).delete();
        } catch (KubernetesClientException e) {
            log.warn("Could not delete half-created pod {}/{}: {}", ns, podName, e.toString());
        }
        try {
            client.network().v1().networkPolicies().inNamespace(ns).withName(Names.networkPolicyName(podName)).delete();
        } catch (KubernetesClientException e) {
            log.warn("Could not delete the network policy of pod {}/{}: {}", ns, podName, e.toString());
        }
    }

    private String masterUrl() {
        return String.valueOf(client.getMasterUrl());
    }
}
