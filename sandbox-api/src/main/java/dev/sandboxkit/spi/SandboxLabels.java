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
     * The fleet: managers that share one session store. The orphan sweep only looks at its own fleet, so
     * separate applications on one engine, each with its own store, never sweep each other's containers.
     */
    public static final String FLEET = "dev.sandboxkit.fleet";
    /** On pre-started warm-pool containers: the pool slot id (their session label holds the same slot id). */
    public static final String POOL = "dev.sandboxkit.pool";
    /** On workdir snapshots: the snapshot id. */
    public static final String SNAPSHOT = "dev.sandboxkit.snapshot";
    /** On workdir snapshots: {@code true} when it outlives its session, {@code false} otherwise. */
    public static final String KEPT = "dev.sandboxkit.kept";

    private SandboxLabels() {
    }
}
