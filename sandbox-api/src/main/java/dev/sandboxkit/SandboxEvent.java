package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * Something that happened to a session, delivered to {@link SandboxListener}s. Every event names the
 * session and the container it concerns, and when it happened.
 */
public sealed interface SandboxEvent {

    /** Phase name: the driver checked (or pulled) the image. */
    String PHASE_IMAGE_CHECK = "image-check";
    /** Phase name: the backend created the container or pod. */
    String PHASE_CREATE = "create";
    /** Phase name: the container started and became ready. */
    String PHASE_START = "start";
    /** Phase name: the post-create hook ran. */
    String PHASE_POST_CREATE = "post-create";
    /** Phase name: the first exec after a container start (reported on {@link ExecFinished}). */
    String PHASE_FIRST_EXEC = "first-exec";

    /**
     * The session the event concerns.
     *
     * @return session id
     */
    String sessionId();

    /**
     * The container the event concerns.
     *
     * @return sandbox id, or {@code null} when none is involved
     */
    @Nullable String sandboxId();

    /**
     * When it happened, on the manager's clock.
     *
     * @return instant
     */
    Instant at();

    /**
     * A container was started for a session seen for the first time (or after a destroy).
     *
     * @param sessionId session
     * @param sandboxId new container
     * @param at        when
     * @param phases    time taken by each phase ({@link #PHASE_IMAGE_CHECK}, {@link #PHASE_CREATE},
     *                  {@link #PHASE_START}, {@link #PHASE_POST_CREATE}), in order
     * @param total     time of the whole acquire step, phases plus the engine's own work
     * @param fromPool  whether a pre-started pool container was handed out
     */
    record Created(String sessionId, String sandboxId, Instant at, Map<String, Duration> phases, Duration total,
                   boolean fromPool) implements SandboxEvent {
        /** Copies the phases. */
        public Created {
            phases = Map.copyOf(Objects.requireNonNull(phases, "phases"));
        }
    }

    /**
     * A suspended session got a fresh container on its kept workdir.
     *
     * @param sessionId session
     * @param sandboxId new container
     * @param at        when
     * @param phases    time taken by each phase, as for {@link Created}
     * @param total     time of the whole resume step
     */
    record Resumed(String sessionId, String sandboxId, Instant at, Map<String, Duration> phases, Duration total)
            implements SandboxEvent {
        /** Copies the phases. */
        public Resumed {
            phases = Map.copyOf(Objects.requireNonNull(phases, "phases"));
        }
    }

    /**
     * An exec is about to start.
     *
     * @param sessionId session
     * @param sandboxId container
     * @param at        when
     * @param request   what runs (its env values may be secrets: do not log them)
     */
    record ExecStarted(String sessionId, String sandboxId, Instant at, ExecRequest request) implements SandboxEvent {
    }

    /**
     * An exec ended (normally, by timeout or killed). Not sent when the exec threw.
     *
     * @param sessionId     session
     * @param sandboxId     container
     * @param at            when
     * @param result        the result
     * @param firstExec     whether it was the first exec in this container (its duration is the
     *                      {@link #PHASE_FIRST_EXEC} phase)
     */
    record ExecFinished(String sessionId, String sandboxId, Instant at, ExecResult result, boolean firstExec)
            implements SandboxEvent {
    }

    /**
     * The reaper removed a container idle for longer than the TTL; the workdir is kept.
     *
     * @param sessionId session
     * @param sandboxId removed container
     * @param at        when
     * @param idleFor   how long it had been idle
     */
    record IdleReaped(String sessionId, String sandboxId, Instant at, Duration idleFor) implements SandboxEvent {
    }

    /**
     * The janitor killed a container that reached its maximum lifetime, even mid-exec.
     *
     * @param sessionId session
     * @param sandboxId killed container
     * @param at        when
     * @param lived     how long it had lived
     */
    record LifetimeKilled(String sessionId, String sandboxId, Instant at, Duration lived) implements SandboxEvent {
    }

    /**
     * The orphan sweep removed a container that no live manager accounts for.
     *
     * @param sessionId the session label on it (a pool slot id for pooled containers); empty if it had none
     * @param sandboxId removed container
     * @param at        when
     * @param reason    why it was an orphan
     */
    record OrphanRemoved(String sessionId, String sandboxId, Instant at, String reason) implements SandboxEvent {
    }

    /**
     * A session was destroyed: container and workdir removed.
     *
     * @param sessionId session
     * @param sandboxId removed container, or {@code null} if it had none
     * @param at        when
     * @param ephemeral whether it was a single-use sandbox being released
     */
    record Destroyed(String sessionId, @Nullable String sandboxId, Instant at, boolean ephemeral) implements SandboxEvent {
    }

    /**
     * The egress proxy refused a connection a sandbox process opened to its proxy endpoint. Emitted on the
     * manager's I/O executor thread that served the connection, before the 403 reply is written.
     *
     * @param sessionId session
     * @param sandboxId container that asked
     * @param at        when
     * @param host      host (lower-cased, trailing dot stripped) or IP literal asked for
     * @param port      port asked for
     * @param reason    one-line reason, as sent to the sandbox
     */
    record EgressDenied(String sessionId, String sandboxId, Instant at, String host, int port, String reason)
            implements SandboxEvent {
    }
}
