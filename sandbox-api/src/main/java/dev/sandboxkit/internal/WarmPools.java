package dev.sandboxkit.internal;

import dev.sandboxkit.WarmPool;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * The manager's warm pools, one per configured spec, found by the spec's fingerprint: an acquire of a new session
 * whose spec has a pool takes a pre-started sandbox from it.
 */
final class WarmPools {
    private final Map<String, PoolManager> byFingerprint;

    private WarmPools(Map<String, PoolManager> byFingerprint) {
        this.byFingerprint = Map.copyOf(byFingerprint);
    }

    /**
     * One pool per configured warm pool.
     *
     * @param pool creates a configured pool, given its spec's fingerprint
     */
    static WarmPools of(List<WarmPool> configured, SpecCodec specs, BiFunction<WarmPool, String, PoolManager> pool) {
        Map<String, PoolManager> byFingerprint = new LinkedHashMap<>();
        for (WarmPool config : configured) {
            String fingerprint = specs.encoded(config.spec()).fingerprint();
            byFingerprint.put(fingerprint, pool.apply(config, fingerprint));
        }
        return new WarmPools(byFingerprint);
    }

    /** The pool for specs with this fingerprint, or null if there is none. */
    PoolManager forSpec(String fingerprint) {
        return byFingerprint.get(fingerprint);
    }

    /** Every pool (the orphan sweep leaves their sandboxes alone; close drains them). */
    Collection<PoolManager> all() {
        return byFingerprint.values();
    }

    /** Starts filling every pool, in the background. */
    void fill() {
        byFingerprint.values().forEach(PoolManager::replenishAsync);
    }

    /** Sandboxes waiting in the pools now. */
    long size() {
        return byFingerprint.values().stream().mapToLong(PoolManager::size).sum();
    }
}
