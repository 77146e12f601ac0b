package dev.sandboxkit.kubernetes;

import java.time.Duration;
import java.util.List;

/**
 * The driver's resolved, immutable settings.
 *
 * @param namespace              namespace of every pod, claim and policy ({@code null} in a builder's settings
 *                               before the client's is known)
 * @param storageClass           storage class of workspace claims, or {@code null} for the cluster default
 * @param workspaceSize          requested size of a workspace claim (and the emptyDir limit of ephemeral ones)
 * @param runAsUser              uid when the spec names none
 * @param runAsGroup             gid when the spec names none
 * @param fsGroup                group that owns mounted volumes
 * @param readOnlyRootFilesystem force a read-only root filesystem even when the spec does not ask
 * @param readinessTimeout       how long {@code create} waits for the container to run
 * @param networkPolicy          deny-all policy: {@code null} = when the spec's network is {@code none}
 * @param terminationGrace       pod termination grace period (at least one second)
 * @param requestRatio           requests = limits x this ratio, in (0, 1]
 * @param runtimeClassName       RuntimeClass (gVisor, Kata, ...), or {@code null}
 * @param imagePullSecrets       image pull secret names
 * @param owner                  manager instance id for the workspace claim's owner label, or {@code null}
 * @param kubeContext            the kubeconfig context the client was configured from, or {@code null} for the
 *                               current one (or a client given as it is)
 */
record Settings(
        String namespace,
        String storageClass,
        String workspaceSize,
        long runAsUser,
        long runAsGroup,
        long fsGroup,
        boolean readOnlyRootFilesystem,
        Duration readinessTimeout,
        Boolean networkPolicy,
        Duration terminationGrace,
        double requestRatio,
        String runtimeClassName,
        List<String> imagePullSecrets,
        String owner,
        String kubeContext) {

    Settings {
        imagePullSecrets = List.copyOf(imagePullSecrets);
    }

    /** Grace period in whole seconds; 0 would mean force deletion, which can leave a container running. */
    long graceSeconds() {
        return Math.max(1, (terminationGrace.toMillis() + 999) / 1000);
    }
}
