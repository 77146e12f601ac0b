package dev.sandboxkit.docker.internal.engine;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.spi.DriverContext;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Path;

/**
 * Where the engine listens: {@code unix:///path} or {@code tcp://host:port}.
 *
 * @param uri  the engine address as configured
 * @param unix whether it is a unix socket (then the engine is local and shares our /proc)
 * @param tls  whether the address asks for TLS (refused by the exec path)
 */
public record DockerHost(URI uri, boolean unix, boolean tls) {
    /** The driver property naming the engine address ({@code sandboxkit.docker.host}). */
    public static final String PROPERTY = "docker.host";
    static final String DEFAULT = "unix:///var/run/docker.sock";

    /**
     * The configured engine: the {@value #PROPERTY} property, then {@code DOCKER_HOST}, then the default socket.
     * Does not connect.
     *
     * @param context the manager's settings
     * @return the engine address
     * @throws SandboxConfigurationException if the address is malformed or of an unsupported kind
     */
    public static DockerHost resolve(DriverContext context) {
        String value = context.property(PROPERTY).orElseGet(() -> {
            String env = System.getenv("DOCKER_HOST");
            return env == null || env.isBlank() ? DEFAULT : env;
        });
        return parse(value.trim());
    }

    static DockerHost parse(String value) {
        URI uri;
        try {
            uri = URI.create(value);
        } catch (IllegalArgumentException e) {
            throw new SandboxConfigurationException("invalid Docker host '" + value + "': " + e.getMessage(), e);
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme();
        switch (scheme) {
            case "unix":
                if (uri.getPath() == null || uri.getPath().isEmpty()) {
                    throw new SandboxConfigurationException("invalid Docker host '" + value + "': no socket path");
                }
                return new DockerHost(uri, true, false);
            case "tcp":
            case "http":
            case "https":
                if (uri.getHost() == null) {
                    throw new SandboxConfigurationException("invalid Docker host '" + value + "': no host name");
                }
                // DOCKER_TLS_VERIFY turns a tcp:// host into a TLS one, as it does for the docker CLI.
                String verify = System.getenv("DOCKER_TLS_VERIFY");
                boolean tls = scheme.equals("https") || (verify != null && !verify.isEmpty() && !verify.equals("0"));
                return new DockerHost(uri, false, tls);
            default:
                throw new SandboxConfigurationException("unsupported Docker host '" + value
                        + "': use unix:///path/to/docker.sock or tcp://host:port");
        }
    }

    /**
     * The socket file, for unix hosts.
     *
     * @return the path of the unix socket
     */
    public Path socketPath() {
        return Path.of(uri.getPath());
    }

    SocketAddress address() {
        if (unix) {
            return UnixDomainSocketAddress.of(socketPath());
        }
        int port = uri.getPort() > 0 ? uri.getPort() : (tls ? 2376 : 2375);
        return new InetSocketAddress(uri.getHost(), port);
    }

    /**
     * The address as docker-java wants it: it only knows {@code unix://} and {@code tcp://}.
     *
     * @return the address for docker-java's client configuration
     */
    public String dockerJavaHost() {
        return unix ? uri.toString() : "tcp://" + uri.getHost() + ":" + (uri.getPort() > 0 ? uri.getPort() : 2375);
    }

    /**
     * The one message for every connection failure, naming the endpoint.
     *
     * @param cause the failure
     * @return the exception to throw
     */
    public SandboxUnavailableException unreachable(Throwable cause) {
        Throwable root = cause;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String detail = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
        return new SandboxUnavailableException("Docker engine at " + uri + " is unreachable: " + detail, cause);
    }

    @Override
    public String toString() {
        return uri.toString();
    }
}
