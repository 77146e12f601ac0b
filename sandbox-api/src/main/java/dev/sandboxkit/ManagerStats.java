package dev.sandboxkit;

import java.util.Objects;

/**
 * A snapshot of what one manager has done since it was built (counters) and holds now (gauges), from
 * {@link SandboxManager#stats()}. A final class rather than a record, so that new counters can be added without
 * breaking callers; the library builds it.
 */
public final class ManagerStats {
    private final long active;
    private final long suspended;
    private final long created;
    private final long resumed;
    private final long idleReaped;
    private final long lifetimeKilled;
    private final long destroyed;
    private final long orphansRemoved;
    private final long poolHits;
    private final long poolMisses;
    private final long poolSize;
    private final long snapshots;
    private final long snapshotBytes;
    private final long egressAllowed;
    private final long egressDenied;
    private final long egressBytesIn;
    private final long egressBytesOut;

    private ManagerStats(long active, long suspended, long created, long resumed, long idleReaped,
            long lifetimeKilled, long destroyed, long orphansRemoved, long poolHits, long poolMisses, long poolSize,
            long snapshots, long snapshotBytes, long egressAllowed, long egressDenied, long egressBytesIn,
            long egressBytesOut) {
        this.active = active;
        this.suspended = suspended;
        this.created = created;
        this.resumed = resumed;
        this.idleReaped = idleReaped;
        this.lifetimeKilled = lifetimeKilled;
        this.destroyed = destroyed;
        this.orphansRemoved = orphansRemoved;
        this.poolHits = poolHits;
        this.poolMisses = poolMisses;
        this.poolSize = poolSize;
        this.snapshots = snapshots;
        this.snapshotBytes = snapshotBytes;
        this.egressAllowed = egressAllowed;
        this.egressDenied = egressDenied;
        this.egressBytesIn = egressBytesIn;
        this.egressBytesOut = egressBytesOut;
    }

    /**
     * Containers this manager holds now (gauge).
     *
     * @return containers this manager holds now (gauge)
     */
    public long active() {
        return active;
    }

    /**
     * Sessions this manager suspended that it has not resumed or destroyed since (gauge).
     *
     * @return sessions this manager suspended that it has not resumed or destroyed since (gauge)
     */
    public long suspended() {
        return suspended;
    }

    /**
     * Containers started for new sessions.
     *
     * @return containers started for new sessions
     */
    public long created() {
        return created;
    }

    /**
     * Containers started for suspended sessions.
     *
     * @return containers started for suspended sessions
     */
    public long resumed() {
        return resumed;
    }

    /**
     * Containers removed after the idle TTL.
     *
     * @return containers removed after the idle TTL
     */
    public long idleReaped() {
        return idleReaped;
    }

    /**
     * Containers killed at their maximum lifetime.
     *
     * @return containers killed at their maximum lifetime
     */
    public long lifetimeKilled() {
        return lifetimeKilled;
    }

    /**
     * Sessions destroyed (including ephemeral releases).
     *
     * @return sessions destroyed (including ephemeral releases)
     */
    public long destroyed() {
        return destroyed;
    }

    /**
     * Containers removed by the orphan sweep.
     *
     * @return containers removed by the orphan sweep
     */
    public long orphansRemoved() {
        return orphansRemoved;
    }

    /**
     * Acquires served from the warm pool.
     *
     * @return acquires served from the warm pool
     */
    public long poolHits() {
        return poolHits;
    }

    /**
     * Acquires that wanted a pooled container and found none.
     *
     * @return acquires that wanted a pooled container and found none
     */
    public long poolMisses() {
        return poolMisses;
    }

    /**
     * Pre-started containers waiting in the pools now (gauge).
     *
     * @return pre-started containers waiting in the pools now (gauge)
     */
    public long poolSize() {
        return poolSize;
    }

