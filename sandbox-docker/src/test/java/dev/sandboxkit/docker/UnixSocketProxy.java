package dev.sandboxkit.docker;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A unix-socket proxy in front of the real engine socket, to make the engine "go away" for one manager without
 * disturbing anything else: {@link #stop()} cuts every connection and removes the socket (connection refused),
 * {@link #start()} listens again on the same path.
 */
final class UnixSocketProxy implements AutoCloseable {
    private final Path path;
    private final Path target;
    private final Set<SocketChannel> open = ConcurrentHashMap.newKeySet();
    private volatile ServerSocketChannel server;

    UnixSocketProxy(Path path, Path target) {
        this.path = path;
        this.target = target;
    }

    /** The address to give the driver as {@code docker.host}. */
    String dockerHost() {
        return "unix://" + path;
    }

    synchronized UnixSocketProxy start() throws IOException {
        Files.deleteIfExists(path);
        ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        s.bind(UnixDomainSocketAddress.of(path));
        server = s;
        Thread t = new Thread(() -> accept(s), "uds-proxy-accept");
        t.setDaemon(true);
        t.start();
        return this;
    }

    private void accept(ServerSocketChannel s) {
        while (s.isOpen()) {
            try {
                SocketChannel client = s.accept();
                open.add(client);
                SocketChannel upstream = SocketChannel.open(UnixDomainSocketAddress.of(target));
                open.add(upstream);
                if (!s.isOpen()) {
                    closeQuietly(client);
                    closeQuietly(upstream);
                    return;
                }
                pump(client, upstream);
                pump(upstream, client);
            } catch (IOException e) {
                // closed by stop(), or the engine refused: the client sees its socket close
            }
        }
    }

    /** Copies one direction; half-closes the other side at EOF (the exec protocol relies on it). */
    private void pump(SocketChannel from, SocketChannel to) {
        Thread t = new Thread(() -> {
            ByteBuffer buf = ByteBuffer.allocate(65536);
            try {
                while (from.read(buf) >= 0) {
                    buf.flip();
                    while (buf.hasRemaining()) {
                        to.write(buf);
                    }
                    buf.clear();
                }
                to.shutdownOutput();
            } catch (IOException e) {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "uds-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Refuses new connections and cuts every live one: the engine is unreachable. */
    synchronized void stop() throws IOException {
        ServerSocketChannel s = server;
        if (s != null) {
            closeQuietly(s);
        }
        for (SocketChannel c : open) {
            closeQuietly(c);
        }
        open.clear();
        Files.deleteIfExists(path);
    }

    @Override
    public void close() throws IOException {
        stop();
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // best effort
        }
    }
}
