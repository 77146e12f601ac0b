package dev.sandboxkit.kubernetes;

import dev.sandboxkit.SandboxConfigurationException;

/**
 * Where a session's workdir lives, as stored with the session: {@code pvc:<namespace>/<claim>} for a
 * durable PersistentVolumeClaim, or {@code emptydir:<session label>} for an ephemeral sandbox, whose
 * workdir lives and dies with its pod.
 *
 * @param namespace the claim's namespace, or {@code null} for an emptyDir
 * @param claim     the claim's name, or {@code null} for an emptyDir
 */
record WorkspaceLocation(String namespace, String claim) {
    static final String PVC_PREFIX = "pvc:";
    static final String EMPTY_DIR_PREFIX = "emptydir:";

    static WorkspaceLocation claim(String namespace, String claim) {
        return new WorkspaceLocation(namespace, claim);
    }

    static String emptyDir(String sessionId) {
        return EMPTY_DIR_PREFIX + Names.sessionLabel(sessionId);
    }

    boolean isEmptyDir() {
        return claim == null;
    }

    static WorkspaceLocation parse(String location) {
        if (location.startsWith(EMPTY_DIR_PREFIX)) {
            return new WorkspaceLocation(null, null);
        }
        if (location.startsWith(PVC_PREFIX)) {
            String rest = location.substring(PVC_PREFIX.length());
            int slash = rest.indexOf('/');
            if (slash > 0 && slash < rest.length() - 1) {
                String ns = rest.substring(0, slash);
                String name = rest.substring(slash + 1);
                if (Names.isDnsLabel(ns) && Names.isDnsLabel(name)) {
                    return new WorkspaceLocation(ns, name);
                }
            }
        }
        throw new SandboxConfigurationException("not a Kubernetes workspace location (expected pvc:<namespace>/<claim> "
                + "or emptydir:<session>): " + location + ". Was the session created with another driver?");
    }

    @Override
    public String toString() {
        return isEmptyDir() ? EMPTY_DIR_PREFIX : PVC_PREFIX + namespace + "/" + claim;
    }
}
