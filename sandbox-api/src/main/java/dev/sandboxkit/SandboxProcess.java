package dev.sandboxkit;

import java.time.Duration;

/**
 * A handle on a background process started by {@link Sandbox#start(ExecRequest, ProcessOptions)}, or reattached by
 * its {@link #id()} with {@link Sandbox#process(String)} or {@link SandboxManager#process(String, String)}.
 *
 * <p><b>Where its state lives.</b> In the container, not in the JVM: a small POSIX {@code sh} supervisor runs
 * the command in a session and process group of its own, records its pid and how it ended, holds its stdin open
 * and keeps the newest output of each stream in a bounded window under {@code /tmp/.sandboxkit/proc/<id>}. Every
 * method here is one short exec into the session's live container (a few milliseconds on Docker's command
 * channel), so any number of handles, in any manager or JVM that reaches the engine and the store, see the same
 * process. The id names the container the process runs in: once that container is gone (reaped, destroyed, or
 * replaced on resume), every handle reports {@link ProcessStatus.State#LOST}, never {@code RUNNING}.
 *
 * <p><b>On a terminal.</b> Started with {@link ExecRequest#withTty}, the command runs under {@code script(1)} in the
 * container, which holds the pseudo-terminal there: the same state, window and reattach apply, the terminal's
 * output (stderr merged) is the {@link ExecStream#STDOUT} stream, and any handle can {@link #resize} it. The image
 * needs {@code script} (util-linux's, or BusyBox's applet) and {@code stty}; without them the start throws
 * {@link SandboxUnsupportedException}.
 *
 * <p><b>Activity.</b> A running process started with {@link ProcessOptions#countsAsActivity()} (the default)
 * holds off the idle TTL. Reading it does not: {@link #status()}, {@link #output}, {@link #follow} and
 * {@link #waitFor} only observe. Through the owning manager's handles, {@link #writeStdin}, {@link #closeStdin},
 * {@link #signal} and {@link #kill} are activity like an exec.
 *
 * <p>Thread-safe. Handles hold no thread and no connection: {@link #close()} only ends this handle's
 * {@link #follow}; the process keeps running.
 */
public interface SandboxProcess extends AutoCloseable {

    /**
     * The process's id: stable, unique within its session, and enough (with the session id) to reattach.
     *
     * @return the id
     */
    String id();

    /**
     * The session the process runs in.
     *
     * @return the session id
     */
    String sessionId();

    /**
     * The process's state now, read from the container.
     *
     * @return the status; {@link ProcessStatus.State#LOST} (with the reason) once its container is gone
     * @throws SandboxUnavailableException if the backend cannot be reached (retryable)
     * @throws SandboxExecException        if the sandbox's answer could not be read
     */
    ProcessStatus status();

    /**
     * Reads a stream's output from an offset. Never blocks for output that has not come yet.
     *
     * @param stream   which stream
     * @param offset   the stream offset to read from (0 for the start; a previous read's
     *                 {@link ProcessOutput#nextOffset()} to continue); an offset no longer retained reads from the
     *                 oldest retained byte and reports the drop
     * @param maxBytes at most this many bytes, 1..16 MiB: what bounds the JVM's memory
     * @return the bytes and offsets; an empty read (with the status) if the process is lost
     * @throws IllegalArgumentException if the offset is negative or {@code maxBytes} out of range
     */
    ProcessOutput output(ExecStream stream, long offset, int maxBytes);

    /**
     * Delivers both streams' output to the listener, from the start of what is retained, until the process has
     * ended and its output is delivered, or this handle is closed. Same as {@code follow(listener, 0, 0)}.
     *
     * @param listener receives the output
     * @return how it ended
     */
    default FollowResult follow(OutputListener listener) {
        return follow(listener, 0, 0);
    }

