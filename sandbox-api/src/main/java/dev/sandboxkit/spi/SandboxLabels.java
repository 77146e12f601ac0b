package dev.sandboxkit.spi;

/**
 * The labels every backend resource carries, so that orphans can be found and swept by label.
 */
public final class SandboxLabels {
    /** {@code true} on every resource sandboxkit manages. */
    public static final String MANAGED = "dev.sandboxkit.managed";
    /** The session id (sanitised where the backend restricts label values). */
    public static final String SESSION = "dev.sandboxkit.session";
    /** The instance id of the manager that created the resource. */
    public static final String OWNER = "dev.sandboxkit.owner";

    /**
     * The fleet: a name that partitions the managers on one engine. The orphan sweep only lists its own fleet's
     * containers.
     */
    public static final String FLEET = "dev.sandboxkit.fleet";
    /**
     * The id of the session store whose records account for the resource. The orphan sweep judges a container only by
     * its own store's records: a container of another store is never removed on a guess, whatever its fleet (the
     * one exception: an in-memory store proven gone with its process).
     */
    public static final String STORE = "dev.sandboxkit.store";
    /** On pre-started warm-pool containers: the pool slot id (their session label holds the same slot id). */
    public static final String POOL = "dev.sandboxkit.pool";
    /** On workdir snapshots: the snapshot id. */
    public static final String SNAPSHOT = "dev.sandboxkit.snapshot";
    /** On workdir snapshots: {@code true} when it outlives its session, {@code false} otherwise. */
    public static final String KEPT = "dev.sandboxkit.kept";

    private SandboxLabels() {
    }
}
