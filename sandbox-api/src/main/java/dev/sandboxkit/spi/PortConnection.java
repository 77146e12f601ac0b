package dev.sandboxkit.spi;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * One duplex byte stream to a TCP port inside a sandbox, opened by {@link SandboxDriver#connect}: what a
 * process in the sandbox would get from {@code connect(127.0.0.1:port)}. The engine reads {@link #input()}
 * on one thread and writes {@link #output()} on another at the same time; implementations must allow that.
 * {@link #close()} may be called from any thread and must wake both.
 */
public interface PortConnection extends AutoCloseable {

    /**
     * The bytes the service in the sandbox sends. Reading blocks until bytes arrive; it returns {@code -1}
     * once the service closed its side, the port refused the connection, or the sandbox went away.
     *
     * @return the stream from the sandbox
     */
    InputStream input();

    /**
     * The bytes to send to the service. Writing blocks while the service does not read (flow control).
     *
     * @return the stream to the sandbox
     */
    OutputStream output();

    /**
     * Half-closes: the service reads end of stream, while {@link #input()} still delivers what it sends after.
     *
     * @throws IOException if the connection is broken
     */
    void shutdownOutput() throws IOException;

    /** Closes both directions and releases what the connection holds in the sandbox. Idempotent. */
    @Override
    void close();
}
