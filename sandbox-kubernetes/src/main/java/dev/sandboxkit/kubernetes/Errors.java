package dev.sandboxkit.kubernetes;

import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxUnavailableException;
import io.fabric8.kubernetes.client.KubernetesClientException;

import java.io.IOException;
import java.util.Locale;

/** Maps fabric8 failures to sandboxkit exceptions that say what the caller can do. */
final class Errors {
    private Errors() {
    }

    /** Whether no HTTP answer came back at all: connection refused, DNS, TLS, timeouts. */
    static boolean isUnreachable(Throwable e) {
        if (e instanceof KubernetesClientException k && k.getCode() > 0) {
            return false;
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof IOException || t instanceof java.nio.channels.UnresolvedAddressException) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }

    /**
     * The generic translation: unreachable or overloaded API is retryable, missing permissions are a
     * configuration problem; anything else becomes {@code otherwise}.
     */
    static SandboxException translate(KubernetesClientException e, String action, String masterUrl,
                                      SandboxException otherwise) {
        int code = e.getCode();
        if (isUnreachable(e)) {
            return new SandboxUnavailableException("Kubernetes API at " + masterUrl + " is unreachable (" + action
                    + "): " + rootMessage(e), e);
        }
        if (code == 401) {
            return new SandboxConfigurationException("Kubernetes API at " + masterUrl
                    + " rejected the credentials (" + action + "): " + message(e), e);
        }
        if (code == 403 && !isQuota(e)) {
            return new SandboxConfigurationException("not allowed to " + action + " (HTTP 403 from " + masterUrl
                    + "); grant the service account or user the RBAC permission: " + message(e), e);
        }
        if (code == 429 || code >= 500) {
            return new SandboxUnavailableException("Kubernetes API at " + masterUrl + " failed (" + action + ", HTTP "
                    + code + "): " + message(e), e);
        }
        return otherwise;
    }

    /** Pod creation refused: quota is retryable, an invalid or policy-rejected pod is not. */
    static SandboxException createRefused(KubernetesClientException e, String what, String masterUrl) {
        if (isQuota(e)) {
            return new SandboxAcquireException(what + " refused by a ResourceQuota: " + message(e), e, true);
        }
        if (e.getCode() == 403 && message(e).contains("PodSecurity")) {
            return new SandboxAcquireException(what + " refused by Pod Security admission: " + message(e), e);
        }
        if (e.getCode() == 404) {
            return new SandboxConfigurationException(what + " failed: namespace " + e.getNamespace()
                    + " does not exist? " + message(e), e);
        }
        return translate(e, "create " + what, masterUrl,
                new SandboxAcquireException(what + " was refused (HTTP " + e.getCode() + "): " + message(e), e));
    }

    static boolean isQuota(KubernetesClientException e) {
        return e.getCode() == 403 && message(e).toLowerCase(Locale.ROOT).contains("exceeded quota");
    }

    static String message(KubernetesClientException e) {
        if (e.getStatus() != null && e.getStatus().getMessage() != null) {
            return e.getStatus().getMessage();
        }
        return String.valueOf(e.getMessage());
    }

    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t == e ? String.valueOf(e.getMessage()) : e.getMessage() + " (" + t + ")";
    }
}
