/**
 * Runnable examples: {@link dev.sandboxkit.examples.ResumeAfterTtlDemo} (the main demo, {@code scripts/demo.sh})
 * and {@link dev.sandboxkit.examples.EphemeralTaskRunner} (single-use sandboxes from a warm pool).
 */
package dev.sandboxkit.examples;
