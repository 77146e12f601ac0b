package dev.sandboxkit.internal;

import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.spi.SessionStore;

import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What the parts of the engine share, resolved once at start: the backends, time, this manager's identity and
 * settings, and the shared state (sessions held, recent removals, counters, event delivery). The lifecycle and
 * housekeeping parts get it in their constructors, with the few engine operations they call back as a
 * {@link LifecycleActions}; {@link LiveOperations} and what it uses take only the pieces they need.
 *
 * @param driver        the backend
 * @param store         where session records live
 * @param clock         the manager's clock
 * @param instanceId    this manager's id, the owner label of its containers
 * @param fleet         the fleet label its sweep looks at
 * @param storeId       the id of the session store, the store label of every container
 * @param idleMillis    the idle TTL
 * @param leaseMillis   how long an ownership lease lasts without renewal
 * @param scheduler     runs housekeeping and refills
 * @param fileLimits    limits of the files API
 * @param specs         spec encoding and its caches
 * @param setup         per-container set-up (environment, CA, post-create hook)
 * @param stats         counters
 * @param events        event delivery
 * @param sessions      the sessions held in memory
 * @param removals      container removals, remembered for the sweep
 */
record EngineContext(SandboxDriver driver, SessionStore store, Clock clock, String instanceId, String fleet,
                     String storeId, long idleMillis, long leaseMillis, ScheduledExecutorService scheduler,
                     FileLimits fileLimits, SpecCodec specs, ContainerSetup setup, Stats stats, Events events,
                     SessionRegistry sessions, Removals removals) {

    /**
     * The clock's instant at millisecond precision: what any store can keep exactly, so that a record read
     * back equals the one written (handles compare session incarnations by creation instant).
     */
    Instant now() {
        return Instant.ofEpochMilli(clock.millis());
    }

    /** When a lease taken now runs out. */
    Instant lease(Instant now) {
        return now.plusMillis(leaseMillis);
    }

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
