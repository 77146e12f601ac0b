/**
 * Sandbox tools for Spring AI: {@link dev.sandboxkit.spring.ai.SandboxToolCallbackProvider} (the tools as
 * {@code ToolCallback}s), {@link dev.sandboxkit.spring.ai.SandboxToolMethods} (the same as {@code @Tool} methods),
 * {@link dev.sandboxkit.spring.ai.SandboxToolContext} (how a call names its conversation),
 * {@link dev.sandboxkit.spring.ai.SandboxConversationAdvisor} (the chat memory's conversation id for the tools)
 * and {@link dev.sandboxkit.spring.ai.SandboxToolExceptionProcessor} (operator failures of {@code @Tool} methods
 * reach the caller).
 */
package dev.sandboxkit.spring.ai;
