package dev.sandboxkit.docker;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;

/** {@link EgressOnDockerContract} under gVisor with named-volume workdirs. */
@Tag("gvisor")
@Tag("volume")
@DisplayName("Egress by allow-list: gVisor, named-volume workdirs")
class EgressOnRunscVolumeTest extends EgressOnDockerContract {
    @Override
    @Nullable String runtime() {
        return "runsc";
    }

    @Override
    boolean volumes() {
        return true;
    }
}
