package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.SandboxConfigurationException;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * Creates and migrates the schema from the SQL files shipped in the jar, or only checks it.
 *
 * <p>Concurrency: PostgreSQL takes a transaction-scoped advisory lock and runs everything in one transaction;
 * SQLite runs everything in one {@code BEGIN IMMEDIATE} transaction (one writer per file); H2 commits each DDL
 * statement by itself, so its scripts are idempotent and two processes may run them at once.
 */
final class Migrations {
    /** Descriptions of the migrations, index 0 = version 1. Files are {@code V<n>__<description>.sql}. */
    private static final List<String> DESCRIPTIONS = List.of("sessions", "state_index");
    static final int LATEST = DESCRIPTIONS.size();
    /** pg_advisory_xact_lock key: the bytes of "sandboxk". */
    static final long PG_LOCK_KEY = 0x73616e64626f786bL;
    private static final int H2_ATTEMPTS = 5;
    private static final Pattern STATEMENT_END = Pattern.compile(";[ \\t]*(\\r?\\n|$)");

    private Migrations() {
    }

    static String fileName(int version) {
        if (version < 1 || version > LATEST) {
            throw new IllegalArgumentException("no schema version " + version + "; this sandboxkit has 1-" + LATEST);
        }
        return "V" + version + "__" + DESCRIPTIONS.get(version - 1) + ".sql";
    }

    /** The statements of one shipped script, in order. */
    static List<String> statements(JdbcDialect dialect, int version) {
        String resource = dialect.migrationResource(version);
        String text;
        try (InputStream in = Migrations.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + resource + " (broken sandbox-store-jdbc jar?)");
            }
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + resource, e);
        }
        return split(text);
    }

    /** Splits a script: statements end with ';' at the end of a line; '--' lines are comments. */
    static List<String> split(String script) {
        StringBuilder body = new StringBuilder();
        for (String line : script.split("\\r?\\n", -1)) {
            if (!line.strip().startsWith("--")) {
                body.append(line).append('\n');
            }
        }
        List<String> out = new ArrayList<>();
        for (String part : STATEMENT_END.split(body)) {
            String sql = part.strip();
            if (!sql.isEmpty()) {
                out.add(sql);
            }
        }
        return out;
    }

    /**
     * Brings the schema to {@link #LATEST}, or with {@code autoMigrate == false} only checks that it is there.
     *
     * <p>H2 cannot serialise migrations: its DDL commits by itself, and two connections running
     * {@code CREATE INDEX IF NOT EXISTS} at the same moment can fail with "object already exists" (measured).
     * The H2 scripts are idempotent, so a failed run is simply repeated, a few times, after a short pause.
     *
     * @return the schema version found before migrating (0 for an empty database)
     */
    static int migrate(Connection c, JdbcDialect dialect, boolean autoMigrate, String database) throws SQLException {
        int attempts = dialect == JdbcDialect.H2 ? H2_ATTEMPTS : 1;
        for (int attempt = 1; ; attempt++) {
            try {
                return migrateOnce(c, dialect, autoMigrate, database);
            } catch (SQLException e) {
                if (attempt >= attempts) {
                    throw e;
                }
                try {
                    Thread.sleep(ThreadLocalRandom.current().nextLong(10, 50L * attempt));
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    private static int migrateOnce(Connection c, JdbcDialect dialect, boolean autoMigrate, String database)
            throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        // SQLite: a DEFERRED transaction that reads the version and then writes fails at once with SQLITE_BUSY
        // when another process migrated in between (the busy timeout does not apply), so the write lock is
        // taken first, whatever transaction mode the caller's DataSource uses.
        boolean sqlite = dialect == JdbcDialect.SQLITE;
        c.setAutoCommit(sqlite);
        if (sqlite) {
            run(c, "BEGIN IMMEDIATE");
        }
        try {
            if (dialect == JdbcDialect.POSTGRESQL) {
                try (PreparedStatement lock = c.prepareStatement("SELECT pg_advisory_xact_lock(?)")) {
                    lock.setLong(1, PG_LOCK_KEY);
                    lock.execute();
                }
            }
            int found = currentVersion(c, dialect);
            if (found > LATEST) {
                throw new SandboxConfigurationException("the sandboxkit schema in " + database + " is at version "
                        + found + ", newer than this sandbox-store-jdbc supports (" + LATEST + "): upgrade sandboxkit");
            }
            if (found < LATEST) {
                if (!autoMigrate) {
                    throw new SandboxConfigurationException(missingMessage(dialect, found, database));
                }
                try (Statement s = c.createStatement()) {
                    for (int v = found + 1; v <= LATEST; v++) {
                        for (String sql : statements(dialect, v)) {
                            s.execute(sql);
                        }
                    }
                }
                int now = currentVersion(c, dialect);
                if (now != LATEST) {
                    throw new IllegalStateException("schema scripts ran but " + database + " reports version " + now);
                }
            }
            if (sqlite) {
                run(c, "COMMIT");
            } else {
                c.commit();
            }
            return found;
        } catch (SQLException | RuntimeException e) {
            rollbackQuietly(c, sqlite);
            throw e;
        } finally {
            c.setAutoCommit(autoCommit);
        }
    }

    private static String missingMessage(JdbcDialect dialect, int found, String database) {
        StringBuilder files = new StringBuilder();
        for (int v = found + 1; v <= LATEST; v++) {
            files.append(files.length() == 0 ? "" : ", ").append(dialect.migrationResource(v));
        }
        return (found == 0 ? "no sandboxkit schema in " + database + " (table sandboxkit_schema_version is missing)"
                : "the sandboxkit schema in " + database + " is at version " + found + ", this library needs " + LATEST)
                + " and automatic migration is disabled: run " + files
                + " (shipped in the sandbox-store-jdbc jar) or enable autoMigrate(true)";
    }

    /** The highest recorded version, 0 when the version table does not exist. Never fails a PG transaction. */
    static int currentVersion(Connection c, JdbcDialect dialect) throws SQLException {
        String exists = switch (dialect) {
            case POSTGRESQL -> "SELECT to_regclass('sandboxkit_schema_version') IS NOT NULL";
            case H2 -> "SELECT COUNT(*) > 0 FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = CURRENT_SCHEMA"
                    + " AND TABLE_NAME = 'SANDBOXKIT_SCHEMA_VERSION'";
            case SQLITE -> "SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table'"
                    + " AND name = 'sandboxkit_schema_version'";
        };
        try (Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery(exists)) {
                if (!rs.next() || !rs.getBoolean(1)) {
                    return 0;
                }
            }
            try (ResultSet rs = s.executeQuery("SELECT MAX(version) FROM sandboxkit_schema_version")) {
                return rs.next() ? rs.getInt(1) : 0;
            }
        }
    }

    private static void run(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static void rollbackQuietly(Connection c, boolean explicit) {
        try {
            if (explicit) {
                run(c, "ROLLBACK");
            } else {
                c.rollback();
            }
        } catch (SQLException ignored) {
            // the original failure is what matters
        }
    }
}
