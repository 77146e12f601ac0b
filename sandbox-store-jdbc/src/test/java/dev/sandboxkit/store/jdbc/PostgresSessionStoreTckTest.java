package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.testkit.tck.SessionStoreTck;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;

/**
 * One fresh schema for the class, dropped afterwards; each test starts with the sessions table emptied. The
 * store sits on a small validating pool, as in production (a new connection costs 20-35 ms here: fork + scram).
 */
@Tag("postgres")
@DisplayName("JDBC session store on PostgreSQL: conformance")
class PostgresSessionStoreTckTest extends SessionStoreTck {
    private static String schema;
    private static TestPool pool;
    private static JdbcSessionStore store;

    @Override
    protected SessionStore createStore() {
        if (store == null) {
            schema = Postgres.createSchema("tck");
            pool = new TestPool(Postgres.dataSource(schema), 10);
            store = JdbcSessionStore.create(pool);
        }
        TableCleaner.deleteAllSessions(pool);
        return store;
    }

    @Override
    protected void disposeStore(SessionStore used) {
        // kept for the next test
    }

    @AfterAll
    static void dropSchema() {
        if (store != null) {
            store.close();
            pool.close();
            Postgres.dropSchema(schema);
            store = null;
        }
    }
}
