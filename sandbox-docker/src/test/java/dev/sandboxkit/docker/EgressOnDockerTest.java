package dev.sandboxkit.docker;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;

/** {@link EgressLoadContract} on runc with host-directory workdirs. */
@Tag("slow")
@DisplayName("Egress by allow-list: runc, host-directory workdirs")
class EgressOnDockerTest extends EgressLoadContract {
    @Override
    @Nullable String runtime() {
        return null;
    }

    @Override
    boolean volumes() {
        return false;
    }
}
