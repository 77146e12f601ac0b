package dev.sandboxkit.spring.boot.internal;

import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/** The application's listener beans as the manager's one listener; one failing never keeps the others from an event. */
final class CompositeListener implements SandboxListener {
    private static final Logger log = LoggerFactory.getLogger(CompositeListener.class);
    private final List<SandboxListener> listeners;

    CompositeListener(List<SandboxListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    @Override
    public void onEvent(SandboxEvent event) {
        for (SandboxListener l : listeners) {
            try {
                l.onEvent(event);
            } catch (RuntimeException e) {
                log.warn("Sandbox listener {} failed on {}: {}", l, event.getClass().getSimpleName(), e.toString(), e);
            }
        }
    }
}
