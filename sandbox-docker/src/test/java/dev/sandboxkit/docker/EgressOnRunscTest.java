package dev.sandboxkit.docker;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;

/** {@link EgressLoadContract} under gVisor with host-directory workdirs. */
@Tag("gvisor")
@DisplayName("Egress by allow-list: gVisor, host-directory workdirs")
class EgressOnRunscTest extends EgressLoadContract {
    @Override
    @Nullable String runtime() {
        return "runsc";
    }

    @Override
    boolean volumes() {
        return false;
    }
}
