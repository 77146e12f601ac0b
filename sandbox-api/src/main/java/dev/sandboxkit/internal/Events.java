package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Delivers events to the user's listener, if any; a listener failure never breaks the lifecycle. */
final class Events {
    private static final Logger log = LoggerFactory.getLogger(Events.class);
    private final SandboxListener listener;

    Events(SandboxListener listener) {
        this.listener = listener;
    }

    /** Lets the hot path skip building events nobody receives. */
    boolean enabled() {
        return listener != null;
    }

    void emit(SandboxEvent event) {
        if (listener == null) {
            return;
        }
        try {
            listener.onEvent(event);
        } catch (RuntimeException e) {
            log.warn("Sandbox listener failed on {}: {}", event.getClass().getSimpleName(), e.toString(), e);
        }
    }
}
