package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.SandboxLabels;

import java.util.HashMap;
import java.util.Map;

/**
 * Who this manager is, as the labels on everything it creates say: its owner id, the fleet its sweep looks at,
 * and the session store it records to. Other managers and the orphan sweep judge a container by these labels.
 *
 * @param instanceId this manager's id, the owner label of its containers
 * @param fleet      the fleet label its sweep looks at
 * @param storeId    the id of the session store, the store label of every container
 */
record ManagerIdentity(String instanceId, String fleet, String storeId) {

    /** The spec's labels plus sandboxkit's own, which win. */
    Map<String, String> labels(String sessionId, SandboxSpec spec) {
        Map<String, String> labels = new HashMap<>(spec.labels());
        labels.put(SandboxLabels.MANAGED, "true");
        labels.put(SandboxLabels.SESSION, sessionId);
        labels.put(SandboxLabels.OWNER, instanceId);
        labels.put(SandboxLabels.FLEET, fleet);
        labels.put(SandboxLabels.STORE, storeId);
        return labels;
    }
}
