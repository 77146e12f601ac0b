/**
 * Testing support for sandboxkit users and driver authors.
 *
 * <ul>
 *   <li>Unit tests in milliseconds: {@link dev.sandboxkit.testkit.FakeDriver} (no containers, scripted
 *       execs), {@link dev.sandboxkit.testkit.ManualClock} and {@link dev.sandboxkit.testkit.ManualScheduler}
 *       (TTL tests without sleeping).</li>
 *   <li>End-to-end tests against a real backend: {@link dev.sandboxkit.testkit.SandboxTest} and
 *       {@link dev.sandboxkit.testkit.SandboxExtension} inject managers and fresh sandboxes and clean up
 *       after each test; {@link dev.sandboxkit.testkit.TestImages} builds tiny local images without a
 *       registry.</li>
 *   <li>Conformance kits for driver and store authors: {@code dev.sandboxkit.testkit.tck}.</li>
 * </ul>
 */
package dev.sandboxkit.testkit;
