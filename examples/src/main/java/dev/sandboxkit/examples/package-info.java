/**
 * Runnable examples: {@link dev.sandboxkit.examples.ResumeAfterTtlDemo} (the main demo, {@code scripts/demo.sh})
 * {@link dev.sandboxkit.examples.EphemeralTaskRunner} (single-use sandboxes from a warm pool) and
 * {@link dev.sandboxkit.examples.LangChain4jAgentDemo} (a LangChain4j agent whose sandbox is reaped and resumed
 * between two turns).
 */
package dev.sandboxkit.examples;
