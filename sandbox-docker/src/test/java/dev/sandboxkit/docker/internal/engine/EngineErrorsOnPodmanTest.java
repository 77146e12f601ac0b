package dev.sandboxkit.docker.internal.engine;

import org.junit.jupiter.api.Tag;

/** {@link EngineErrors} on Podman's Docker API ({@code scripts/setup-podman.sh} serves it). */
@Tag("podman")
class EngineErrorsOnPodmanTest extends EngineErrorsOnEngines {
    @Override
    String address() {
        return "unix://" + System.getProperty("sandboxkit.test.podmanSocket", "/run/sandboxkit-podman.sock");
    }

    @Override
    String runtime() {
        return null;
    }

    @Override
    boolean podman() {
        return true;
    }
}
