package dev.sandboxkit.docker.internal.engine;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.spi.PortConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

import static dev.sandboxkit.docker.internal.engine.EngineClient.segment;

/**
 * A byte stream to a TCP port inside a container that has no network: an attached exec of
 * {@code nc 127.0.0.1 <port>} (BusyBox or any netcat that half-closes the socket when its stdin ends and exits
 * when the socket ends). The caller's bytes go to the exec's stdin over the hijacked engine connection; nc's
 * stdout comes back in the engine's multiplexed frames, which {@link #input()} unwraps; its stderr (a refused
 * connection, a missing {@code nc}) is kept, up to 1 KiB, for the log. Two engine calls per connection (exec
 * create and start), one process in the container while it lasts.
 *
 * <p>One thread reads {@link #input()} while another writes {@link #output()}; {@link #close()} may come from any
 * thread and wakes both.
 */
public final class EngineTunnel implements PortConnection {
    private static final Logger log = LoggerFactory.getLogger(EngineTunnel.class);
    private static final int MAX_DIAGNOSTIC = 1024;

    private final String containerId;
    private final int port;
    private final String marker;
    private final DuplexStream conn;
    /** Engine frames as read, before the demultiplexer takes nc's stdout out of them. Reader thread only. */
    private final ByteBuffer raw = ByteBuffer.allocate(EngineConnection.BUFFER_SIZE).flip();
    /** Run once when the tunnel closes: deregisters, and kills the relay if it still runs. */
    private final java.util.function.Consumer<EngineTunnel> onClose;
    private final StreamDemux demux = new StreamDemux();
    /** stdout payload unwrapped and not yet read; read mode. */
    private final ByteBuffer pending = ByteBuffer.allocate(EngineConnection.BUFFER_SIZE).flip();
    private final ByteArrayOutputStream diagnostic = new ByteArrayOutputStream();
    private final InputStream input = new Input();
    private final OutputStream output = new Output();
    private int frameType;
    private long delivered;
    private volatile boolean ended;
    private volatile boolean closed;

    private EngineTunnel(String containerId, int port, String marker, DuplexStream conn,
                         java.util.function.Consumer<EngineTunnel> onClose) {
        this.containerId = containerId;
        this.port = port;
        this.marker = marker;
        this.conn = conn;
        this.onClose = onClose;
    }

    /**
     * Starts the relay exec and returns its stream.
     *
     * @param client      the engine
     * @param containerId the container
     * @param port        the port on the container's loopback
     * @param onClose     run once when the tunnel closes
     * @return the open tunnel
     * @throws SandboxNotFoundException if the container is gone or not running
     * @throws SandboxExecException     if the engine refused the exec
     */
    private static EngineTunnel open(EngineClient client, String containerId, int port,
                                     java.util.function.Consumer<EngineTunnel> onClose) {
        String marker = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
        String execId;
        EngineClient.Started started;
        // nc prints nothing when it starts: the relay stays unconfirmed in the gate until it closes.
        try (ExecGate.Pass pass = client.gate().enter(containerId)) {
            execId = create(client, containerId, port, marker);
            pass.started(execId);
            started = client.startExec(execId, System.nanoTime() + EngineClient.REQUEST_TIMEOUT_NANOS);
        } catch (InterruptedIOException e) {
            Thread.currentThread().interrupt();
            throw new SandboxExecException("interrupted while opening a relay to port " + port);
        } catch (IOException e) {
            throw client.host().unreachable(e);
        }
        if (started.error() != null) {
            client.gate().done(containerId, execId);
            EngineClient.Response error = started.error();
            if (error.status() == 404 || error.status() == 409 || EngineErrors.removal(error.message())) {
                throw new SandboxNotFoundException("container " + EngineExec.shortId(containerId) + " is gone: "
                        + error.message());
            }
            throw new SandboxExecException("the engine could not start the relay to port " + port + " ("
                    + error.status() + "): " + error.message());
        }
        EngineConnection upgraded = started.stream();
        DuplexStream conn;
        try {
            conn = upgraded.duplex();
        } catch (IOException | RuntimeException e) {
            upgraded.close();
            client.gate().done(containerId, execId);
            throw new SandboxExecException("cannot relay to port " + port + ": " + e, e);
        }
        return new EngineTunnel(containerId, port, marker, conn, tunnel -> {
            client.gate().done(containerId, execId);
            onClose.accept(tunnel);
        });
    }

