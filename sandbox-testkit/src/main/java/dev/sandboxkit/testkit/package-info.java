/**
 * Testing support for sandboxkit users and driver authors: {@link dev.sandboxkit.testkit.FakeDriver}
 * (no containers, scripted execs), {@link dev.sandboxkit.testkit.ManualClock} and
 * {@link dev.sandboxkit.testkit.ManualScheduler} (TTL tests without sleeping).
 */
package dev.sandboxkit.testkit;
