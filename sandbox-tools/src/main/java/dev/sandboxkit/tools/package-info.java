/**
 * Sandbox tools for models, shared by every agent-framework adapter: {@link dev.sandboxkit.tools.SandboxTools}
 * (the tool set and its builder), {@link dev.sandboxkit.tools.ToolDefinition} (name, description, JSON schema),
 * {@link dev.sandboxkit.tools.ToolResult} (the answer for the model) and
 * {@link dev.sandboxkit.tools.SessionResolver} (conversation id to session id).
 */
package dev.sandboxkit.tools;
