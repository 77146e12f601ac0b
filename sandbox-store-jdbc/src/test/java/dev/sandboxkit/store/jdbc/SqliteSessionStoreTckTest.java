package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.testkit.tck.SessionStoreTck;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

@DisplayName("JDBC session store on a SQLite file: conformance")
class SqliteSessionStoreTckTest extends SessionStoreTck {
    private static final AtomicInteger FILES = new AtomicInteger();
    @TempDir
    static Path dir;

    @Override
    protected SessionStore createStore() {
        return JdbcSessionStore.sqlite(dir.resolve("tck-" + FILES.incrementAndGet() + ".db"));
    }
}
