package dev.sandboxkit.docker;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;

/** {@link EgressOnDockerContract} on runc with host-directory workdirs. */
@Tag("slow")
@DisplayName("Egress by allow-list: runc, host-directory workdirs")
class EgressOnDockerTest extends EgressOnDockerContract {
    @Override
    @Nullable String runtime() {
        return null;
    }

    @Override
    boolean volumes() {
        return false;
    }
}
