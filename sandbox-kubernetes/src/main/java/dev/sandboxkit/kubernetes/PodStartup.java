package dev.sandboxkit.kubernetes;

import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxTimeoutException;
import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStateWaiting;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.KubernetesClientTimeoutException;

import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Waits for a new pod's container to run, and names the reason when it will not: an image that cannot
 * be pulled, a pod that cannot be scheduled, a workspace claim that is not bound, a container that
 * exited, or plain slowness.
 */
final class PodStartup {
    /** Waiting reasons that mean the image will not arrive. */
    static final Set<String> IMAGE_FAILURES = Set.of("ErrImagePull", "ImagePullBackOff", "InvalidImageName",
            "ErrImageNeverPull");
    /** Waiting reasons that mean the container cannot be created from this spec. */
    static final Set<String> CREATE_FAILURES = Set.of("CreateContainerConfigError", "CreateContainerError",
            "RunContainerError", "CrashLoopBackOff");
    /** The scheduler's message while a claim with immediate binding is still being provisioned. */
    private static final String UNBOUND_CLAIM = "unbound immediate persistentvolumeclaims";

    private PodStartup() {
    }

    /**
     * Blocks until the pod's main container runs.
     *
     * @throws SandboxAcquireException when it never will (the caller deletes the pod)
     * @throws SandboxTimeoutException when it did not within the timeout
     */
    static Pod awaitRunning(KubernetesClient client, String namespace, String podName, String claim, String image,
                            Duration timeout) {
        AtomicReference<Pod> last = new AtomicReference<>();
        Pod pod;
        try {
            pod = client.pods().inNamespace(namespace).withName(podName).waitUntilCondition(p -> {
                last.set(p);
                return p == null || isRunning(p) || failure(p, claim, image).isPresent();
            }, Math.max(1, timeout.toMillis()), TimeUnit.MILLISECONDS);
        } catch (KubernetesClientTimeoutException e) {
            throw timedOut(client, namespace, podName, claim, image, timeout, last.get(), e);
        }
        if (pod == null) {
            throw new SandboxAcquireException("pod " + namespace + "/" + podName
                    + " was deleted while it was starting", null, true);
        }
        Optional<SandboxException> failed = failure(pod, claim, image);
        if (failed.isPresent()) {
            throw failed.get();
        }
        return pod;
    }

    /** The container is running (exec works from then on; no readiness probe is configured). */
    static boolean isRunning(Pod pod) {
        ContainerStatus main = mainStatus(pod);
        return pod.getMetadata().getDeletionTimestamp() == null && main != null && main.getState() != null
                && main.getState().getRunning() != null;
    }

    /** Whether a pod is gone for exec purposes: being deleted, finished, or its container not running. */
    static boolean isDeadOrDying(Pod pod) {
        if (pod == null || pod.getMetadata().getDeletionTimestamp() != null) {
            return true;
        }
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        if ("Failed".equals(phase) || "Succeeded".equals(phase)) {
            return true;
        }
        ContainerStatus main = mainStatus(pod);
        return main != null && main.getState() != null && main.getState().getTerminated() != null;
    }

    /** A condition that will not resolve by waiting, as the exception to throw. */
    static Optional<SandboxException> failure(Pod pod, String claim, String image) {
        if (pod == null || pod.getStatus() == null) {
            return Optional.empty();
        }
        String name = pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
        ContainerStatus main = mainStatus(pod);
        if (main != null && main.getState() != null) {
            ContainerStateWaiting waiting = main.getState().getWaiting();
            if (waiting != null && IMAGE_FAILURES.contains(waiting.getReason())) {
                return Optional.of(new SandboxAcquireException("image " + image + " cannot be pulled for pod " + name
                        + ": " + waiting.getReason() + detail(waiting.getMessage())));
            }
            if (waiting != null && CREATE_FAILURES.contains(waiting.getReason())) {
                return Optional.of(new SandboxAcquireException("container of pod " + name + " (image " + image
                        + ") cannot be created: " + waiting.getReason() + detail(waiting.getMessage())));
            }
            ContainerStateTerminated done = main.getState().getTerminated();
            if (done != null) {
                return Optional.of(exited(name, image, done));
            }
        }
        String phase = pod.getStatus().getPhase();
        if ("Failed".equals(phase) || "Succeeded".equals(phase)) {
            return Optional.of(new SandboxAcquireException("pod " + name + " (image " + image + ") ended in phase "
                    + phase + detail(pod.getStatus().getReason()) + detail(pod.getStatus().getMessage())));
        }
        PodCondition scheduled = condition(pod, "PodScheduled");
        if (scheduled != null && "False".equals(scheduled.getStatus()) && "Unschedulable".equals(scheduled.getReason())) {
            String message = String.valueOf(scheduled.getMessage());
            // A claim with immediate binding is unbound for a moment after creation: keep waiting.
            if (!message.toLowerCase(Locale.ROOT).contains(UNBOUND_CLAIM)) {
                String volume = claim != null && message.toLowerCase(Locale.ROOT).contains("volume")
                        ? " (workspace claim " + pod.getMetadata().getNamespace() + "/" + claim + ")" : "";
                return Optional.of(new SandboxAcquireException("pod " + name + " cannot be scheduled" + volume + ": "
                        + message, null, true));
            }
        }
        return Optional.empty();
    }

