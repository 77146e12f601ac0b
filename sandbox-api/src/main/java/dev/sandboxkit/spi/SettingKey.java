package dev.sandboxkit.spi;

import dev.sandboxkit.SandboxConfig;

import java.util.Objects;

/**
 * One driver setting as the documentation and tools list it: its key, what its value is, its default and what it
 * means. A driver lists its own (for example {@code DockerSettings.keys()}), and
 * {@link SandboxDriverProvider#settingKeys()} hands them out.
 *
 * @param name         the key, without {@value SandboxConfig#PREFIX}: for example {@code docker.host}
 * @param type         {@code duration}, {@code size}, {@code boolean}, {@code integer}, {@code number},
 *                     {@code string}, {@code path}, {@code list}, or the allowed values joined by {@code |}
 * @param defaultValue the default as text in {@link ConfigValues}' syntax, which parses back to the default; empty
 *                     when the setting is unset by default (the description says what happens then)
 * @param description  what the setting means, in a sentence or two
 */
public record SettingKey(String name, String type, String defaultValue, String description) {

    /** Checks that every part is there. */
    public SettingKey {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(defaultValue, "defaultValue");
        Objects.requireNonNull(description, "description");
    }

    /**
     * The key as a system property or Spring Boot property.
     *
     * @return for example {@code sandboxkit.docker.host}
     */
    public String property() {
        return SandboxConfig.PREFIX + name;
    }
}
