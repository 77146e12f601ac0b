/**
 * Conformance kits: abstract JUnit 5 test classes that pin down the behaviour the lifecycle engine
 * relies on. A driver author extends {@link dev.sandboxkit.testkit.tck.ComputeDriverTck} for the compute half
 * ({@link dev.sandboxkit.spi.ComputeDriver}) and {@link dev.sandboxkit.testkit.tck.WorkspaceBackendTck} for the
 * workspace half ({@link dev.sandboxkit.spi.WorkspaceBackend}), and returns the driver under test from the one
 * factory method; a store author extends {@link dev.sandboxkit.testkit.tck.SessionStoreTck} and returns the store
 * under test. A driver implementing both halves runs both kits, once per setting that can change what the kit
 * checks: a setting of the compute half alone (how execs travel, say) needs only the compute kit again.
 * {@link dev.sandboxkit.testkit.tck.SandboxDriverTck}, the single kit of before the split, still runs both, and is
 * deprecated.
 *
 * <p>Most tests drive a real {@link dev.sandboxkit.SandboxManager} built on the driver instance, the way
 * applications use it; the lifecycle and workdir groups also call the SPI directly. The manager runs on a
 * {@link dev.sandboxkit.testkit.ManualClock} and {@link dev.sandboxkit.testkit.ManualScheduler}, so idle reaping
 * happens exactly when a test moves time, without sleeping; the driver itself gets the system clock because drivers
 * measure real time (exec timeouts, readiness).
 *
 * <p>Optional behaviour is tested only when the driver declares the matching
 * {@link dev.sandboxkit.spi.ComputeCapability} or {@link dev.sandboxkit.spi.WorkspaceCapability}; a test for an
 * undeclared capability is skipped (an assumption), never silently passed. Tests that need a real shell in the sandbox require
 * {@link dev.sandboxkit.spi.ComputeCapability#REAL_PROCESSES}. The commands used are those of a minimal POSIX userland
 * (BusyBox is enough): {@code sh}, {@code printf}, {@code cat}, {@code head}, {@code ls}, {@code ps}, {@code sleep},
 * {@code wc}, {@code yes}, and for terminals {@code tty} and {@code stty}.
 *
 * <p>Every test cleans up what it created: sessions are destroyed, the manager is closed, sandboxes
 * still carrying the test's owner label are removed and the workspace root is deleted. A new owner
 * instance id is used for every test, so runs never see each other's sandboxes.
 */
package dev.sandboxkit.testkit.tck;
