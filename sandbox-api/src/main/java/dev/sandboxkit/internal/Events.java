package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

import java.util.ArrayDeque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Delivers events to the listeners, never while a session's lifecycle lock is held, and in order per session.
 *
 * <p>An event raised inside a lifecycle step is queued on its session's lane; the thread delivers it when it
 * leaves its last step ({@link #exitStep()}). Events raised outside a step (execs, the sweep) are delivered
 * at once. A lane is drained by one thread at a time, so a session's events reach listeners in the order they
 * were raised even when several threads work on it. A listener failure is logged and never breaks the lifecycle.
 */
final class Events {
    private static final Logger log = LoggerFactory.getLogger(Events.class);

    private final List<SandboxListener> listeners;
    private final ConcurrentHashMap<String, Lane> lanes = new ConcurrentHashMap<>();
    private final ThreadLocal<Steps> steps = ThreadLocal.withInitial(Steps::new);

    /** One session's undelivered events. */
    private static final class Lane {
        final ArrayDeque<SandboxEvent> queue = new ArrayDeque<>();
        boolean draining;
    }

    /** What the current thread holds: nesting depth of lifecycle steps, sessions with queued events. */
    private static final class Steps {
        int depth;
        final Set<String> pending = new LinkedHashSet<>();
    }

    Events(List<SandboxListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    /** Lets the hot path skip building events nobody receives. */
    boolean enabled() {
        return !listeners.isEmpty();
    }

    /** The current thread took a session's lifecycle lock. */
    void enterStep() {
        if (enabled()) {
            steps.get().depth++;
        }
    }

    /** The current thread released a lifecycle lock: once it holds none, it delivers what it queued. */
    void exitStep() {
        if (!enabled()) {
            return;
        }
        Steps s = steps.get();
        if (--s.depth > 0 || s.pending.isEmpty()) {
            return;
        }
        List<String> sessions = List.copyOf(s.pending);
        s.pending.clear();
        sessions.forEach(this::drain);
    }

    void emit(SandboxEvent event) {
        if (!enabled()) {
            return;
        }
        String sessionId = event.sessionId();
        lanes.compute(sessionId, (id, lane) -> {
            Lane l = lane != null ? lane : new Lane();
            synchronized (l) {
                l.queue.add(event);
            }
            return l;
        });
        Steps s = steps.get();
        if (s.depth > 0) {
            s.pending.add(sessionId);
        } else {
            drain(sessionId);
        }
    }

    /** Delivers a session's queued events on this thread, unless another thread is delivering them. */
    private void drain(String sessionId) {
        Lane lane = lanes.get(sessionId);
        if (lane == null) {
            return;
        }
        synchronized (lane) {
            if (lane.draining) {
                return; // that thread delivers ours too, in order
            }
            lane.draining = true;
        }
        while (true) {
            SandboxEvent next;
            synchronized (lane) {
                next = lane.queue.poll();
                if (next == null) {
                    lane.draining = false;
                    break;
                }
            }
            deliver(next);
        }
        lanes.computeIfPresent(sessionId, (id, l) -> {
            synchronized (l) {
                return l.queue.isEmpty() && !l.draining ? null : l;
            }
        });
    }

    /** Calls the listeners with the session in the MDC, as the step that raised the event had it. */
    private void deliver(SandboxEvent event) {
        String previous = MDC.get(LifecycleEngine.MDC_SESSION);
        MDC.put(LifecycleEngine.MDC_SESSION, event.sessionId());
        try {
            for (SandboxListener listener : listeners) {
                try {
                    listener.onEvent(event);
                } catch (RuntimeException e) {
                    log.warn("Sandbox listener failed on {}: {}", event.getClass().getSimpleName(), e.toString(), e);
                }
            }
        } finally {
            if (previous == null) {
                MDC.remove(LifecycleEngine.MDC_SESSION);
            } else {
                MDC.put(LifecycleEngine.MDC_SESSION, previous);
            }
        }
    }
}