    /**
     * Delivers both streams' output, from the given offsets on, to the listener until the process has ended and
     * its output is delivered (output kept open by something the process left running is waited for at most
     * 2 s after the exit, as an exec does), the process is lost, or this handle is {@linkplain #close() closed}.
     * Blocks the calling thread, which is the thread that calls the listener: the caller chooses the thread,
     * and nothing is started. The handle polls the sandbox (about every 100 ms while there is no new output).
     * Bytes that fell out of the retained window between two polls are skipped and counted in the result.
     *
     * @param listener     receives the output, one chunk at a time, in order per stream; a listener that throws
     *                     ends the follow with that exception (the process keeps running)
     * @param stdoutOffset the stdout offset to start from
     * @param stderrOffset the stderr offset to start from
     * @return how it ended, with the offsets to continue from
     * @throws SandboxExecException if the calling thread is interrupted (its interrupt flag is kept)
     */
    FollowResult follow(OutputListener listener, long stdoutOffset, long stderrOffset);

    /**
     * Waits for the process to end. An end ({@code EXITED}, {@code SIGNALED}) is returned only once the output
     * is complete too: a read right after it sees every byte the process wrote, and
     * {@link ProcessOutput#isComplete()} says so. Output kept open by something the process left running is
     * waited for at most 2 s after the exit, as {@link #follow} does (reads then show the stream not complete yet);
     * that wait can outlast the timeout.
     *
     * @param timeout how long to wait at most for the process to end
     * @return the status: {@link ProcessStatus.State#RUNNING} if it still runs when the timeout is up
     * @throws SandboxExecException if the calling thread is interrupted (its interrupt flag is kept)
     */
    ProcessStatus waitFor(Duration timeout);

    /**
     * Sends a signal to the process's whole process group: the command and everything it started that stayed in
     * its group, also after the command itself ended. Returns at once; {@link #waitFor} sees the effect.
     *
     * @param signal the signal number, 1..64 (15 is SIGTERM, 2 SIGINT, 9 SIGKILL)
     * @return {@code true} if the group still had a process to signal
     */
    boolean signal(int signal);

    /**
     * Kills the process's whole process group with SIGKILL. Same as {@code signal(9)}.
     *
     * @return {@code true} if the group still had a process to kill
     */
    default boolean kill() {
        return signal(9);
    }

    /**
     * Writes bytes to the process's stdin. The sandbox buffers up to a pipe's capacity (64 KiB on Linux) that the
     * process has not read yet; a write that does not fit waits for it, at most 30 s.
     *
     * @param bytes what to write
     * @throws SandboxExecException if the process no longer runs, its stdin was closed, or the write did not finish
     */
    void writeStdin(byte[] bytes);

    /**
     * Closes the process's stdin: it reads EOF once it has read what was written. Idempotent.
     */
    void closeStdin();

    /**
     * Whether the process runs on a pseudo-terminal (it was started with {@link ExecRequest#withTty}). Read from
     * the sandbox, so a reattached handle knows it too.
     *
     * @return {@code true} if it has a terminal; {@code false} without one, or once it is lost or removed
     * @throws SandboxExecException if the sandbox's answer could not be read
     */
    default boolean hasTerminal() {
        return false;
    }

    /**
     * Resizes the process's terminal: sets the window size of its pty in the sandbox, so its foreground program
     * gets {@code SIGWINCH} and {@code stty size} reports the new size. Ignored once the process ended. Any
     * handle may resize, as for {@link #signal}.
     *
     * @param size the new size
     * @throws SandboxExecException        if the process is lost or removed, or the sandbox refused the resize
     * @throws SandboxUnsupportedException if the process has no terminal
     */
    default void resize(TerminalSize size) {
        throw new SandboxUnsupportedException("this process handle cannot resize a terminal");
    }

    /**
     * Kills what is left of the process (its whole group) and deletes what the sandbox kept of it, output included.
     * Afterwards every handle reports it {@link ProcessStatus.State#LOST}. Idempotent.
     */
    void remove();

    /** Ends this handle: a {@link #follow} in progress returns. The process keeps running. */
    @Override
    void close();
}
