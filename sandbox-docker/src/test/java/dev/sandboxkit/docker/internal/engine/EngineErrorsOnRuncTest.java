package dev.sandboxkit.docker.internal.engine;

/** {@link EngineErrors} on Docker with runc. */
class EngineErrorsOnRuncTest extends EngineErrorsOnEngines {
    @Override
    String address() {
        return "unix:///var/run/docker.sock";
    }

    @Override
    String runtime() {
        return "runc";
    }

    @Override
    boolean podman() {
        return false;
    }
}
