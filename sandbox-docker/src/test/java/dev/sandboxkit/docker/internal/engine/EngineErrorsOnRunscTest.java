package dev.sandboxkit.docker.internal.engine;

import org.junit.jupiter.api.Tag;

/** {@link EngineErrors} on Docker with gVisor ({@code runsc}, registered by scripts/setup-env.sh). */
@Tag("gvisor")
class EngineErrorsOnRunscTest extends EngineErrorsOnEngines {
    @Override
    String address() {
        return "unix:///var/run/docker.sock";
    }

    @Override
    String runtime() {
        return "runsc";
    }

    @Override
    boolean podman() {
        return false;
    }
}
