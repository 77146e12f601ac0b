package dev.sandboxkit.storage.s3;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A loopback TCP relay to the S3 server that stops passing requests on once {@code stallAfter} bytes went up: an
 * upload caught in the middle, for as long as the test wants.
 */
final class StallingProxy implements AutoCloseable {
    private final ServerSocket server;
    private final int target;
    private final long stallAfter;
    private final AtomicLong up = new AtomicLong();
    private final CountDownLatch stalled = new CountDownLatch(1);
    private final CopyOnWriteArrayList<Socket> sockets = new CopyOnWriteArrayList<>();

    StallingProxy(int target, long stallAfter) throws IOException {
        this.target = target;
        this.stallAfter = stallAfter;
        this.server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Thread t = new Thread(this::accept, "stalling-proxy");
        t.setDaemon(true);
        t.start();
    }

    int port() {
        return server.getLocalPort();
    }

    CountDownLatch stalled() {
        return stalled;
    }

    private void accept() {
        try {
            while (true) {
                Socket client = server.accept();
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
                sockets.add(client);
                sockets.add(upstream);
                pump(client.getInputStream(), upstream.getOutputStream(), true);
                pump(upstream.getInputStream(), client.getOutputStream(), false);
            }
        } catch (IOException closed) {
            // closed by the test
        }
    }

    private void pump(InputStream in, OutputStream out, boolean request) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[8192];
            try {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    if (request && up.addAndGet(n) > stallAfter) {
                        stalled.countDown();
                        Thread.sleep(Long.MAX_VALUE); // hold the rest: the upload hangs mid-way
                    }
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException ended) {
                // a side closed
            }
        }, "stalling-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
    }
}
