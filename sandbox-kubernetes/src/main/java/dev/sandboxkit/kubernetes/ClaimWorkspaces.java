package dev.sandboxkit.kubernetes;

import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxTimeoutException;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.spi.WorkspaceDescriptor;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.KubernetesClientTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The driver's storage half: one PersistentVolumeClaim per session as its durable workdir (an emptyDir for an
 * ephemeral session). Creates, deletes and lists the claims. The compute half is {@link PodSandboxes}.
 */
final class ClaimWorkspaces {
    private static final Logger log = LoggerFactory.getLogger(ClaimWorkspaces.class);

    private final KubernetesClient client;
    private final Settings settings;

    ClaimWorkspaces(KubernetesClient client, Settings settings) {
        this.client = client;
        this.settings = settings;
    }

    /**
     * Creates the session's PersistentVolumeClaim if it does not exist (waiting for a claim of the same
     * name that is still being deleted to go), or, for an ephemeral spec, returns an emptyDir location.
     */
    String createWorkspace(String sessionId, SandboxSpec spec) {
        Objects.requireNonNull(sessionId, "sessionId");
        if (spec.ephemeral()) {
            return WorkspaceLocation.emptyDir(sessionId);
        }
        String name = Names.claimName(sessionId);
        String ns = settings.namespace();
        String location = WorkspaceLocation.claim(ns, name).toString();
        try {
            var resource = client.persistentVolumeClaims().inNamespace(ns).withName(name);
            PersistentVolumeClaim existing = resource.get();
            if (existing != null && existing.getMetadata().getDeletionTimestamp() == null) {
                return location;
            }
            if (existing != null) {
                // A destroyed session's claim, still held by its last pod: the new incarnation starts empty.
                try {
                    resource.waitUntilCondition(Objects::isNull, settings.readinessTimeout().toMillis(),
                            TimeUnit.MILLISECONDS);
                } catch (KubernetesClientTimeoutException e) {
                    throw new SandboxTimeoutException("workspace claim " + ns + "/" + name + " is still being deleted"
                            + " after " + settings.readinessTimeout().toSeconds() + " s", e);
                }
            }
            try {
                client.persistentVolumeClaims().inNamespace(ns).resource(Manifests.claim(settings, sessionId, name))
                        .create();
                log.debug("Created workspace claim {}/{} for session {}", ns, name, sessionId);
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409) {
                    throw e;
                }
                // Created concurrently by another manager: same name, same session.
            }
            return location;
        } catch (KubernetesClientException e) {
            throw Errors.createRefused(e, "workspace claim " + ns + "/" + name, masterUrl());
        }
    }

    /** Deletes the session's claim (the volume goes with it under the usual Delete reclaim policy). */
    void deleteWorkspace(String workspace) {
        WorkspaceLocation location = WorkspaceLocation.parse(workspace);
        if (location.isEmptyDir()) {
            return;
        }
        try {
            client.persistentVolumeClaims().inNamespace(location.namespace()).withName(location.claim()).delete();
        } catch (KubernetesClientException e) {
            throw Errors.translate(e, "delete persistentvolumeclaims/" + location.claim(), masterUrl(),
                    new SandboxException("could not delete workspace claim " + location + ": " + Errors.message(e), e));
        }
    }

    /**
     * The session claims in this driver's namespace, for the orphan sweep. Claims being deleted, and claims without a
     * creation time (their age cannot be judged), are left out.
     */
    List<WorkspaceDescriptor> listWorkspaces(Map<String, String> labels) {
        Map<String, String> selector = Metadata.selector(labels);
        String exact = labels.get(SandboxLabels.SESSION);
        String ns = settings.namespace();
        List<PersistentVolumeClaim> claims;
        try {
            claims = client.persistentVolumeClaims().inNamespace(ns).withLabels(selector).list().getItems();
        } catch (KubernetesClientException e) {
            throw Errors.translate(e, "list persistentvolumeclaims", masterUrl(),
                    new SandboxException("could not list workspace claims: " + Errors.message(e), e));
        }
        List<WorkspaceDescriptor> out = new ArrayList<>(claims.size());
        for (PersistentVolumeClaim pvc : claims) {
            var meta = pvc.getMetadata();
            String session = meta.getAnnotations() == null ? null : meta.getAnnotations().get(SandboxLabels.SESSION);
            if (meta.getDeletionTimestamp() != null || meta.getCreationTimestamp() == null || session == null
                    || (exact != null && !exact.equals(session))) {
                continue;
            }
            Map<String, String> claimLabels = new HashMap<>(meta.getLabels() == null ? Map.of() : meta.getLabels());
            claimLabels.put(SandboxLabels.SESSION, session); // the label holds a sanitised form
            out.add(new WorkspaceDescriptor(WorkspaceLocation.claim(ns, meta.getName()).toString(), claimLabels,
                    Metadata.createdAt(meta.getCreationTimestamp())));
        }
        return out;
    }

    private String masterUrl() {
        return String.valueOf(client.getMasterUrl());
    }
}
