/**
 * The sandboxkit API: safe, self-cleaning sandboxes for AI-agent frameworks.
 *
 * <p>Start with {@link dev.sandboxkit.SandboxManager#builder()}. Each agent session gets one
 * long-lived container; every tool call is an exec into it. The session's workdir, mounted at
 * {@value dev.sandboxkit.SandboxSpec#WORKSPACE}, is the only state that survives: an idle container
 * is reaped after a TTL and the next call starts a fresh one on the same workdir ("resume").
 *
 * <p>All exceptions are unchecked and extend {@link dev.sandboxkit.SandboxException}. A non-zero
 * exit code is data ({@link dev.sandboxkit.ExecResult#exitCode()}), never an exception.
 *
 * <p>{@link dev.sandboxkit.SandboxConfig} (a getter and setter per setting, and the table of its keys),
 * {@link dev.sandboxkit.SandboxSpec} (an immutable value and its builder) and {@link dev.sandboxkit.SandboxManager}
 * (the manager's documented calls) are over the project's 700-line limit for a class because each is one public type
 * whose members, each with its Javadoc, are the API itself: splitting them would change that API.
 *
 * <p>Nullness: the package is {@code @NullMarked} (JSpecify): a type is non-null unless it is annotated
 * {@code @Nullable}, and the build checks that with NullAway.
 */
@NullMarked
package dev.sandboxkit;

import org.jspecify.annotations.NullMarked;
