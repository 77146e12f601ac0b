/**
 * Micrometer metrics for sandboxkit: register a {@link dev.sandboxkit.micrometer.SandboxMetrics} as the
 * manager's listener, then bind its gauges to the built manager.
 */
package dev.sandboxkit.micrometer;
