package dev.sandboxkit;

import java.net.InetSocketAddress;
import java.util.Optional;

/**
 * A local TCP endpoint whose connections reach a port inside a sandbox, opened by {@link Sandbox#forward(int)}.
 * The sandbox keeps network {@code none}: each accepted connection is relayed through the driver's own channel
 * to the sandbox (on Docker an attached exec running {@code nc 127.0.0.1 <port>}; see docs/processes.md,
 * "Port forwarding"). Thread-safe.
 *
 * <p><b>Lifetime.</b> A forward belongs to the sandbox's current container. It is closed when that container is
 * reaped, replaced (changed spec, maximum lifetime) or destroyed, when the manager closes, and by
 * {@link #close()}; its open connections are cut, and connecting to {@link #localAddress()} is then refused.
 * After a reap, open a new forward (which resumes the sandbox) once the service runs again.
 *
 * <p><b>Idle TTL.</b> An open connection counts as activity, like a running exec: the sandbox is not reaped while
 * one is open, and the idle clock restarts when it closes. A forward without connections does not keep the
 * sandbox alive.
 *
 * <p><b>Token protocol</b> (only for a forward bound beyond loopback, see
 * {@link ForwardOptions#exposeBeyondLoopback()}): the first bytes of every connection must be the token in
 * ASCII followed by {@code \n} (a {@code \r\n} is accepted too). Everything after the line feed is relayed. A
 * wrong or missing token, a line longer than the token, or no line within
 * {@link ForwardOptions#tokenTimeout()} closes the connection; nothing reaches the sandbox and nothing is
 * answered.
 */
public interface PortForward extends AutoCloseable {

    /**
     * Where to connect: the bound address and port (the actual port when {@link ForwardOptions#localPort()} was 0).
     *
     * @return the local endpoint
     */
    InetSocketAddress localAddress();

    /**
     * The TCP port inside the sandbox that connections reach.
     *
     * @return the container port
     */
    int containerPort();

    /**
     * The session the sandbox belongs to.
     *
     * @return the session id
     */
    String sessionId();

    /**
     * The token each connection must send first, present only for a forward bound beyond loopback. A random
     * 256-bit value, base64url without padding (43 characters), new for each forward.
     *
     * @return the token, or empty when none is required (loopback)
     */
    Optional<String> token();

    /**
     * Whether the forward still accepts connections.
     *
     * @return {@code false} once it was closed, by {@link #close()} or because its sandbox went away
     */
    boolean isOpen();

    /**
     * Stops listening and cuts the forward's open connections. Returns once the port is closed: from then on
     * connecting to {@link #localAddress()} is refused, and the same local port can be forwarded again at once.
     * Idempotent.
     */
    @Override
    void close();
}
