package dev.sandboxkit.spi;

import dev.sandboxkit.ExecResult;
import dev.sandboxkit.TerminalSize;

import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.Optional;

/**
 * A driver's side of a terminal opened with {@link SandboxDriver#openTerminal}: the streams of one command
 * running on a pseudo-terminal. The engine wraps it into the {@link dev.sandboxkit.Terminal} callers see and
 * keeps the activity accounting; the contract of each method is the one of the same method there.
 *
 * <p>Implementations start no thread: {@link #output()} is read, and {@link #waitFor} waits, on the caller's
 * thread. {@link #close()} may be called from any thread and must wake a thread blocked in a read of
 * {@link #output()}. If the sandbox is removed, the output ends and {@link #waitFor} reports
 * {@link ExecResult.Termination#KILLED}, whoever removed it.
 */
public interface TerminalConnection extends AutoCloseable {

    /**
     * Bytes typed at the terminal.
     *
     * @return the input stream of the terminal
     */
    OutputStream input();

    /**
     * What the terminal displays; {@code -1} at the end.
     *
     * @return the output of the terminal
     */
    InputStream output();

    /**
     * Resizes the terminal.
     *
     * @param size the new size
     */
    void resize(TerminalSize size);

    /**
     * Waits for the program's exit, up to {@code timeout}.
     *
     * @param timeout how long to wait; zero only looks
     * @return the status (empty output) once the program ended, else empty
     */
    Optional<ExecResult> waitFor(Duration timeout);

    /** Kills the program if it still runs and ends the output. Idempotent. */
    @Override
    void close();
}
