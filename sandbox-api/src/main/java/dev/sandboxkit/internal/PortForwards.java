package dev.sandboxkit.internal;

import dev.sandboxkit.ForwardOptions;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.spi.ComputeCapability;
import dev.sandboxkit.spi.ComputeDriver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

/**
 * The manager's open forwards, by container: every removal of a container closes its forwards first (see
 * {@link Removals}), and so does a loss of ownership and the manager's close. A forward's connections count as
 * activity of its session, like running execs.
 */
final class PortForwards implements ManagedPortForward.Host {
    private static final Logger log = LoggerFactory.getLogger(PortForwards.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final InetAddress LOOPBACK = loopback();

    private final ComputeDriver compute;
    private final SessionRegistry sessions;
    private final Clock clock;
    private final Executor io;
    private final Map<String, Set<ManagedPortForward>> bySandbox = new ConcurrentHashMap<>();
    private volatile boolean closed;

    PortForwards(ComputeDriver compute, SessionRegistry sessions, Clock clock, Executor io) {
        this.compute = compute;
        this.sessions = sessions;
        this.clock = clock;
        this.io = io;
    }

    /** Checks what can be checked before the sandbox is resumed: the port, the address, the driver. */
    static void validate(ComputeDriver compute, int containerPort, ForwardOptions options) {
        if (containerPort < 1 || containerPort > 65_535) {
            throw new IllegalArgumentException("container port must be 1-65535, got: " + containerPort);
        }
        if (!compute.computeCapabilities().contains(ComputeCapability.PORT_FORWARD)) {
            throw new dev.sandboxkit.SandboxUnsupportedException(
                    "the " + compute.name() + " driver cannot forward ports");
        }
        InetAddress address = options.bindAddress();
        if (address != null && !address.isLoopbackAddress() && !options.exposesBeyondLoopback()) {
            throw new SandboxConfigurationException("forward bind address " + address.getHostAddress()
                    + " is not loopback: set ForwardOptions.exposeBeyondLoopback() to expose the sandbox's port "
                    + "beyond this host (connections must then present the forward's token)");
        }
    }

    /**
     * Binds and starts a forward to {@code sandboxId}, the session's live container (the caller holds an exec
     * slot on it, so it is not reaped meanwhile; a removal racing this is caught by the caller's check).
     */
    ManagedPortForward open(String sessionId, String sandboxId, int containerPort, ForwardOptions options) {
        if (closed) {
            throw new IllegalStateException("the sandbox manager is closed");
        }
        InetAddress address = options.bindAddress() != null ? options.bindAddress() : LOOPBACK;
        String token = address.isLoopbackAddress() ? null : newToken();
        ServerSocket server;
        try {
            server = new ServerSocket();
            try {
                server.bind(new InetSocketAddress(address, options.localPort()), 128);
            } catch (IOException e) {
                server.close();
                throw e;
            }
        } catch (IOException e) {
            String where = address.getHostAddress() + ":" + options.localPort();
            if (e instanceof BindException && isLocal(address)) {
                // The address is ours, so the port is taken (another forward, another program): it may be freed.
                throw new SandboxUnavailableException("cannot listen on " + where + " for a forward: " + where
                        + " is in use (" + e.getMessage() + "); close what holds it and retry, or forward from "
                        + "local port 0 (any free port)", e);
            }
            throw new SandboxConfigurationException("cannot listen on " + where + " for a forward: "
                    + e.getMessage(), e);
        }
        ManagedPortForward f = new ManagedPortForward(sessionId, sandboxId, containerPort, server, token,
                (int) Math.min(Integer.MAX_VALUE, options.tokenTimeout().toMillis()), compute, io, this);
        bySandbox.computeIfAbsent(sandboxId, k -> ConcurrentHashMap.newKeySet()).add(f);
        if (closed) {
            f.close();
            throw new IllegalStateException("the sandbox manager is closed");
        }
        try {
            f.start();
        } catch (RuntimeException rejected) {
            f.close();
            throw new SandboxConfigurationException("the I/O executor refused the forward's accept loop", rejected);
        }
        log.info("Session {}: forwarding {} to container port {}{}", sessionId, f.localAddress(), containerPort,
                token != null ? " (token required)" : "");
        return f;
    }

    /** Closes every forward to a container, before it is removed (or no longer ours). */
    void closeFor(String sandboxId) {
        Set<ManagedPortForward> open = bySandbox.get(sandboxId);
        if (open != null) {
            for (ManagedPortForward f : List.copyOf(open)) {
                f.close();
            }
        }
    }

    /** Closes every forward; none can be opened after. */
    void closeAll() {
        closed = true;
        for (String sandboxId : List.copyOf(bySandbox.keySet())) {
            closeFor(sandboxId);
        }
    }

    /** The forwards open now (for tests and stats). */
    int openCount() {
        return bySandbox.values().stream().mapToInt(Set::size).sum();
    }

    @Override
    public Runnable beginConnection(ManagedPortForward forward) {
        if (closed) {
            return null;
        }
        SessionEntry e = sessions.get(forward.sessionId);
        String live = e == null ? null : e.beginExec(clock.millis());
        if (live == null) {
            return null;
        }
        if (!live.equals(forward.sandboxId)) {
            e.endExec(clock.millis());
            return null;
        }
        return () -> e.endExec(clock.millis());
    }

    @Override
    public void closed(ManagedPortForward forward) {
        bySandbox.computeIfPresent(forward.sandboxId, (k, set) -> {
            set.remove(forward);
            return set.isEmpty() ? null : set;
        });
    }

    /** Whether this host has the address: then a failed bind means the port is in use, not a wrong address. */
    private static boolean isLocal(InetAddress address) {
        if (address.isLoopbackAddress() || address.isAnyLocalAddress()) {
            return true;
        }
        try {
            return NetworkInterface.getByInetAddress(address) != null;
        } catch (SocketException e) {
            return false;
        }
    }

    /** 256 random bits, base64url without padding: 43 characters, safe in a line and in a URL. */
    private static String newToken() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    private static InetAddress loopback() {
        try {
            return InetAddress.getByAddress("localhost", new byte[] {127, 0, 0, 1});
        } catch (UnknownHostException impossible) {
            throw new IllegalStateException(impossible);
        }
    }
}
