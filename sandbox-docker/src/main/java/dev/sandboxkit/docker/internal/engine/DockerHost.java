package dev.sandboxkit.docker.internal.engine;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.docker.DockerTlsException;
import dev.sandboxkit.spi.DriverContext;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;

/**
 * Where the engine listens, and how to talk to it: {@code unix:///path}, or {@code tcp://host:port} in the clear
 * (loopback only) or over TLS.
 *
 * @param uri    the engine address as configured
 * @param unix   whether it is a unix socket (then the engine is local and shares our /proc)
 * @param tls    the TLS material for a TLS engine, or {@code null}
 * @param source where the address came from ({@code docker.host}, {@code DOCKER_HOST}, a context, a probe), for
 *               messages
 */
public record DockerHost(URI uri, boolean unix, EngineTls tls, String source) {
    /** The driver property naming the engine address ({@code sandboxkit.docker.host}). */
    public static final String PROPERTY = "docker.host";
    static final String DEFAULT = "unix:///var/run/docker.sock";

    /**
     * The engine found by {@link EngineDiscovery} for this process's environment: explicit settings,
     * {@code DOCKER_HOST}, the current Docker context, then the first local socket that answers.
     *
     * @param context the manager's settings
     * @return the engine address
     * @throws SandboxConfigurationException if the address or its TLS settings are malformed or unsupported
     * @throws SandboxUnavailableException   if no address is configured and no local socket answers
     */
    public static DockerHost resolve(DriverContext context) {
        return EngineDiscovery.system().resolve(context);
    }

    /** A plain address (tests, and the sockets discovery probes). */
    static DockerHost parse(String value) {
        return of(value, null, "given");
    }

    /**
     * Checks an address: a unix socket path, or a TCP host. A TCP engine without TLS is accepted on loopback only:
     * elsewhere every command, file and secret would cross the network unencrypted to an API that runs anything
     * as root.
     */
    static DockerHost of(String value, EngineTls tls, String source) {
        URI uri;
        try {
            uri = URI.create(value.trim());
        } catch (IllegalArgumentException e) {
            throw new SandboxConfigurationException("invalid Docker host '" + value + "' (" + source + "): "
                    + e.getMessage(), e);
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme();
        switch (scheme) {
            case "unix":
                if (uri.getPath() == null || uri.getPath().isEmpty()) {
                    throw new SandboxConfigurationException("invalid Docker host '" + value + "' (" + source
                            + "): no socket path");
                }
                return new DockerHost(uri, true, null, source);
            case "tcp":
            case "http":
            case "https":
                if (uri.getHost() == null) {
                    throw new SandboxConfigurationException("invalid Docker host '" + value + "' (" + source
                            + "): no host name");
                }
                DockerHost host = new DockerHost(uri, false, tls, source);
                if (tls == null && !host.loopback()) {
                    throw new SandboxConfigurationException("refusing plain TCP to the Docker engine at " + value
                            + " (" + source + "): without TLS every command, file and secret crosses the network "
                            + "unencrypted and unauthenticated. Use TLS (docker.tlsVerify=true and docker.certPath, "
                            + "or DOCKER_TLS_VERIFY and DOCKER_CERT_PATH) or a unix socket; plain tcp:// is "
                            + "accepted on loopback only");
                }
                return host;
            default:
                throw new SandboxConfigurationException("unsupported Docker host '" + value + "' (" + source
                        + "): use unix:///path/to/docker.sock, or tcp://host:port (TLS, or loopback)");
        }
    }

    /**
     * Whether this is a TLS engine.
     *
     * @return whether connections use TLS
     */
    public boolean isTls() {
        return tls != null;
    }

    /**
     * The socket file, for unix hosts.
     *
     * @return the path of the unix socket
     */
    public Path socketPath() {
        return Path.of(uri.getPath());
    }

    /** The TCP port: as given, else Docker's 2376 for TLS and 2375 in the clear. */
    int port() {
        return uri.getPort() > 0 ? uri.getPort() : (tls != null ? 2376 : 2375);
    }

    SocketAddress address() {
        if (unix) {
            return UnixDomainSocketAddress.of(socketPath());
        }
        return new InetSocketAddress(uri.getHost(), port());
    }

    /**
     * Whether the engine runs on this machine: a unix socket, a loopback address, or an address of one of this
     * host's interfaces. Only then can it bind-mount a host workdir. Resolves the name (no connection).
     *
     * @return whether the engine shares this machine's file system
     */
    public boolean local() {
        if (unix || loopback()) {
            return true;
        }
        try {
            for (InetAddress a : InetAddress.getAllByName(uri.getHost())) {
                if (a.isAnyLocalAddress() || NetworkInterface.getByInetAddress(a) != null) {
                    return true;
                }
            }
        } catch (UnknownHostException | SocketException e) {
            return false;
        }
        return false;
    }

    /** Whether every address of the TCP host is a loopback one. */
    private boolean loopback() {
        try {
            InetAddress[] all = InetAddress.getAllByName(uri.getHost());
            for (InetAddress a : all) {
                if (!a.isLoopbackAddress()) {
                    return false;
                }
            }
            return all.length > 0;
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /**
     * The address as docker-java wants it: it only knows {@code unix://} and {@code tcp://} (it speaks TLS when
     * given an SSL configuration).
     *
     * @return the address for docker-java's client configuration
     */
    public String dockerJavaHost() {
        return unix ? uri.toString() : "tcp://" + uri.getHost() + ":" + port();
    }

    /**
     * The one mapping for every connection failure: a TLS failure is a {@link dev.sandboxkit.docker.DockerTlsException}
     * (a certificate will not fix itself), anything else a retryable {@link SandboxUnavailableException}; both name
     * the endpoint.
     *
     * @param cause the failure
     * @return the exception to throw
     */
    public SandboxException unreachable(Throwable cause) {
        if (tls != null && EngineTls.sslCause(cause) != null) {
            return EngineTls.failure(uri.toString(), cause);
        }
        Throwable root = cause;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        if (tls != null && cutShort(root)) {
            // Under TLS 1.3 the engine checks our certificate after our side of the handshake is done: a refusal
            // arrives as an alert, which a client busy writing its request sees only as a broken pipe.
            javax.net.ssl.SSLException refusal = EngineConnection.tlsRefusal(this);
            if (refusal != null) {
                DockerTlsException typed = EngineTls.failure(uri.toString(), refusal);
                typed.addSuppressed(cause);
                return typed;
            }
        }
        String detail = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
        return new SandboxUnavailableException("Docker engine at " + uri + " is unreachable: " + detail, cause);
    }

    /** A connection that was accepted and then broke: what a refused client certificate looks like mid-request. */
    private static boolean cutShort(Throwable root) {
        if (root instanceof java.io.EOFException) {
            return true;
        }
        String m = root.getMessage() == null ? "" : root.getMessage().toLowerCase(java.util.Locale.ROOT);
        return root instanceof java.net.SocketException && !(root instanceof java.net.ConnectException)
                && (m.contains("broken pipe") || m.contains("connection reset") || m.contains("socket closed"));
    }

    @Override
    public String toString() {
        return uri.toString();
    }
}
