/**
 * sandboxkit for LangChain4j: {@link dev.sandboxkit.langchain4j.SandboxToolProvider} (a {@code ToolProvider} that
 * gives each chat memory its own persistent sandbox), {@link dev.sandboxkit.langchain4j.SandboxAgentTools} (the
 * same tools as {@code @Tool} methods) and {@link dev.sandboxkit.langchain4j.SandboxCodeExecutionEngine} (a
 * {@code CodeExecutionEngine} on single-use sandboxes).
 */
package dev.sandboxkit.langchain4j;
