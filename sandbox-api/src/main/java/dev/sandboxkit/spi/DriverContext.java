package dev.sandboxkit.spi;

import dev.sandboxkit.SandboxConfigurationException;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * What a driver is given when the manager creates it.
 *
 * @param instanceId    the manager's instance id (the owner label)
 * @param workspaceRoot host directory under which drivers with host workdirs create them
 * @param clock         the manager's clock
 * @param properties    driver-specific settings from {@code driverProperty(..)}
 * @param settingNames  how the entry point that built the manager lets the user set a key of {@code properties}, for
 *                      messages: {@code driverProperty("docker.host")} for {@code SandboxManager.builder()} (the
 *                      default), {@code sandboxkit.driver-properties.docker.host} in Spring Boot; see
 *                      {@link #settingName(String)}
 */
public record DriverContext(String instanceId, Path workspaceRoot, Clock clock, Map<String, String> properties,
                            Function<String, String> settingNames) {

    /** Validates and copies. */
    public DriverContext {
        Objects.requireNonNull(instanceId, "instanceId");
        Objects.requireNonNull(workspaceRoot, "workspaceRoot");
        Objects.requireNonNull(clock, "clock");
        properties = Map.copyOf(properties == null ? Map.of() : properties);
        Objects.requireNonNull(settingNames, "settingNames");
    }

    /**
     * A context whose settings are named as {@code SandboxManager.builder()} names them.
     *
     * @param instanceId    the manager's instance id (the owner label)
     * @param workspaceRoot host directory under which drivers with host workdirs create them
     * @param clock         the manager's clock
     * @param properties    driver-specific settings from {@code driverProperty(..)}
     */
    public DriverContext(String instanceId, Path workspaceRoot, Clock clock, Map<String, String> properties) {
        this(instanceId, workspaceRoot, clock, properties, builderNames(properties));
    }

    private static Function<String, String> builderNames(Map<String, String> properties) {
        Map<String, String> given = properties == null ? Map.of() : Map.copyOf(properties);
        return key -> given.containsKey(key) ? "driverProperty(\"" + key + "\")" : "-Dsandboxkit." + key;
    }

    /**
     * A setting from the builder, falling back to the system property {@code sandboxkit.<key>}.
     *
     * @param key setting name, for example {@code docker.host}
     * @return the value, if set
     */
    public Optional<String> property(String key) {
        String value = properties.get(key);
        return Optional.ofNullable(value != null ? value : System.getProperty("sandboxkit." + key));
    }

    /**
     * How the user sets a driver setting, for messages that say where a value came from or what to set: the system
     * property {@code -Dsandboxkit.<key>} when the value comes from there, otherwise the entry point's own name for it
     * ({@code settingNames}).
     *
     * @param key setting name, for example {@code docker.host}
     * @return for example {@code sandboxkit.driver-properties.docker.host}
     */
    public String settingName(String key) {
        if (!properties.containsKey(key) && System.getProperty("sandboxkit." + key) != null) {
            return "-Dsandboxkit." + key;
        }
        return settingNames.apply(key);
    }

    /**
     * Fails on a setting of this driver that it does not know, so that a typo is not silently ignored: a key of
     * {@link #properties()} or a system property {@code sandboxkit.<key>} that starts with {@code prefix} and is not
     * in {@code known}.
     *
     * @param prefix the driver's prefix, for example {@code docker.}
     * @param known  the driver's keys, for example {@code docker.host}
     * @throws SandboxConfigurationException naming the first unknown key as the user set it
     *                                       ({@link #settingName(String)}), with the nearest known one
     */
    public void requireKnownKeys(String prefix, Collection<String> known) {
        Set<String> given = new TreeSet<>();
        properties.keySet().stream().filter(k -> k.startsWith(prefix)).forEach(given::add);
        String system = "sandboxkit." + prefix;
        System.getProperties().stringPropertyNames().stream().filter(k -> k.startsWith(system))
                .forEach(k -> given.add(k.substring("sandboxkit.".length())));
        for (String key : given) {
            if (known.contains(key)) {
                continue;
            }
            String name = settingName(key);
            int at = name.lastIndexOf(key);
            // The suggestion is spelled as the user set the typo: driverProperty("docker.host"), -Dsandboxkit...
            String hint = ConfigValues.nearest(key, known)
                    .map(k -> "; did you mean " + (at < 0 ? k
                            : name.substring(0, at) + k + name.substring(at + key.length())) + "?")
                    .orElse("; the settings are " + String.join(", ", new TreeSet<>(known)));
            throw new SandboxConfigurationException(name + ": no such setting" + hint);
        }
    }
}
