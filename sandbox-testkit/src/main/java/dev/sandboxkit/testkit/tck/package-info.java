/**
 * Conformance kits: abstract JUnit 5 test classes that pin down the behaviour the lifecycle engine
 * relies on. A driver author extends {@link dev.sandboxkit.testkit.tck.SandboxDriverTck} and returns the
 * driver under test (optional behaviour is tested only when the driver declares the matching
 * {@link dev.sandboxkit.spi.DriverCapability}); a store author extends
 * {@link dev.sandboxkit.testkit.tck.SessionStoreTck} and returns the store under test.
 */
package dev.sandboxkit.testkit.tck;
