package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

import java.net.InetAddress;
import java.time.Duration;
import java.util.Objects;

/**
 * How {@link Sandbox#forward(int, ForwardOptions)} listens on the host. Immutable: every {@code with*} method
 * returns a copy.
 *
 * <p>By default a forward listens on {@code 127.0.0.1} on a free port. Listening on any other address (a LAN
 * address, {@code 0.0.0.0}) is refused unless {@link #exposeBeyondLoopback()} is set, and such a forward then
 * requires a per-forward token: each connection must send {@link PortForward#token()} and a line feed as its
 * first bytes, before any traffic for the sandbox (see {@link PortForward} for the protocol).
 */
public final class ForwardOptions {
    /** How long a connection to a token-protected forward may take to send its token line, by default. */
    public static final Duration DEFAULT_TOKEN_TIMEOUT = Duration.ofSeconds(10);
    private static final ForwardOptions DEFAULTS = new ForwardOptions(0, null, false, DEFAULT_TOKEN_TIMEOUT);

    private final int localPort;
    private final @Nullable InetAddress bindAddress;
    private final boolean beyondLoopback;
    private final Duration tokenTimeout;

    private ForwardOptions(int localPort, @Nullable InetAddress bindAddress, boolean beyondLoopback,
                           Duration tokenTimeout) {
        if (localPort < 0 || localPort > 65_535) {
            throw new IllegalArgumentException("local port must be 0-65535, got: " + localPort);
        }
        Objects.requireNonNull(tokenTimeout, "tokenTimeout");
        if (tokenTimeout.isNegative() || tokenTimeout.isZero()) {
            throw new IllegalArgumentException("token timeout must be positive, got: " + tokenTimeout);
        }
        this.localPort = localPort;
        this.bindAddress = bindAddress;
        this.beyondLoopback = beyondLoopback;
        this.tokenTimeout = tokenTimeout;
    }

    /**
     * The defaults: {@code 127.0.0.1}, any free port, loopback only.
     *
     * @return the default options
     */
    public static ForwardOptions defaults() {
        return DEFAULTS;
    }

    /**
     * Listens on this local port.
     *
     * @param port 1-65535, or 0 for any free port (the default); see {@link PortForward#localAddress()}
     * @return a copy with the port
     * @throws IllegalArgumentException if the port is out of range
     */
    public ForwardOptions withLocalPort(int port) {
        return new ForwardOptions(port, bindAddress, beyondLoopback, tokenTimeout);
    }

    /**
     * Listens on this address. A loopback address ({@code 127.0.0.0/8}, {@code ::1}) needs nothing more; any other
     * needs {@link #exposeBeyondLoopback()}, or {@link Sandbox#forward(int, ForwardOptions)} refuses it.
     *
     * @param address the local address, or {@code null} for {@code 127.0.0.1} (the default)
     * @return a copy with the address
     */
    public ForwardOptions withBindAddress(@Nullable InetAddress address) {
        return new ForwardOptions(localPort, address, beyondLoopback, tokenTimeout);
    }

    /**
     * Allows a bind address that is not loopback, so that other machines can reach the sandbox's port. Every
     * connection must then present the forward's token first ({@link PortForward#token()}); without it, or with a
     * wrong one, the connection is closed and nothing reaches the sandbox.
     *
     * @return a copy that allows non-loopback addresses
     */
    public ForwardOptions exposeBeyondLoopback() {
        return new ForwardOptions(localPort, bindAddress, true, tokenTimeout);
    }

    /**
     * How long a connection to a token-protected forward may take to send its token line before it is closed.
     *
     * @param timeout positive; default {@link #DEFAULT_TOKEN_TIMEOUT}
     * @return a copy with the timeout
     * @throws IllegalArgumentException if the timeout is not positive
     */
    public ForwardOptions withTokenTimeout(Duration timeout) {
        return new ForwardOptions(localPort, bindAddress, beyondLoopback, timeout);
    }

    /**
     * The local port asked for.
     *
     * @return the port, 0 for any free one
     */
    public int localPort() {
        return localPort;
    }

    /**
     * The local address asked for.
     *
     * @return the address, or {@code null} for {@code 127.0.0.1}
     */
    public @Nullable InetAddress bindAddress() {
        return bindAddress;
    }

    /**
     * Whether a non-loopback bind address is allowed ({@link #exposeBeyondLoopback()}).
     *
     * @return whether the forward may be exposed beyond loopback
     */
    public boolean exposesBeyondLoopback() {
        return beyondLoopback;
    }

    /**
     * How long a connection may take to send its token line.
     *
     * @return the timeout
     */
    public Duration tokenTimeout() {
        return tokenTimeout;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ForwardOptions other && localPort == other.localPort
                && Objects.equals(bindAddress, other.bindAddress) && beyondLoopback == other.beyondLoopback
                && tokenTimeout.equals(other.tokenTimeout);
    }

    @Override
    public int hashCode() {
        return Objects.hash(localPort, bindAddress, beyondLoopback, tokenTimeout);
    }

    @Override
    public String toString() {
        return "ForwardOptions[localPort=" + localPort + ", bindAddress="
                + (bindAddress == null ? "127.0.0.1" : bindAddress.getHostAddress())
                + (beyondLoopback ? ", exposeBeyondLoopback" : "") + ", tokenTimeout=" + tokenTimeout + "]";
    }
}
