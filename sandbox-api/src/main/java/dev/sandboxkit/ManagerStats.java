package dev.sandboxkit;

/**
 * A snapshot of what one manager has done since it was built (counters) and holds now (gauges).
 *
 * @param active         containers this manager holds now (gauge)
 * @param suspended      sessions this manager suspended that it has not resumed or destroyed since (gauge)
 * @param created        containers started for new sessions
 * @param resumed        containers started for suspended sessions
 * @param idleReaped     containers removed after the idle TTL
 * @param lifetimeKilled containers killed at their maximum lifetime
 * @param destroyed      sessions destroyed (including ephemeral releases)
 * @param orphansRemoved containers removed by the orphan sweep
 * @param poolHits       acquires served from the warm pool
 * @param poolMisses     acquires that wanted a pooled container and found none
 * @param poolSize       pre-started containers waiting in the pools now (gauge)
 */
public record ManagerStats(
        long active,
        long suspended,
        long created,
        long resumed,
        long idleReaped,
        long lifetimeKilled,
        long destroyed,
        long orphansRemoved,
        long poolHits,
        long poolMisses,
        long poolSize) {
}
