package dev.sandboxkit.store.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A loopback TCP proxy in front of a real server, to make the server "go away" for a client: {@link #stop()}
 * refuses new connections and cuts existing ones, {@link #start()} listens again on the same port,
 * {@link #cutConnections()} resets live connections only.
 */
final class TcpProxy implements AutoCloseable {
    private final int targetPort;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile ServerSocket server;
    private int port;

    TcpProxy(int targetPort) {
        this.targetPort = targetPort;
    }

    synchronized TcpProxy start() throws IOException {
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
        port = s.getLocalPort();
        server = s;
        Thread t = new Thread(() -> accept(s), "tcp-proxy-accept-" + port);
        t.setDaemon(true);
        t.start();
        return this;
    }

    int port() {
        return port;
    }

    private void accept(ServerSocket s) {
        while (!s.isClosed()) {
            try {
                Socket client = s.accept();
                Socket upstream = new Socket();
                sockets.add(client);
                sockets.add(upstream);
                // stop() closes the server before it cuts the registered sockets: a connection accepted while
                // it ran is either registered in time to be cut or sees the server closed here.
                if (s.isClosed()) {
                    closeQuietly(client);
                    closeQuietly(upstream);
                    return;
                }
                upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 5000);
                pump(client, upstream);
                pump(upstream, client);
            } catch (IOException e) {
                // closed, or upstream refused: the client sees its socket close
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // cut
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "tcp-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Resets every live connection (RST, like a crashed server); keeps listening. */
    void cutConnections() {
        for (Socket s : sockets) {
            try {
                s.setSoLinger(true, 0);
            } catch (IOException ignored) {
                // closing anyway
            }
            closeQuietly(s);
        }
        sockets.clear();
    }

    /** Stops listening (connection refused) and cuts every live connection. */
    synchronized void stop() {
        ServerSocket s = server;
        if (s != null) {
            closeQuietly(s);
        }
        cutConnections();
    }

    @Override
    public void close() {
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
