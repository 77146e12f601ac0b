package dev.sandboxkit.kubernetes;

import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

import java.time.Instant;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Stands in for the kubelet and the scheduler, which the mock API server does not have: gives every new
 * pod in a namespace the status a real node would report, per {@link Mode}. Only pod status is
 * simulated; no process ever runs.
 */
final class FakeKubelet implements AutoCloseable {
    enum Mode {
        /** Scheduled, image pulled, container running, Ready. */
        RUN,
        /** Scheduled, container waiting in ImagePullBackOff. */
        IMAGE_PULL_BACKOFF,
        /** PodScheduled=False, reason Unschedulable (insufficient memory). */
        UNSCHEDULABLE,
        /** PodScheduled=False because the workspace claim is not bound yet (a transient condition). */
        UNBOUND_CLAIM,
        /** Leaves the pod Pending with no status at all. */
        NEVER
    }

    private final KubernetesClient client;
    private final String namespace;
    private final Function<Pod, Mode> modes;
    private final Set<String> handled = ConcurrentHashMap.newKeySet();
    private final Thread thread;
    private volatile boolean running = true;

    FakeKubelet(KubernetesClient client, String namespace, Function<Pod, Mode> modes) {
        this.client = client;
        this.namespace = namespace;
        this.modes = modes;
        this.thread = new Thread(this::loop, "fake-kubelet");
        thread.setDaemon(true);
        thread.start();
    }

    static FakeKubelet always(KubernetesClient client, String namespace, Mode mode) {
        return new FakeKubelet(client, namespace, p -> mode);
    }

    private void loop() {
        while (running) {
            try {
                for (Pod pod : client.pods().inNamespace(namespace).list().getItems()) {
                    String uid = pod.getMetadata().getName() + "/" + pod.getMetadata().getUid();
                    if (handled.add(uid)) {
                        PodStatus status = statusFor(pod, modes.apply(pod));
                        if (status != null) {
                            pod.setStatus(status);
                            client.pods().inNamespace(namespace).resource(pod).updateStatus();
                        }
                    }
                }
            } catch (KubernetesClientException e) {
                // the pod went away between list and update; next round
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    static PodStatus statusFor(Pod pod, Mode mode) {
        String now = Instant.now().toString();
        String image = pod.getSpec().getContainers().get(0).getImage();
        return switch (mode) {
            case RUN -> new PodStatusBuilder().withPhase("Running")
                    .withConditions(new PodConditionBuilder().withType("PodScheduled").withStatus("True").build(),
                            new PodConditionBuilder().withType("Ready").withStatus("True").build())
                    .withContainerStatuses(new ContainerStatusBuilder().withName("main").withImage(image).withReady(true)
                            .withStarted(true).withNewState().withNewRunning().withStartedAt(now).endRunning().endState()
                            .build())
                    .build();
            case IMAGE_PULL_BACKOFF -> new PodStatusBuilder().withPhase("Pending")
                    .withConditions(new PodConditionBuilder().withType("PodScheduled").withStatus("True").build())
                    .withContainerStatuses(new ContainerStatusBuilder().withName("main").withImage(image).withReady(false)
                            .withNewState().withNewWaiting().withReason("ImagePullBackOff")
                            .withMessage("Back-off pulling image \"" + image + "\"").endWaiting().endState().build())
                    .build();
            case UNSCHEDULABLE -> new PodStatusBuilder().withPhase("Pending")
                    .withConditions(new PodConditionBuilder().withType("PodScheduled").withStatus("False")
                            .withReason("Unschedulable")
                            .withMessage("0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are "
                                    + "available: 3 No preemption victims found for incoming pod.").build())
                    .build();
            case UNBOUND_CLAIM -> new PodStatusBuilder().withPhase("Pending")
                    .withConditions(new PodConditionBuilder().withType("PodScheduled").withStatus("False")
                            .withReason("Unschedulable")
                            .withMessage("0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
                                    + "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")
                            .build())
                    .build();
            case NEVER -> null;
        };
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
