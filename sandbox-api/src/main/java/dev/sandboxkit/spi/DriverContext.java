package dev.sandboxkit.spi;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What a driver is given when the manager creates it.
 *
 * @param instanceId    the manager's instance id (the owner label)
 * @param workspaceRoot host directory under which drivers with host workdirs create them
 * @param clock         the manager's clock
 * @param properties    driver-specific settings from {@code driverProperty(..)}
 */
public record DriverContext(String instanceId, Path workspaceRoot, Clock clock, Map<String, String> properties) {

    /** Validates and copies. */
    public DriverContext {
        Objects.requireNonNull(instanceId, "instanceId");
        Objects.requireNonNull(workspaceRoot, "workspaceRoot");
        Objects.requireNonNull(clock, "clock");
        properties = Map.copyOf(properties == null ? Map.of() : properties);
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
}
