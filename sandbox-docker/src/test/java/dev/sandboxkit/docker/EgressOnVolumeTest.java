package dev.sandboxkit.docker;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;

/** {@link EgressOnDockerContract} on runc with named-volume workdirs. */
@Tag("volume")
@DisplayName("Egress by allow-list: runc, named-volume workdirs")
class EgressOnVolumeTest extends EgressOnDockerContract {
    @Override
    @Nullable String runtime() {
        return null;
    }

    @Override
    boolean volumes() {
        return true;
    }
}
