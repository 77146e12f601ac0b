package dev.sandboxkit.internal;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.sandboxkit.spi.ComputeDriver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Every container removal the engine decides goes through here, and is remembered for a while: the orphan
 * sweep's listing may be older than a removal, and must not count (or re-remove) what this manager removed
 * itself. A removal that fails is forgotten at once, so the sweep still finds that container.
 */
final class Removals {
    private static final Logger log = LoggerFactory.getLogger(Removals.class);
    /** Longer than any listing a sweep works from. */
    static final Duration REMEMBERED = Duration.ofMinutes(10);
    /** A burst of removals larger than this within {@link #REMEMBERED} forgets the oldest first. */
    static final int MAX_REMEMBERED = 65_536;

    private final ComputeDriver compute;
    private final Cache<String, Boolean> recent;
    /** Runs first on every removal: closes the container's port forwards, which must not outlive it. */
    private final java.util.function.Consumer<String> beforeRemoval;

    Removals(ComputeDriver compute, Clock clock, java.util.function.Consumer<String> beforeRemoval) {
        this.compute = compute;
        this.beforeRemoval = beforeRemoval;
        this.recent = Caffeine.newBuilder()
                .expireAfterWrite(REMEMBERED)
                .maximumSize(MAX_REMEMBERED)
                .ticker(() -> TimeUnit.MILLISECONDS.toNanos(clock.millis())) // the manager's clock, so tests move it
                .executor(Runnable::run)                                       // no pool threads of our own
                .build();
    }

    /** Removes a container (idempotent in the driver), remembering it unless the removal fails. */
    void remove(String sandboxId) {
        beforeRemoval.accept(sandboxId);
        recent.put(sandboxId, Boolean.TRUE);
        try {
            compute.remove(sandboxId);
        } catch (RuntimeException notRemoved) {
            recent.invalidate(sandboxId);
            throw notRemoved;
        }
    }

    /** {@link #remove}, logging a failure instead of throwing it (the sweep finds what is left). */
    void removeQuietly(String sandboxId) {
        try {
            remove(sandboxId);
        } catch (RuntimeException e) {
            log.warn("Could not remove container {}: {}", LifecycleEngine.shortId(sandboxId), e.toString());
        }
    }

    /** Whether this manager removed the container recently. */
    boolean removedRecently(String sandboxId) {
        return recent.getIfPresent(sandboxId) != null;
    }
}
