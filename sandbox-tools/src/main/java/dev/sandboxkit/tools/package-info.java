/**
 * Sandbox tools for models, shared by every agent-framework adapter: {@link dev.sandboxkit.tools.SandboxTools}
 * (the tool set and its builder), {@link dev.sandboxkit.tools.ToolDefinition} (name, description, JSON schema),
 * {@link dev.sandboxkit.tools.ToolResult} (the answer for the model) and
 * {@link dev.sandboxkit.tools.SessionResolver} (conversation id to session id).
 *
 * <p>Nullness: {@code @NullMarked} (JSpecify), checked by NullAway: nothing here is {@code null} unless annotated
 * {@code @Nullable}.
 */
@NullMarked
package dev.sandboxkit.tools;

import org.jspecify.annotations.NullMarked;
