package dev.sandboxkit.docker.internal.settings;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.docker.DockerSettings;
import dev.sandboxkit.spi.ConfigValues;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SettingKey;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The Docker driver's key table: each {@code docker.*} key's documentation, how its text is read into a
 * {@link DockerSettings.Builder}, and a value's canonical text. {@link DockerSettings#keys()} and
 * {@link DockerSettings#toProperties()} are made from it; the driver reads its settings with {@link #read}.
 */
public final class DockerSettingKeys {
    private static final String PREFIX = "docker.";
    private static final List<Key> ALL;
    private static final List<SettingKey> DOCS;
    private static final Map<String, Key> BY_NAME;

    /** Applies one value, already trimmed and not blank; {@code name} is how the user set it, for messages. */
    @FunctionalInterface
    private interface Parser {
        void parse(DockerSettings.Builder b, String name, String value);
    }

    private record Key(SettingKey doc, Parser parser, Function<DockerSettings, String> text) {
    }

    static {
        DockerSettings d = DockerSettings.builder().build();
        List<Key> k = new ArrayList<>();
        k.add(key(d, "host", "string", "The engine address: unix:///path or tcp://host:port. Unset: DOCKER_HOST, "
                + "else the current Docker context, else the first of the rootless and rootful Docker and Podman "
                + "sockets that answers a ping. Plain TCP is accepted on loopback only.",
                (b, n, v) -> b.host(v), s -> s.host().orElse("")));
        k.add(key(d, "tlsVerify", "boolean", "true makes a tcp:// engine a TLS one, whose certificate is always "
                + "verified; false a plain one. Unset: DOCKER_TLS_VERIFY.",
                (b, n, v) -> b.tlsVerify(ConfigValues.bool(n, v)), s -> text(s.tlsVerify())));
        k.add(key(d, "certPath", "path", "Directory with ca.pem, cert.pem and key.pem for a TLS engine. Unset: "
                + "DOCKER_CERT_PATH, else the Docker configuration directory (~/.docker).",
                (b, n, v) -> b.certPath(path(n, v)), s -> text(s.certPath())));
        k.add(key(d, "tlsCaCert", "path", "The CA file the engine is verified with. Unset: ca.pem in the "
                + "certificate directory.", (b, n, v) -> b.tlsCaCert(path(n, v)), s -> text(s.tlsCaCert())));
        k.add(key(d, "tlsCert", "path", "The client certificate file. Unset: cert.pem in the certificate "
                + "directory.", (b, n, v) -> b.tlsCert(path(n, v)), s -> text(s.tlsCert())));
        k.add(key(d, "tlsKey", "path", "The client key file. Unset: key.pem in the certificate directory.",
                (b, n, v) -> b.tlsKey(path(n, v)), s -> text(s.tlsKey())));
        k.add(key(d, "defaultUser", "string", "uid or uid:gid of sandboxes whose spec names no user when the JVM "
                + "runs as root (a non-root JVM runs them as itself).",
                (b, n, v) -> b.defaultUser(v), DockerSettings::defaultUser));
        k.add(key(d, "pullTimeout", "duration", "How long an image pull may take.",
                (b, n, v) -> b.pullTimeout(ConfigValues.duration(n, v)), s -> ConfigValues.format(s.pullTimeout())));
        k.add(key(d, "workdirs", "host|volume", "Where new sessions' workdirs live: host, a host directory per "
                + "session bind-mounted at /workspace (a local engine only); volume, a named volume per session (a "
                + "remote engine is accepted).",
                (b, n, v) -> b.workdirs(ConfigValues.enumValue(n, DockerSettings.Workdirs.class, v)),
                s -> s.workdirs().name().toLowerCase(Locale.ROOT)));
        k.add(key(d, "channelSetsid", "boolean", "false runs command-channel commands without setsid: one exec less "
                + "per command, but kill 0 in a command also reaches background jobs that earlier commands of its "
                + "channel left.", (b, n, v) -> b.channelSetsid(ConfigValues.bool(n, v)),
                s -> Boolean.toString(s.channelSetsid())));
        k.add(key(d, "channelIdleTimeout", "duration", "A command channel idle for longer is closed (its socket "
                + "freed) and reopened by the sandbox's next exec; 0 for never.",
                (b, n, v) -> b.channelIdleTimeout(ConfigValues.duration(n, v)),
                s -> ConfigValues.format(s.channelIdleTimeout())));
        ALL = List.copyOf(k);
        DOCS = ALL.stream().map(Key::doc).toList();
        Map<String, Key> byName = new LinkedHashMap<>();
        ALL.forEach(key -> byName.put(key.doc.name(), key));
        BY_NAME = Collections.unmodifiableMap(byName);
    }

    private DockerSettingKeys() {
    }

    /**
     * The settings a driver is given: every {@code docker.*} key of {@link DriverContext#properties()}, falling back
     * to the system property {@code -Dsandboxkit.<key>}. A blank value means the default.
     *
     * @param context the manager's settings
     * @return the settings
     * @throws SandboxConfigurationException naming the key as the user set it ({@link DriverContext#settingName})
     *                                       if a value is invalid or a {@code docker.*} key is unknown (suggesting
     *                                       the nearest)
     */
    public static DockerSettings read(DriverContext context) {
        context.requireKnownKeys(PREFIX, BY_NAME.keySet());
        DockerSettings.Builder b = DockerSettings.builder();
        for (Key k : ALL) {
            String key = k.doc.name();
            Optional<String> value = context.property(key).map(String::trim).filter(v -> !v.isEmpty());
            if (value.isPresent()) {
                String name = context.settingName(key);
                try {
                    k.parser.parse(b, name, value.get());
                } catch (SandboxConfigurationException e) {
                    // The builder names its option by key; the user set it under another name, perhaps.
                    String message = e.getMessage();
                    if (message != null && message.startsWith(key + ": ") && !name.equals(key)) {
                        throw new SandboxConfigurationException(name + message.substring(key.length()), e);
                    }
                    throw e;
                }
            }
        }
        return b.build();
    }

    /**
     * Every key, in order, with its type, default and description.
     *
     * @return the keys
     */
    public static List<SettingKey> keys() {
        return DOCS;
    }

    /**
     * The settings that differ from the defaults, as keys and text that {@link #read} reads back.
     *
     * @param settings the settings
     * @return {@code docker.*} key to value, in the order of {@link #keys()}
     */
    public static Map<String, String> properties(DockerSettings settings) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Key k : ALL) {
            String mine = k.text.apply(settings);
            if (!mine.equals(k.doc.defaultValue())) {
                out.put(k.doc.name(), mine);
            }
        }
        return Collections.unmodifiableMap(out);
    }

    private static Key key(DockerSettings defaults, String name, String type, String description, Parser parser,
                           Function<DockerSettings, String> text) {
        return new Key(new SettingKey(PREFIX + name, type, text.apply(defaults), description), parser, text);
    }

    private static String text(Optional<?> value) {
        return value.map(Object::toString).orElse("");
    }

    private static Path path(String name, String value) {
        try {
            return Path.of(value);
        } catch (InvalidPathException e) {
            throw ConfigValues.invalid(name, value, "a file path");
        }
    }
}
