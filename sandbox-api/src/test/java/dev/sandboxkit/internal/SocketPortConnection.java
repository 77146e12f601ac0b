package dev.sandboxkit.internal;

import dev.sandboxkit.spi.PortConnection;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;

/** Test double for a sandbox-side {@link PortConnection}: one end of a loopback socket pair. */
record SocketPortConnection(Socket socket) implements PortConnection {

    @Override
    public InputStream input() {
        try {
            return socket.getInputStream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public OutputStream output() {
        try {
            return socket.getOutputStream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void shutdownOutput() throws IOException {
        socket.shutdownOutput();
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // idempotent close
        }
    }
}
