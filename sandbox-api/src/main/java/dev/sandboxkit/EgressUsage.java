package dev.sandboxkit;

/**
 * What one session's sandbox did through the egress proxy, as counted by this manager since it started (another
 * manager sharing the store counts its own).
 *
 * @param allowed  connections the policy allowed
 * @param denied   connections refused (by the policy, a limit or a malformed request)
 * @param bytesIn  bytes from the upstream hosts to the sandbox
 * @param bytesOut bytes from the sandbox to the upstream hosts
 */
public record EgressUsage(long allowed, long denied, long bytesIn, long bytesOut) {
}
