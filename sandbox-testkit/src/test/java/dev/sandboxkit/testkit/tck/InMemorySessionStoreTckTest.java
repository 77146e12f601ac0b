package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.spi.SessionStore;
import org.junit.jupiter.api.DisplayName;

/** The reference store passes the session-store conformance kit. */
@DisplayName("In-memory session store conformance")
class InMemorySessionStoreTckTest extends SessionStoreTck {
    @Override
    protected SessionStore createStore() {
        return SessionStore.inMemory();
    }
}