    /** POST /containers/{id}/exec of the relay: stdin, stdout and stderr attached, no TTY (bytes stay raw). */
    private static String create(EngineClient client, String containerId, int port, String marker) {
        ObjectNode body = EngineClient.JSON.createObjectNode();
        body.put("AttachStdin", true).put("AttachStdout", true).put("AttachStderr", true).put("Tty", false);
        body.putArray("Cmd").add("nc").add("127.0.0.1").add(Integer.toString(port));
        // The marker lets the exec kill script find it, like every other exec of this driver.
        body.putArray("Env").add(EngineExec.MARKER + "=" + marker);
        body.put("WorkingDir", "/");
        EngineClient.Response r;
        try {
            r = client.call("POST", "/containers/" + segment(containerId) + "/exec", body);
        } catch (SocketTimeoutException e) {
            throw client.host().unreachable(e);
        } catch (InterruptedIOException e) {
            Thread.currentThread().interrupt();
            throw new SandboxExecException("interrupted while opening a relay to port " + port);
        } catch (IOException e) {
            throw client.host().unreachable(e);
        }
        if (r.status() == 201) {
            try {
                return r.json().get("Id").asText();
            } catch (IOException | RuntimeException e) {
                throw new SandboxExecException("unexpected exec create answer: " + r.message(), e);
            }
        }
        if (r.status() == 404 || r.status() == 409 || EngineErrors.removal(r.message())) {
            throw new SandboxNotFoundException("container " + EngineExec.shortId(containerId)
                    + " is gone or not running: " + r.message());
        }
        throw new SandboxExecException("the engine refused the relay exec (" + r.status() + "): " + r.message());
    }

    @Override
    public InputStream input() {
        return input;
    }

    @Override
    public OutputStream output() {
        return output;
    }

    @Override
    public void shutdownOutput() throws IOException {
        conn.shutdownOutput();
    }

    /**
     * Closes the engine connection, which wakes both threads. The relay's stdin then ends, but nc only
     * half-closes its socket on that and waits for the service: if the relay had not ended by itself, it is
     * killed (one more exec), unless its container is being removed anyway.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        conn.close();
        onClose.accept(this);
    }

    /** Whether nc ended by itself (its output reached end of stream). */
    boolean ended() {
        return ended;
    }

    /** The stream ended: say why when nothing came back (a refused connection, no {@code nc} in the image). */
    private void streamEnded() {
        if (ended) {
            return;
        }
        ended = true;
        String text;
        synchronized (diagnostic) {
            text = diagnostic.toString(StandardCharsets.UTF_8).strip();
        }
        if (text.isEmpty()) {
            return;
        }
        if (text.contains("not found") || text.contains("no such file")) {
            log.warn("Relay to port {} in {} failed: {} (port forwarding needs nc in the image)", port,
                    EngineExec.shortId(containerId), text);
        } else {
            log.debug("Relay to port {} in {} ended after {} bytes: {}", port, EngineExec.shortId(containerId),
                    delivered, text);
        }
    }

    private final StreamDemux.Sink sink = new StreamDemux.Sink() {
        @Override
        public void header(int type, long size) {
            frameType = type;
        }

        @Override
        public void payload(byte[] array, int offset, int length) {
            if (frameType == 1) {
                pending.put(array, offset, length);
                return;
            }
            synchronized (diagnostic) {
                int room = MAX_DIAGNOSTIC - diagnostic.size();
                if (room > 0) {
                    diagnostic.write(array, offset, Math.min(room, length));
                }
            }
        }
    };

