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

    private SandboxLabels() {
    }
}
