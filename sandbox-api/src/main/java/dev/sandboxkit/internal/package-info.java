/**
 * Not API: the lifecycle engine behind {@link dev.sandboxkit.SandboxManager}. Start reading at
 * {@code LifecycleEngine} (every lifecycle decision, under the session's lock from {@code SessionLocks}), then
 * {@code SessionEntry} (per-session state and its two locks), {@code ContainerStarter} and {@code SessionDestroyer}
 * (how a start and a destroy are carried out), {@code WorkdirSteps} (snapshot, restore, fork, archive),
 * {@code LiveOperations} (what runs in a live sandbox), {@code Housekeeper} (reaper and sweep scheduling),
 * {@code LeaseRenewal}, {@code Reconciler} (orphan sweep), {@code PoolManager} (warm pools), {@code ContainerSetup}
 * (post-create hook, proxy, CA) and {@code ProcessSupport} (background processes, whose state lives in the
 * container). {@code ManagerFacade} wires them, each with what it uses. Classes here may change in any release.
 */
package dev.sandboxkit.internal;
