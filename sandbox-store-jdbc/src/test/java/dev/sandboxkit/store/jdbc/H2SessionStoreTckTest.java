package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.testkit.tck.SessionStoreTck;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

/**
 * One H2 file for the class, opened the way users open it ({@code JdbcSessionStore.h2}); each test starts
 * with the sessions table emptied. (Opening a new file per test costs about 0.2 s; migration has its own tests.)
 */
@DisplayName("JDBC session store on an H2 file: conformance")
class H2SessionStoreTckTest extends SessionStoreTck {
    @TempDir
    static Path dir;
    private static JdbcSessionStore store;

    @Override
    protected SessionStore createStore() {
        if (store == null) {
            store = JdbcSessionStore.h2(dir.resolve("tck"));
        }
        TableCleaner.deleteAllSessions(TableCleaner.h2(dir.resolve("tck")));
        return store;
    }

    @Override
    protected void disposeStore(SessionStore used) {
        // kept open for the next test
    }

    @AfterAll
    static void closeStore() {
        if (store != null) {
            store.close();
            store = null;
        }
    }
}
