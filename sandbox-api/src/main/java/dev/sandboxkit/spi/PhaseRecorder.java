package dev.sandboxkit.spi;

import java.time.Duration;

/**
 * Lets a driver report how long each phase of {@link SandboxDriver#create} took; the engine puts them
 * on the {@link dev.sandboxkit.SandboxEvent.Created} and {@link dev.sandboxkit.SandboxEvent.Resumed} events.
 * Called on the thread running {@code create}.
 */
@FunctionalInterface
public interface PhaseRecorder {

    /** Ignores everything. */
    PhaseRecorder NONE = (phase, took) -> { };

    /**
     * Records one phase.
     *
     * @param phase a name, preferably one of the {@code PHASE_*} constants of {@link dev.sandboxkit.SandboxEvent}
     * @param took  how long it took
     */
    void record(String phase, Duration took);
}