    private static SandboxException exited(String name, String image, ContainerStateTerminated done) {
        return new SandboxAcquireException("container of pod " + name + " exited while starting (exit code "
                + done.getExitCode() + detail(done.getReason()) + detail(done.getMessage())
                + "); the image " + image + " must provide `sleep` on its PATH");
    }

    private static SandboxException timedOut(KubernetesClient client, String namespace, String podName, String claim,
                                             String image, Duration timeout, Pod lastSeen, Exception cause) {
        String name = namespace + "/" + podName;
        Pod pod = lastSeen;
        try {
            pod = client.pods().inNamespace(namespace).withName(podName).get();
        } catch (KubernetesClientException ignored) {
            // keep what the watch last saw
        }
        if (pod != null) {
            Optional<SandboxException> failed = failure(pod, claim, image);
            if (failed.isPresent()) {
                return failed.get();
            }
        }
        if (claim != null) {
            PersistentVolumeClaim pvc = null;
            try {
                pvc = client.persistentVolumeClaims().inNamespace(namespace).withName(claim).get();
            } catch (KubernetesClientException ignored) {
                // fall through to the generic message
            }
            if (pvc == null) {
                return new SandboxAcquireException("workspace claim " + namespace + "/" + claim
                        + " does not exist (deleted?); pod " + name + " cannot start");
            }
            String phase = pvc.getStatus() == null ? null : pvc.getStatus().getPhase();
            if (!"Bound".equals(phase)) {
                String storageClass = pvc.getSpec() == null ? null : pvc.getSpec().getStorageClassName();
                return new SandboxTimeoutException("workspace claim " + namespace + "/" + claim + " is not bound after "
                        + timeout.toSeconds() + " s (phase " + phase + ", storage class "
                        + (storageClass == null ? "cluster default" : storageClass)
                        + "); check the storage class and its provisioner", cause);
            }
        }
        return new SandboxTimeoutException("pod " + name + " (image " + image + ") did not start within "
                + timeout.toSeconds() + " s: " + describe(pod), cause);
    }

    /** What the pod was doing, for timeout messages. */
    static String describe(Pod pod) {
        if (pod == null) {
            return "no status";
        }
        if (pod.getStatus() == null) {
            return "no status yet (is a kubelet running?)";
        }
        StringBuilder sb = new StringBuilder("phase ").append(pod.getStatus().getPhase());
        PodCondition scheduled = condition(pod, "PodScheduled");
        if (scheduled != null && !"True".equals(scheduled.getStatus())) {
            sb.append(", not scheduled").append(detail(scheduled.getReason())).append(detail(scheduled.getMessage()));
        }
        ContainerStatus main = mainStatus(pod);
        if (main != null && main.getState() != null && main.getState().getWaiting() != null) {
            ContainerStateWaiting w = main.getState().getWaiting();
            sb.append(", container waiting").append(detail(w.getReason())).append(detail(w.getMessage()));
        }
        return sb.toString();
    }

    static ContainerStatus mainStatus(Pod pod) {
        if (pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null) {
            return null;
        }
        return pod.getStatus().getContainerStatuses().stream()
                .filter(c -> Manifests.CONTAINER.equals(c.getName())).findFirst().orElse(null);
    }

    private static PodCondition condition(Pod pod, String type) {
        if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
            return null;
        }
        return pod.getStatus().getConditions().stream().filter(c -> type.equals(c.getType())).findFirst().orElse(null);
    }

    private static String detail(String s) {
        return s == null || s.isBlank() ? "" : ": " + s;
    }
}
