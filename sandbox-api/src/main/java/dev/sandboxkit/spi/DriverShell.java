package dev.sandboxkit.spi;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;

/**
 * A driver's stateful shell session in one sandbox, returned by {@link SandboxDriver#openShell}. The engine
 * wraps it into a {@link dev.sandboxkit.ShellSession}: it serialises commands, counts them as activity and
 * ends the session when the sandbox goes away. Implementations carry the working directory and the exported
 * environment from one command to the next (see {@link dev.sandboxkit.ShellSession} for the exact contract).
 */
public interface DriverShell extends AutoCloseable {

    /**
     * The sandbox the session runs in.
     *
     * @return the sandbox id
     */
    String sandboxId();

    /**
     * Runs a script in the session's shell and waits for it.
     *
     * @param script  the shell script
     * @param options env for this command only (never saved), stdin, timeout, caps and listener;
     *                {@code command()} and {@code workingDir()} are ignored
     * @return the result, with the same conventions as {@link SandboxDriver#exec}
     */
    ExecResult run(String script, ExecRequest options);

    /** Discards the session's state. Idempotent; best effort when the sandbox is gone. */
    @Override
    void close();
}