    /**
     * Workdir snapshots the driver holds for this manager's fleet now (gauge).
     *
     * @return workdir snapshots held now
     */
    public long snapshots() {
        return snapshots;
    }

    /**
     * The bytes of the regular files in those snapshots (gauge).
     *
     * @return bytes held in snapshots now
     */
    public long snapshotBytes() {
        return snapshotBytes;
    }

    /**
     * Counter: egress connections allowed, since the manager started.
     *
     * @return the count
     */
    public long egressAllowed() {
        return egressAllowed;
    }

    /**
     * Counter: egress connections refused (policy, limit or malformed request), since the manager started.
     *
     * @return the count
     */
    public long egressDenied() {
        return egressDenied;
    }

    /**
     * Counter: bytes carried from upstream hosts to sandboxes through the egress proxy, since the manager started.
     *
     * @return the count
     */
    public long egressBytesIn() {
        return egressBytesIn;
    }

    /**
     * Counter: bytes carried from sandboxes to upstream hosts through the egress proxy, since the manager started.
     *
     * @return the count
     */
    public long egressBytesOut() {
        return egressBytesOut;
    }

    @Override
    public boolean equals(Object other) {
        return this == other || (other instanceof ManagerStats o
                && active == o.active && suspended == o.suspended && created == o.created &&
                resumed == o.resumed && idleReaped == o.idleReaped && lifetimeKilled == o.lifetimeKilled &&
                destroyed == o.destroyed && orphansRemoved == o.orphansRemoved && poolHits == o.poolHits &&
                poolMisses == o.poolMisses && poolSize == o.poolSize && snapshots == o.snapshots
                && snapshotBytes == o.snapshotBytes && egressAllowed == o.egressAllowed
                && egressDenied == o.egressDenied && egressBytesIn == o.egressBytesIn
                && egressBytesOut == o.egressBytesOut);
    }

    @Override
    public int hashCode() {
        return Objects.hash(active, suspended, created, resumed, idleReaped, lifetimeKilled, destroyed, orphansRemoved,
                poolHits, poolMisses, poolSize, snapshots, snapshotBytes, egressAllowed, egressDenied, egressBytesIn,
                egressBytesOut);
    }

    @Override
    public String toString() {
        return "ManagerStats[" + "active=" + active + ", suspended=" + suspended + ", created=" + created +
                ", resumed=" + resumed + ", idleReaped=" + idleReaped + ", lifetimeKilled=" + lifetimeKilled +
                ", destroyed=" + destroyed + ", orphansRemoved=" + orphansRemoved + ", poolHits=" + poolHits +
                ", poolMisses=" + poolMisses + ", poolSize=" + poolSize + ", snapshots=" + snapshots +
                ", snapshotBytes=" + snapshotBytes + ", egressAllowed=" + egressAllowed + ", egressDenied="
                + egressDenied + ", egressBytesIn=" + egressBytesIn + ", egressBytesOut=" + egressBytesOut + "]";
    }

    /**
     * Starts a builder; unset values are {@code null}, {@code 0} or {@code false} unless stated.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds a {@link ManagerStats}. Not thread-safe; last write wins. */
    public static final class Builder {
        private long active;
        private long suspended;
        private long created;
        private long resumed;
        private long idleReaped;
        private long lifetimeKilled;
        private long destroyed;
        private long orphansRemoved;
        private long poolHits;
        private long poolMisses;
        private long poolSize;
        private long snapshots;
        private long snapshotBytes;
        private long egressAllowed;
        private long egressDenied;
        private long egressBytesIn;
        private long egressBytesOut;

        private Builder() {
        }

        /**
         * Sets active: containers this manager holds now (gauge).
         *
         * @param value the value
         * @return this builder
         */
        public Builder active(long value) {
            this.active = value;
            return this;
        }

        /**
         * Sets suspended: sessions this manager suspended that it has not resumed or destroyed since (gauge).
         *
         * @param value the value
         * @return this builder
         */
        public Builder suspended(long value) {
            this.suspended = value;
            return this;
        }

