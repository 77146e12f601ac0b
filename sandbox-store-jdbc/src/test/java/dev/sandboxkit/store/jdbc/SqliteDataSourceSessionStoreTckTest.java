package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.testkit.tck.SessionStoreTck;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/** A caller's own SQLiteDataSource with the driver's default DEFERRED transactions, not the factory's IMMEDIATE. */
@DisplayName("JDBC session store on a caller's SQLiteDataSource (DEFERRED transactions): conformance")
class SqliteDataSourceSessionStoreTckTest extends SessionStoreTck {
    private static final AtomicInteger FILES = new AtomicInteger();
    @TempDir
    static Path dir;

    @Override
    protected SessionStore createStore() {
        SQLiteDataSource ds = FailureTest.walDataSource(dir.resolve("tck-" + FILES.incrementAndGet() + ".db"));
        ds.setTransactionMode("DEFERRED");
        return JdbcSessionStore.create(ds);
    }
}
