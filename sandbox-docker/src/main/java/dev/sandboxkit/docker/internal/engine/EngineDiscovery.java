package dev.sandboxkit.docker.internal.engine;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.docker.DockerSettings;
import dev.sandboxkit.docker.internal.settings.DockerSettingKeys;
import dev.sandboxkit.spi.DriverContext;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Finds the engine the way the docker CLI does, then the usual local sockets:
 * <ol>
 *   <li>the driver setting {@value DockerHost#PROPERTY} (with the TLS ones of {@link DockerSettings});</li>
 *   <li>{@code DOCKER_HOST} (with {@code DOCKER_TLS_VERIFY}, {@code DOCKER_CERT_PATH});</li>
 *   <li>the current Docker context: {@code DOCKER_CONTEXT}, else {@code currentContext} in
 *       {@code $DOCKER_CONFIG/config.json} ({@code ~/.docker} by default); its endpoint from
 *       {@code contexts/meta/<sha256(name)>/meta.json}, its TLS files from {@code contexts/tls/<sha256(name)>/docker/};</li>
 *   <li>the first of {@code $XDG_RUNTIME_DIR/docker.sock} (rootless), {@code /var/run/docker.sock},
 *       {@code $XDG_RUNTIME_DIR/podman/podman.sock}, {@code /run/podman/podman.sock} that answers
 *       {@code GET /_ping} within {@link #PROBE_TIMEOUT}.</li>
 * </ol>
 * The first three are used as given, never replaced by another engine when they do not answer (a configured engine
 * that is down is an outage, not a reason to run sandboxes elsewhere). The environment and the home directory are
 * injected, so that tests use their own.
 */
public final class EngineDiscovery {
    /** How long a probed socket may take to answer {@code /_ping}. */
    static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);

    private final Map<String, String> env;
    private final Path home;
    private final List<Path> systemDockerSockets;
    private final List<Path> systemPodmanSockets;

    /**
     * Discovery over an explicit environment.
     *
     * @param env                 environment variables ({@code DOCKER_HOST}, {@code XDG_RUNTIME_DIR}, ...)
     * @param home                the user's home directory ({@code ~/.docker} lives there)
     * @param systemDockerSockets rootful Docker sockets to probe, after the rootless one
     * @param systemPodmanSockets rootful Podman sockets to probe, after the rootless one
     */
    EngineDiscovery(Map<String, String> env, Path home, List<Path> systemDockerSockets, List<Path> systemPodmanSockets) {
        this.env = Map.copyOf(env);
        this.home = home;
        this.systemDockerSockets = List.copyOf(systemDockerSockets);
        this.systemPodmanSockets = List.copyOf(systemPodmanSockets);
    }

    /**
     * Discovery over a given environment and home, probing the usual rootful sockets ({@code /var/run/docker.sock},
     * {@code /run/podman/podman.sock}) or the ones given.
     *
     * @param env                 environment variables ({@code DOCKER_HOST}, {@code XDG_RUNTIME_DIR}, ...)
     * @param home                the user's home directory
     * @param systemDockerSockets rootful Docker sockets to probe, or {@code null} for {@code /var/run/docker.sock}
     * @param systemPodmanSockets rootful Podman sockets to probe, or {@code null} for {@code /run/podman/podman.sock}
     * @return the discovery
     */
    public static EngineDiscovery of(Map<String, String> env, Path home, List<Path> systemDockerSockets,
            List<Path> systemPodmanSockets) {
        return new EngineDiscovery(env, home,
                systemDockerSockets == null ? List.of(Path.of("/var/run/docker.sock")) : systemDockerSockets,
                systemPodmanSockets == null ? List.of(Path.of("/run/podman/podman.sock")) : systemPodmanSockets);
    }

    /**
     * Discovery over this process's environment and home.
     *
     * @return the discovery
     */
    public static EngineDiscovery system() {
        return of(System.getenv(), Path.of(System.getProperty("user.home", "/")), null, null);
    }

    /**
     * The engine to use for the context's {@code docker.*} settings ({@link DockerSettingKeys#read}).
     *
     * @param context the manager's settings
     * @return the engine
     * @throws SandboxConfigurationException if a setting, or a configured address, context or TLS file, is unusable
     * @throws SandboxUnavailableException   if nothing is configured and no candidate socket answers
     */
    public DockerHost resolve(DriverContext context) {
        return resolve(DockerSettingKeys.read(context), context);
    }

    /**
     * The engine to use; probes local sockets only when nothing is configured.
     *
     * @param settings the driver's settings
     * @param context  the manager's settings, for how the user names a setting in messages
     * @return the engine
     * @throws SandboxConfigurationException if a configured address, context or TLS setting is unusable
     * @throws SandboxUnavailableException   if nothing is configured and no candidate socket answers; the message
     *                                       lists every candidate and why it was passed over
     */
    public DockerHost resolve(DockerSettings settings, DriverContext context) {
        Optional<DockerHost> configured = configured(settings, context);
        if (configured.isPresent()) {
            return configured.get();
        }
        List<String> tried = new ArrayList<>();
        for (Candidate c : candidates()) {
            String failure = probe(c.host);
            if (failure == null) {
                return c.host;
            }
            tried.add(c.host + " (" + c.why + "): " + failure);
        }
        throw new SandboxUnavailableException("no Docker engine found. Tried, in order: "
                + String.join("; ", tried) + ". Start an engine, or set " + context.settingName(DockerHost.PROPERTY)
                + ", DOCKER_HOST or a Docker context");
    }

    /**
     * Why no engine can be used, without connecting: a configured unix socket that does not exist, or no candidate
     * socket file at all.
     *
     * @param context the manager's settings
     * @return empty if an engine may be there, otherwise why not
     * @throws SandboxConfigurationException if a {@code docker.*} setting is unknown or invalid: a typo fails the
     *                                       build rather than letting detection pass over to another driver
     */
    public Optional<String> unavailableReason(DriverContext context) {
        DockerSettings settings = DockerSettingKeys.read(context);
        Optional<DockerHost> configured;
        try {
            configured = configured(settings, context);
        } catch (SandboxConfigurationException e) {
            return Optional.of(e.getMessage());
        }
        if (configured.isPresent()) {
            DockerHost host = configured.get();
            if (!host.unix() || Files.exists(host.socketPath())) {
                return Optional.empty();
            }
            String setting = context.settingName(DockerHost.PROPERTY);
            return Optional.of("no Docker socket at " + host.socketPath() + " (from " + host.source()
                    + "; start the engine, or correct " + (host.source().equals(setting) ? setting
                    : host.source() + " or set " + setting) + ")");
        }
        List<String> missing = new ArrayList<>();
        for (Candidate c : candidates()) {
            if (Files.exists(c.host.socketPath())) {
                return Optional.empty();
            }
            missing.add(c.host.socketPath().toString());
        }
        return Optional.of("no Docker engine configured (" + context.settingName(DockerHost.PROPERTY)
                + ", DOCKER_HOST, a Docker context) and no socket at " + String.join(", ", missing));
    }

    /** The explicit setting, DOCKER_HOST or the current context, checked; empty when none is set. */
    private Optional<DockerHost> configured(DockerSettings settings, DriverContext context) {
        if (settings.host().isPresent()) {
            return Optional.of(withTls(settings.host().get(), settings, context.settingName(DockerHost.PROPERTY)));
        }
        String dockerHost = env.get("DOCKER_HOST");
        if (dockerHost != null && !dockerHost.isBlank()) {
            return Optional.of(withTls(dockerHost, settings, "DOCKER_HOST"));
        }
        return fromContext();
    }

    /** TLS settings for an explicit address: the driver's settings first, then DOCKER_TLS_VERIFY / DOCKER_CERT_PATH. */
    private DockerHost withTls(String value, DockerSettings settings, String source) {
        String v = value.trim();
        if (!v.startsWith("tcp:") && !v.startsWith("http:") && !v.startsWith("https:")) {
            return DockerHost.of(v, null, source); // a socket (TLS settings do not apply), or refused with the forms
        }
        boolean tls = settings.tlsVerify().orElseGet(() -> {
            String verify = env.get("DOCKER_TLS_VERIFY");
            return verify != null && !verify.isEmpty() && !verify.equals("0") && !verify.equalsIgnoreCase("false");
        });
        tls |= v.startsWith("https:");
        if (!tls) {
            return DockerHost.of(v, null, source);
        }
        Path dir = settings.certPath()
                .orElseGet(() -> Optional.ofNullable(env.get("DOCKER_CERT_PATH")).filter(p -> !p.isBlank())
                        .map(Path::of).orElseGet(this::configDir));
        Path ca = settings.tlsCaCert().orElse(dir.resolve("ca.pem"));
        Path cert = settings.tlsCert().orElse(dir.resolve("cert.pem"));
        Path key = settings.tlsKey().orElse(dir.resolve("key.pem"));
        return DockerHost.of(v, loadTls(ca, cert, key, source), source);
    }

    /**
     * The CA is required (the engine is always verified); the client pair is optional as a pair, so that a
     * missing one shows as the engine's refusal, which names the cause.
     */
    private static EngineTls loadTls(Path ca, Path cert, Path key, String source) {
        if (!Files.isRegularFile(ca)) {
            throw new dev.sandboxkit.docker.DockerTlsException(dev.sandboxkit.docker.DockerTlsException.Reason.BAD_MATERIAL,
                    "TLS is on for the Docker engine (" + source + ") but there is no CA certificate at " + ca
                            + ": sandboxkit always verifies the engine (set docker.certPath / DOCKER_CERT_PATH to the "
                            + "directory with ca.pem, cert.pem and key.pem, or docker.tlsCaCert)", null);
        }
        boolean hasCert = Files.exists(cert);
        boolean hasKey = Files.exists(key);
        return EngineTls.load(ca, hasCert || hasKey ? cert : null, hasCert || hasKey ? key : null);
    }

    /** The current context's endpoint, unless it is the default one (which means the sockets below). */
    private Optional<DockerHost> fromContext() {
        String name = env.get("DOCKER_CONTEXT");
        String from = "DOCKER_CONTEXT";
        Path config = configDir().resolve("config.json");
        if (name == null || name.isBlank()) {
            from = config.toString();
            name = null;
            if (Files.isRegularFile(config)) {
                JsonNode current = readJson(config, "the Docker CLI configuration").path("currentContext");
                name = current.isTextual() ? current.asText() : null;
            }
        }
        if (name == null || name.isBlank() || name.equals("default")) {
            return Optional.empty();
        }
        String source = "Docker context '" + name + "' (from " + from + ")";
        String id = sha256(name);
        Path meta = configDir().resolve("contexts").resolve("meta").resolve(id).resolve("meta.json");
        if (!Files.isRegularFile(meta)) {
            throw new SandboxConfigurationException(source + " does not exist: no " + meta);
        }
        JsonNode endpoint = readJson(meta, source).path("Endpoints").path("docker");
        String host = endpoint.path("Host").asText("");
        if (host.isBlank()) {
            throw new SandboxConfigurationException(source + " has no Docker endpoint (Endpoints.docker.Host) in " + meta);
        }
        if (host.startsWith("unix:")) {
            return Optional.of(DockerHost.of(host, null, source));
        }
        Path tlsDir = configDir().resolve("contexts").resolve("tls").resolve(id).resolve("docker");
        boolean skipVerify = endpoint.path("SkipTLSVerify").asBoolean(false);
        if (skipVerify) {
            throw new SandboxConfigurationException(source + " sets SkipTLSVerify: sandboxkit always verifies the "
                    + "engine's certificate; give the context the engine's CA (docker context update --docker "
                    + "ca=...) instead");
        }
        boolean tls = host.startsWith("https:") || Files.exists(tlsDir.resolve("ca.pem"))
                || Files.exists(tlsDir.resolve("cert.pem"));
        if (!tls) {
            return Optional.of(DockerHost.of(host, null, source));
        }
        return Optional.of(DockerHost.of(host, loadTls(tlsDir.resolve("ca.pem"), tlsDir.resolve("cert.pem"),
                tlsDir.resolve("key.pem"), source), source));
    }

    /** The local sockets to probe, in order. */
    private List<Candidate> candidates() {
        List<Candidate> out = new ArrayList<>();
        String xdg = env.get("XDG_RUNTIME_DIR");
        boolean hasXdg = xdg != null && !xdg.isBlank();
        if (hasXdg) {
            out.add(new Candidate(socket(Path.of(xdg, "docker.sock")), "rootless Docker, $XDG_RUNTIME_DIR"));
        }
        for (Path p : systemDockerSockets) {
            out.add(new Candidate(socket(p), "Docker"));
        }
        if (hasXdg) {
            out.add(new Candidate(socket(Path.of(xdg, "podman", "podman.sock")), "rootless Podman, $XDG_RUNTIME_DIR"));
        }
        for (Path p : systemPodmanSockets) {
            out.add(new Candidate(socket(p), "Podman"));
        }
        return out;
    }

    private static DockerHost socket(Path path) {
        return new DockerHost(java.net.URI.create("unix://" + path.toAbsolutePath()), true, null, "found at "
                + path.toAbsolutePath());
    }

    /** Why a socket is not an engine that answers, or {@code null} if it is. */
    static String probe(DockerHost host) {
        if (host.unix() && !Files.exists(host.socketPath())) {
            return "no such socket";
        }
        long deadline = System.nanoTime() + PROBE_TIMEOUT.toNanos();
        try (EngineConnection conn = EngineConnection.open(host, deadline)) {
            conn.write("GET /_ping HTTP/1.1\r\nHost: docker\r\nUser-Agent: sandboxkit\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII), deadline);
            EngineConnection.Head head = conn.readHead(deadline);
            return head.status() == 200 ? null : "GET /_ping answered HTTP " + head.status();
        } catch (java.net.SocketTimeoutException e) {
            return "no answer to GET /_ping within " + PROBE_TIMEOUT.toSeconds() + " s";
        } catch (IOException | RuntimeException e) {
            return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        }
    }

    /**
     * The Docker CLI's configuration directory: {@code $DOCKER_CONFIG}, else {@code ~/.docker}.
     *
     * @return the directory (it may not exist)
     */
    public Path configDir() {
        String dir = env.get("DOCKER_CONFIG");
        return dir == null || dir.isBlank() ? home.resolve(".docker") : Path.of(dir);
    }

    private static JsonNode readJson(Path file, String what) {
        try {
            return EngineClient.JSON.readTree(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new SandboxConfigurationException("cannot read " + what + " at " + file + ": " + e.getMessage(), e);
        }
    }

    /** Docker names a context's directories by the SHA-256 of its name, in hex. */
    static String sha256(String name) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(name.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-256 in this JDK", e);
        }
    }

    private record Candidate(DockerHost host, String why) {
    }
}
