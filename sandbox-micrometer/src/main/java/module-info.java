/**
 * Micrometer meters for sandbox lifecycle events: exports {@link dev.sandboxkit.micrometer}.
 */
module dev.sandboxkit.micrometer {
    requires transitive dev.sandboxkit;
    // Micrometer has no module descriptor; micrometer.core is its Automatic-Module-Name (stable, set by Micrometer).
    // Transitive: SandboxMetrics is a MeterBinder.
    requires transitive micrometer.core;

    exports dev.sandboxkit.micrometer;
}
