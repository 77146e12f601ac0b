/**
 * A Spring Boot application with Spring AI and the sandboxkit starter:
 * {@link dev.sandboxkit.examples.spring.SpringAiSandboxApplication} (run it),
 * {@link dev.sandboxkit.examples.spring.SandboxAssistant} (a ChatClient with a sandbox per conversation) and
 * {@link dev.sandboxkit.examples.spring.ScriptedChatModel} (stands in for the LLM).
 */
package dev.sandboxkit.examples.spring;
