package dev.sandboxkit.spring.boot.internal;

import dev.sandboxkit.SandboxConfigurationException;

/** Failures of the starter's own options that name the property, so a bad value is found from the startup error alone. */
final class Check {
    private Check() {
    }

    static SandboxConfigurationException invalid(String property, String problem) {
        return new SandboxConfigurationException("Invalid property " + property + ": " + problem);
    }

    static SandboxConfigurationException invalid(String property, String problem, Throwable cause) {
        return new SandboxConfigurationException("Invalid property " + property + ": " + problem, cause);
    }
}
