package dev.sandboxkit.spi;

import org.jspecify.annotations.Nullable;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * A backend resource found by {@link SandboxDriver#list}.
 *
 * @param id        the sandbox id (container id, pod name)
 * @param labels    its labels
 * @param createdAt when the backend created it
 * @param running   whether it is running
 */
public record SandboxDescriptor(String id, Map<String, String> labels, Instant createdAt, boolean running) {

    /** Validates and copies. */
    public SandboxDescriptor {
        Objects.requireNonNull(id, "id");
        labels = Map.copyOf(labels);
        Objects.requireNonNull(createdAt, "createdAt");
    }

    /**
     * The session label, if any.
     *
     * @return session id label value, or {@code null}
     */
    public @Nullable String sessionId() {
        return labels.get(SandboxLabels.SESSION);
    }

    /**
     * The owner label, if any.
     *
     * @return owner instance id, or {@code null}
     */
    public @Nullable String owner() {
        return labels.get(SandboxLabels.OWNER);
    }
}
