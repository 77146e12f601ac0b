package dev.sandboxkit.spi;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
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
}
