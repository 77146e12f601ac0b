package dev.sandboxkit.store.jdbc;

import org.junit.jupiter.api.Assumptions;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The test PostgreSQL (scripts/setup-postgres.sh). Settings: system properties
 * {@code sandboxkit.test.postgres.url|user|password}, else env {@code SANDBOXKIT_PG_URL|USER|PASSWORD}, else
 * the script's defaults. Unreachable: the test FAILS; it is skipped only with
 * {@code -Dsandboxkit.skipPostgresTests=true}, and never when {@code CI=true}.
 */
final class Postgres {
    static final String URL = setting("sandboxkit.test.postgres.url", "SANDBOXKIT_PG_URL",
            "jdbc:postgresql://127.0.0.1:54329/sandboxkit_test");
    static final String USER = setting("sandboxkit.test.postgres.user", "SANDBOXKIT_PG_USER", "postgres");
    static final String PASSWORD = setting("sandboxkit.test.postgres.password", "SANDBOXKIT_PG_PASSWORD", "sandboxkit");
    private static final AtomicInteger SCHEMAS = new AtomicInteger();
    private static volatile Boolean reachable;

    private Postgres() {
    }

    private static String setting(String property, String env, String fallback) {
        String value = System.getProperty(property);
        if (value == null || value.isBlank()) {
            value = System.getenv(env);
        }
        return value == null || value.isBlank() ? fallback : value;
    }

    /** Fails (or, only if explicitly asked and not on CI, skips) when PostgreSQL cannot be reached. */
    static void require() {
        if (reachable == null) {
            try (Connection c = dataSource(null).getConnection()) {
                reachable = c.isValid(5);
            } catch (SQLException e) {
                reachable = false;
            }
        }
        if (reachable) {
            return;
        }
        String why = "PostgreSQL is not reachable at " + URL + " as " + USER
                + ". Start it with scripts/setup-postgres.sh (as root), or point sandboxkit.test.postgres.url/user/password"
                + " (env SANDBOXKIT_PG_URL/USER/PASSWORD) at one.";
        boolean ci = "true".equalsIgnoreCase(System.getenv("CI"));
        if (!ci && Boolean.getBoolean("sandboxkit.skipPostgresTests")) {
            Assumptions.abort("skipped on request (-Dsandboxkit.skipPostgresTests=true): " + why);
        }
        throw new AssertionError(why + (ci ? " CI=true: PostgreSQL tests never skip."
                : " To skip these tests locally, pass -Dsandboxkit.skipPostgresTests=true."));
    }

    /** A DataSource whose connections use the schema (search_path), or the default one. */
    static PGSimpleDataSource dataSource(String schema) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(URL);
        ds.setUser(USER);
        ds.setPassword(PASSWORD);
        ds.setConnectTimeout(5);
        if (schema != null) {
            ds.setCurrentSchema(schema);
        }
        return ds;
    }

    /** Creates a fresh, empty schema with a unique name. */
    static String createSchema(String prefix) {
        require();
        String name = prefix + "_" + ProcessHandle.current().pid() + "_" + SCHEMAS.incrementAndGet();
        execute("DROP SCHEMA IF EXISTS " + name + " CASCADE", "CREATE SCHEMA " + name);
        return name;
    }

    static void dropSchema(String name) {
        execute("DROP SCHEMA IF EXISTS " + name + " CASCADE");
    }

    static void execute(String... sql) {
        execute(dataSource(null), sql);
    }

    static void execute(DataSource ds, String... sql) {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            for (String one : sql) {
                s.execute(one);
            }
        } catch (SQLException e) {
            throw new AssertionError("PostgreSQL: " + e.getMessage(), e);
        }
    }
}