        /**
         * Sets created: containers started for new sessions.
         *
         * @param value the value
         * @return this builder
         */
        public Builder created(long value) {
            this.created = value;
            return this;
        }

        /**
         * Sets resumed: containers started for suspended sessions.
         *
         * @param value the value
         * @return this builder
         */
        public Builder resumed(long value) {
            this.resumed = value;
            return this;
        }

        /**
         * Sets idleReaped: containers removed after the idle TTL.
         *
         * @param value the value
         * @return this builder
         */
        public Builder idleReaped(long value) {
            this.idleReaped = value;
            return this;
        }

        /**
         * Sets lifetimeKilled: containers killed at their maximum lifetime.
         *
         * @param value the value
         * @return this builder
         */
        public Builder lifetimeKilled(long value) {
            this.lifetimeKilled = value;
            return this;
        }

        /**
         * Sets destroyed: sessions destroyed (including ephemeral releases).
         *
         * @param value the value
         * @return this builder
         */
        public Builder destroyed(long value) {
            this.destroyed = value;
            return this;
        }

        /**
         * Sets orphansRemoved: containers removed by the orphan sweep.
         *
         * @param value the value
         * @return this builder
         */
        public Builder orphansRemoved(long value) {
            this.orphansRemoved = value;
            return this;
        }

        /**
         * Sets poolHits: acquires served from the warm pool.
         *
         * @param value the value
         * @return this builder
         */
        public Builder poolHits(long value) {
            this.poolHits = value;
            return this;
        }

        /**
         * Sets poolMisses: acquires that wanted a pooled container and found none.
         *
         * @param value the value
         * @return this builder
         */
        public Builder poolMisses(long value) {
            this.poolMisses = value;
            return this;
        }

        /**
         * Sets poolSize: pre-started containers waiting in the pools now (gauge).
         *
         * @param value the value
         * @return this builder
         */
        public Builder poolSize(long value) {
            this.poolSize = value;
            return this;
        }

        /**
         * Sets snapshots: workdir snapshots held now (gauge).
         *
         * @param value the value
         * @return this builder
         */
        public Builder snapshots(long value) {
            this.snapshots = value;
            return this;
        }

        /**
         * Sets snapshotBytes: bytes held in snapshots now (gauge).
         *
         * @param value the value
         * @return this builder
         */
        public Builder snapshotBytes(long value) {
            this.snapshotBytes = value;
            return this;
        }

        /**
         * Sets egressAllowed: egress connections allowed.
         *
         * @param value the count
         * @return this builder
         */
        public Builder egressAllowed(long value) {
            this.egressAllowed = value;
            return this;
        }

        /**
         * Sets egressDenied: egress connections refused (policy, limit or malformed request).
         *
         * @param value the count
         * @return this builder
         */
        public Builder egressDenied(long value) {
            this.egressDenied = value;
            return this;
        }

        /**
         * Sets egressBytesIn: bytes carried from upstream hosts to sandboxes through the egress proxy.
         *
         * @param value the count
         * @return this builder
         */
        public Builder egressBytesIn(long value) {
            this.egressBytesIn = value;
            return this;
        }

        /**
         * Sets egressBytesOut: bytes carried from sandboxes to upstream hosts through the egress proxy.
         *
         * @param value the count
         * @return this builder
         */
        public Builder egressBytesOut(long value) {
            this.egressBytesOut = value;
            return this;
        }

        /**
         * Builds the value.
         *
         * @return the value
         */
        public ManagerStats build() {
            return new ManagerStats(active, suspended, created, resumed, idleReaped, lifetimeKilled, destroyed, orphansRemoved,
                    poolHits, poolMisses, poolSize, snapshots, snapshotBytes, egressAllowed, egressDenied, egressBytesIn,
                    egressBytesOut);
        }
    }
}