    /** nc's stdout, unwrapped from the engine's frames. Reader thread only. */
    private final class Input extends InputStream {
        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            while (!pending.hasRemaining()) {
                if (ended) {
                    return -1;
                }
                ByteBuffer in = raw;
                if (!in.hasRemaining()) {
                    int n;
                    try {
                        n = conn.read(in.array(), 0, in.capacity(), EngineConnection.NO_DEADLINE);
                    } catch (IOException e) {
                        if (closed) {
                            return -1;
                        }
                        throw e;
                    }
                    if (n < 0) {
                        if (closed) {
                            return -1; // our close, not nc's end: the relay may still run and is killed
                        }
                        streamEnded();
                        return -1;
                    }
                    in.position(0).limit(n);
                }
                pending.clear();
                demux.consume(in, sink);
                pending.flip();
            }
            int n = Math.min(len, pending.remaining());
            pending.get(b, off, n);
            delivered += n;
            return n;
        }

        @Override
        public int available() {
            return pending.remaining();
        }

        @Override
        public void close() {
            EngineTunnel.this.close();
        }
    }

    /** nc's stdin. Writer thread only. */
    private final class Output extends OutputStream {
        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            conn.write(b, off, len);
        }

        @Override
        public void close() {
            EngineTunnel.this.close();
        }
    }

    /**
     * The open tunnels of one driver by container, so that a removal ends them at once (the engine may leave an
     * attached stream open for a moment after the container died).
     */
    public static final class Registry {
        private final EngineClient client;
        private final EngineExec execs;
        private final Map<String, Set<EngineTunnel>> byContainer = new ConcurrentHashMap<>();
        /** Containers being removed: their relays die with them, no kill needed. */
        private final Set<String> removing = ConcurrentHashMap.newKeySet();

        /**
         * An empty registry.
         *
         * @param client the engine
         * @param execs  kills relays that outlive their connection
         */
        public Registry(EngineClient client, EngineExec execs) {
            this.client = client;
            this.execs = execs;
        }

        /**
         * Opens a tunnel and tracks it until it closes.
         *
         * @param containerId the container
         * @param port        the port on its loopback
         * @return the open tunnel
         * @throws SandboxNotFoundException if the container is gone or not running
         * @throws SandboxExecException     if the engine refused the exec
         */
        public EngineTunnel open(String containerId, int port) {
            EngineTunnel t = EngineTunnel.open(client, containerId, port, this::closed);
            byContainer.computeIfAbsent(containerId, k -> ConcurrentHashMap.newKeySet()).add(t);
            return t;
        }

        /**
         * Called before a container is removed: its tunnels will not need a kill.
         *
         * @param containerId the container
         */
        public void containerRemoving(String containerId) {
            removing.add(containerId);
        }

        /**
         * Closes the container's tunnels (it was removed).
         *
         * @param containerId the container
         */
        public void containerRemoved(String containerId) {
            removing.add(containerId);
            try {
                Set<EngineTunnel> open = byContainer.remove(containerId);
                if (open != null) {
                    open.forEach(EngineTunnel::close);
                }
            } finally {
                removing.remove(containerId);
            }
        }

        /** Closes every tunnel (the driver closes); relays that still run are left to their containers. */
        public void closeAll() {
            for (String id : Set.copyOf(byContainer.keySet())) {
                containerRemoved(id);
            }
        }

        private void closed(EngineTunnel t) {
            byContainer.computeIfPresent(t.containerId, (k, set) -> {
                set.remove(t);
                return set.isEmpty() ? null : set;
            });
            if (!t.ended() && !removing.contains(t.containerId)) {
                execs.killMarked(t.containerId, t.marker);
            }
        }
    }
}
