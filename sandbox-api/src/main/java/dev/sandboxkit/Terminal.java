package dev.sandboxkit;

import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.Optional;

/**
 * A command running on a pseudo-terminal in a sandbox, opened with {@link Sandbox#terminal(ExecRequest)}: raw
 * bytes in and out, as an interactive program (a shell, a REPL, {@code top}, an editor) expects.
 *
 * <p><b>Bytes.</b> What is written to {@link #input()} is typed at the terminal: the terminal echoes it and
 * interprets control characters ({@code 0x03} Ctrl-C interrupts the foreground program, {@code 0x04} Ctrl-D at
 * the start of a line is end of file, {@code \r} is Enter). {@link #output()} gives everything the terminal
 * displays, stdout and stderr merged, escape sequences included, as it arrives; it ends ({@code -1}) once the
 * program and everything it left holding the terminal have exited, or the terminal was closed or its sandbox
 * removed. Nothing is buffered beyond what the backend holds: a program whose output nobody reads blocks, as
 * on any terminal.
 *
 * <p><b>Threads.</b> No thread is started for a terminal: the caller reads {@link #output()} on a thread of
 * its own choosing. One thread may read while another writes {@link #input()}, resizes or waits; each stream
 * is for one thread at a time.
 *
 * <p><b>Lifetime.</b> An open terminal counts as activity, like a running exec: the idle reaper never reaps its
 * sandbox while the program runs. It stops counting once it is closed, its output reached its end, or
 * {@link #waitFor} reported the exit: close terminals you are done with. Destroying the sandbox (or its
 * maximum lifetime, or closing the manager) kills the program: the output ends and the status says
 * {@link ExecResult.Termination#KILLED}. A terminal never resumes a reaped sandbox: it lives in one container.
 */
public interface Terminal extends AutoCloseable {

    /**
     * Bytes typed at the terminal. Writes go to the program at once ({@code flush} is not needed); a write after
     * the program ended or the terminal was closed throws an {@link java.io.IOException}.
     *
     * @return the terminal's input, one stream for the terminal's lifetime
     */
    OutputStream input();

    /**
     * What the terminal displays, as raw bytes. {@code read} blocks until bytes arrive and returns {@code -1} at
     * the end (program exited, terminal closed, sandbox removed); an interrupted read throws an
     * {@link java.io.InterruptedIOException} and leaves the terminal open.
     *
     * @return the terminal's output, one stream for the terminal's lifetime
     */
    InputStream output();

    /**
     * The size last set.
     *
     * @return the terminal's size
     */
    TerminalSize size();

    /**
     * Resizes the terminal: the program gets {@code SIGWINCH} and {@code stty size} reports the new size. Ignored
     * once the program ended. Docker applies the size before this returns; Podman hands it to its monitor
     * process, which applies it a moment later, so input typed right after may still see the old size.
     *
     * @param size the new size
     * @throws SandboxExecException if the backend refused the resize of a running program
     */
    void resize(TerminalSize size);

    /**
     * Waits until the program exits, up to {@code timeout}. The result has the exit code and how the program
     * ended ({@link ExecResult.Termination#EXITED}, {@code TIMED_OUT} for the request's timeout, {@code KILLED}
     * when the terminal was closed or its sandbox removed); its stdout and stderr are empty: the output went to
     * {@link #output()}. Keep reading the output meanwhile: a program whose output is not read may never exit.
     *
     * @param timeout how long to wait; {@link Duration#ZERO} only looks
     * @return the status once the program ended, empty while it still runs
     * @throws SandboxExecException if the backend could not be asked, or the waiting thread was interrupted (its
     *                              interrupt flag is then set again)
     */
    Optional<ExecResult> waitFor(Duration timeout);

    /**
     * Ends the terminal: kills the program (and what it started on the terminal) if it still runs, and ends
     * {@link #output()}. Idempotent; never throws for a sandbox that is gone.
     */
    @Override
    void close();
}
