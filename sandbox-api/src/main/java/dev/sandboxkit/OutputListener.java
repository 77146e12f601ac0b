package dev.sandboxkit;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.Objects;

/**
 * Receives exec output as it arrives, before any cap is applied: a listener sees every byte even
 * when {@link ExecResult} keeps only the first {@link ExecRequest#stdoutLimit()} bytes.
 *
 * <p><b>Threading:</b> calls for one exec are made one at a time, in arrival order, on the thread
 * that called {@code exec} (or {@link ShellSession#exec(ExecRequest)}) for the Docker driver, on its command channel and
 * on plain execs alike, or on a driver I/O thread for other drivers.
 * Never concurrently for one exec. The array is only valid during the call; copy what you keep.
 * A listener that throws aborts the exec with a {@link SandboxExecException}.
 */
@FunctionalInterface
public interface OutputListener {

    /**
     * Called with the next chunk of output.
     *
     * @param stream which stream the bytes came from
     * @param bytes  a buffer holding the chunk; valid only during this call
     * @param offset start of the chunk in {@code bytes}
     * @param length number of bytes in the chunk
     */
    void onOutput(ExecStream stream, byte[] bytes, int offset, int length);

    /**
     * A listener that copies stdout and stderr to two output streams, for example to stream a
     * large output to a file without holding it in memory.
     *
     * @param stdout where stdout goes
     * @param stderr where stderr goes
     * @return the listener
     */
    static OutputListener to(OutputStream stdout, OutputStream stderr) {
        Objects.requireNonNull(stdout, "stdout");
        Objects.requireNonNull(stderr, "stderr");
        return (stream, bytes, offset, length) -> {
            try {
                (stream == ExecStream.STDOUT ? stdout : stderr).write(bytes, offset, length);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };
    }
}
