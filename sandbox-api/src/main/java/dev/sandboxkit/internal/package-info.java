/**
 * Not API: the lifecycle engine behind {@link dev.sandboxkit.SandboxManager}. Start reading at
 * {@code LifecycleEngine} (every lifecycle decision), then {@code SessionEntry} (per-session state and its two
 * locks), {@code Housekeeper} (reaper, lease renewal, sweep scheduling), {@code Reconciler} (orphan sweep),
 * {@code PoolManager} (warm pools), {@code ContainerSetup} (post-create hook, proxy, CA) and
 * {@code ProcessSupport} (background processes, whose state lives in the container). Classes here may
 * change in any release.
 */
package dev.sandboxkit.internal;
