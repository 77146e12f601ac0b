package dev.sandboxkit.store.jdbc;

import org.h2.jdbcx.JdbcDataSource;

import javax.sql.DataSource;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/** Empties the sessions table between tests that share one database. */
final class TableCleaner {
    private TableCleaner() {
    }

    static void deleteAllSessions(DataSource ds) {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.executeUpdate("DELETE FROM sandboxkit_sessions");
        } catch (SQLException e) {
            throw new AssertionError("could not empty sandboxkit_sessions: " + e.getMessage(), e);
        }
    }

    /** A DataSource on the H2 file that {@code JdbcSessionStore.h2(file)} opened (same settings, same database). */
    static DataSource h2(Path file) {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:file:" + file.toAbsolutePath().normalize()
                + ";AUTO_SERVER=TRUE;WRITE_DELAY=0;LOCK_TIMEOUT=10000");
        ds.setUser("sa");
        ds.setPassword("");
        return ds;
    }
}
