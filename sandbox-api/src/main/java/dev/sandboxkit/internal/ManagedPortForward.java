package dev.sandboxkit.internal;

import dev.sandboxkit.PortForward;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.spi.PortConnection;
import dev.sandboxkit.spi.ComputeDriver;
import dev.sandboxkit.spi.SandboxDriver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * One forward: a server socket whose accept loop runs on the manager's I/O executor, and per accepted
 * connection a relay to the sandbox through {@link SandboxDriver#connect}, pumped by two tasks on that
 * executor (sandbox to client on the connection's task, client to sandbox on a second one).
 */
final class ManagedPortForward implements PortForward {
    private static final Logger log = LoggerFactory.getLogger(ManagedPortForward.class);
    private static final int BUFFER = 16 * 1024;
    /**
     * After the sandbox side ended, how long the client may keep its side open before the connection is cut
     * (the service can no longer read it; an open connection would hold off the idle TTL).
     */
    private static final long LINGER_MILLIS = 2_000;

    /** What the engine does for a forward: count its connections as activity, forget it once closed. */
    interface Host {
        /**
         * Registers a connection as activity on the forward's container, like a running exec.
         *
         * @return what ends it, or null if that container is no longer the session's live one
         */
        Runnable beginConnection(ManagedPortForward forward);

        /** The forward closed: stop tracking it. */
        void closed(ManagedPortForward forward);
    }

    final String sessionId;
    final String sandboxId;
    private final int containerPort;
    private final ServerSocket server;
    private final InetSocketAddress local;
    private final byte[] token;
    private final int tokenTimeoutMillis;
    private final ComputeDriver compute;
    private final Executor io;
    private final Host host;
    private final Set<Relay> relays = ConcurrentHashMap.newKeySet();
    /** Counted down once the accept loop left {@code accept()} for good: only then is the port closed. */
    private final CountDownLatch acceptLoopDone = new CountDownLatch(1);
    private volatile Thread acceptThread;
    private volatile boolean open = true;

    ManagedPortForward(String sessionId, String sandboxId, int containerPort, ServerSocket server, String token,
                       int tokenTimeoutMillis, ComputeDriver compute, Executor io, Host host) {
        this.sessionId = sessionId;
        this.sandboxId = sandboxId;
        this.containerPort = containerPort;
        this.server = server;
        this.local = new InetSocketAddress(server.getInetAddress(), server.getLocalPort());
        this.token = token == null ? null : token.getBytes(StandardCharsets.US_ASCII);
        this.tokenTimeoutMillis = tokenTimeoutMillis;
        this.compute = compute;
        this.io = io;
        this.host = host;
    }

    /** Starts the accept loop on the I/O executor. */
    void start() {
        try {
            io.execute(this::acceptLoop);
        } catch (RuntimeException rejected) {
            acceptLoopDone.countDown(); // no loop to wait for
            throw rejected;
        }
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public int containerPort() {
        return containerPort;
    }

    @Override
    public String sessionId() {
        return sessionId;
    }

    @Override
    public Optional<String> token() {
        return token == null ? Optional.empty() : Optional.of(new String(token, StandardCharsets.US_ASCII));
    }

    @Override
    public boolean isOpen() {
        // The socket, not the flag: a close running on another thread sets the flag first, and "not open" must
        // already mean "refused".
        return !server.isClosed();
    }

    /**
     * Closes the listener and cuts the connections; returns once the port is closed. Closing a server socket
     * that a thread is blocked accepting on only signals that thread: the kernel keeps the socket listening (and
     * completing handshakes) until the thread leaves {@code accept()}, so this waits for the accept loop.
     */
    @Override
    public void close() {
        boolean first;
        synchronized (this) {
            first = open;
            open = false;
        }
        if (first) {
            closeQuietly(server); // refuses new connections once the accept loop has left accept()
            for (Relay r : relays) {
                r.cut();
            }
            host.closed(this);
        }
        if (Thread.currentThread() != acceptThread) {
            awaitAcceptLoop();
        }
        if (first) {
            log.debug("Session {}: forward {} -> container port {} closed", sessionId, local, containerPort);
        }
    }

    private void awaitAcceptLoop() {
        boolean interrupted = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        try {
            while (true) {
                try {
                    if (!acceptLoopDone.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                        log.warn("Session {}: forward {}: the accept loop did not stop within 10 s", sessionId, local);
                    }
                    return;
                } catch (InterruptedException e) {
                    interrupted = true; // the port must be closed when close() returns: wait on, then restore
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void acceptLoop() {
        String name = Thread.currentThread().getName();
        Thread.currentThread().setName(name + " forward " + local.getPort() + "->" + containerPort);
        acceptThread = Thread.currentThread();
        try {
            while (open) {
                Socket client;
                try {
                    client = server.accept();
                } catch (IOException e) {
                    if (open) {
                        log.warn("Session {}: forward {} stopped accepting: {}", sessionId, local, e.toString());
                        close();
                    }
                    return;
                }
                Relay relay = new Relay(client);
                relays.add(relay);
                if (!open) {
                    relay.close();
                    return;
                }
                try {
                    io.execute(relay::run);
                } catch (RejectedExecutionException full) {
                    log.warn("Session {}: forward {}: the I/O executor refused a connection", sessionId, local);
                    relay.close();
                }
            }
        } finally {
            acceptThread = null;
            Thread.currentThread().setName(name);
            acceptLoopDone.countDown();
        }
    }

    /** One accepted connection and its relay to the sandbox. */
    private final class Relay {
        private final Socket client;
        private final CountDownLatch upstreamDone = new CountDownLatch(1);
        private volatile PortConnection sandbox;
        private volatile boolean closed;

        Relay(Socket client) {
            this.client = client;
        }

        void run() {
            Runnable end = null;
            try {
                client.setTcpNoDelay(true);
                if (token != null && !tokenAccepted()) {
                    return;
                }
                if (!closed) {
                    end = host.beginConnection(ManagedPortForward.this);
                }
                if (end == null) {
                    ManagedPortForward.this.close(); // its container is gone
                    return;
                }
                PortConnection conn;
                try {
                    conn = compute.connect(sandboxId, containerPort);
                } catch (SandboxNotFoundException gone) {
                    ManagedPortForward.this.close();
                    return;
                } catch (RuntimeException e) {
                    log.warn("Session {}: could not relay a connection to container port {}: {}", sessionId,
                            containerPort, e.toString());
                    return;
                }
                sandbox = conn;
                if (closed) {
                    return;
                }
                try {
                    io.execute(this::upstream);
                } catch (RejectedExecutionException full) {
                    log.warn("Session {}: forward {}: the I/O executor refused a pump", sessionId, local);
                    return;
                }
                downstream(conn);
            } catch (IOException e) {
                log.debug("Session {}: forwarded connection ended: {}", sessionId, e.toString());
            } finally {
                close();
                if (end != null) {
                    end.run();
                }
            }
        }

        /**
         * Reads the token line byte by byte (nothing after it may be consumed here), with the token timeout.
         * Constant-time comparison; any mismatch closes without a word.
         */
        private boolean tokenAccepted() throws IOException {
            client.setSoTimeout(tokenTimeoutMillis);
            InputStream in = client.getInputStream();
            byte[] line = new byte[token.length + 1];
            int n = 0;
            try {
                while (true) {
                    int b = in.read();
                    if (b < 0) {
                        return false;
                    }
                    if (b == '\n') {
                        break;
                    }
                    if (n == line.length) {
                        return false;
                    }
                    line[n++] = (byte) b;
                }
            } catch (SocketTimeoutException slow) {
                log.debug("Session {}: forward {}: no token within {} ms", sessionId, local, tokenTimeoutMillis);
                return false;
            }
            if (n > 0 && line[n - 1] == '\r') {
                n--;
            }
            byte[] got = java.util.Arrays.copyOf(line, n);
            if (!MessageDigest.isEqual(got, token)) {
                log.info("Session {}: forward {} refused a connection from {} with a wrong token", sessionId, local,
                        client.getRemoteSocketAddress());
                return false;
            }
            client.setSoTimeout(0);
            return true;
        }

        /** Sandbox to client; then half-close the client, give it a moment to finish, and cut. */
        private void downstream(PortConnection conn) throws IOException {
            InputStream in = conn.input();
            OutputStream out = client.getOutputStream();
            byte[] buf = new byte[BUFFER];
            int n;
            while ((n = in.read(buf)) >= 0) {
                out.write(buf, 0, n);
            }
            client.shutdownOutput();
            try {
                upstreamDone.await(LINGER_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /**
         * Client to sandbox; the client's end of stream half-closes the sandbox side. Once the sandbox side no
         * longer takes bytes (the service closed, the relay ended) the rest of the client's bytes is dropped
         * while the answer still flows the other way; a client that breaks cuts the connection.
         */
        private void upstream() {
            PortConnection conn = sandbox;
            try {
                InputStream in = client.getInputStream();
                OutputStream out = conn.output();
                byte[] buf = new byte[BUFFER];
                boolean writing = true;
                int n;
                while ((n = in.read(buf)) >= 0) {
                    if (writing) {
                        try {
                            out.write(buf, 0, n);
                            out.flush();
                        } catch (IOException sandboxSideEnded) {
                            writing = false;
                        }
                    }
                }
                if (writing) {
                    try {
                        conn.shutdownOutput();
                    } catch (IOException sandboxSideEnded) {
                        // the answer, if any, still comes the other way
                    }
                }
            } catch (IOException | RuntimeException e) {
                if (!closed) {
                    log.debug("Session {}: client-to-sandbox pump ended: {}", sessionId, e.toString());
                    close();
                }
            } finally {
                upstreamDone.countDown();
            }
        }

        /** Closes both sides; safe to call again (a late {@link #sandbox} is closed by the second call). */
        void close() {
            closed = true;
            relays.remove(this);
            closeQuietly(client);
            PortConnection conn = sandbox;
            if (conn != null) {
                closeConnection(conn);
            }
        }

        /**
         * The forward closes: cut the client now, and release the sandbox side on an I/O thread, since that may
         * cost the driver a call (killing the relay) and this may run in a lifecycle step (a reap).
         */
        void cut() {
            closed = true;
            relays.remove(this);
            closeQuietly(client);
            PortConnection conn = sandbox;
            if (conn != null) {
                try {
                    io.execute(() -> closeConnection(conn));
                } catch (RejectedExecutionException shutDown) {
                    closeConnection(conn);
                }
            }
        }

        private void closeConnection(PortConnection conn) {
            try {
                conn.close();
            } catch (RuntimeException e) {
                log.debug("Session {}: closing a relay failed: {}", sessionId, e.toString());
            }
        }
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // nothing left to release
        }
    }

    @Override
    public String toString() {
        return "PortForward[" + local + " -> " + sessionId + ":" + containerPort + (open ? "" : ", closed") + "]";
    }
}
