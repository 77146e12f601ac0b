package dev.sandboxkit.store.jdbc;

/**
 * The databases {@link JdbcSessionStore} supports. Detected from the connection's
 * {@link java.sql.DatabaseMetaData#getDatabaseProductName() product name} unless set on the builder.
 */
public enum JdbcDialect {
    /** PostgreSQL 12 or later: the store to share between several managers. */
    POSTGRESQL("postgresql", "GREATEST"),
    /** H2 2.x, embedded file database: one host, one or more processes. */
    H2("h2", "GREATEST"),
    /** SQLite 3.35 or later, one file in WAL mode: one host. */
    SQLITE("sqlite", "MAX");

    private final String directory;
    private final String greatest;

    JdbcDialect(String directory, String greatest) {
        this.directory = directory;
        this.greatest = greatest;
    }

    /**
     * The classpath resource of one of this dialect's migration scripts (the paths are documented in
     * docs/store-jdbc.md for teams that manage the schema themselves).
     */
    String migrationResource(int version) {
        return "dev/sandboxkit/store/jdbc/schema/" + directory + "/" + Migrations.fileName(version);
    }

    /** The two-argument maximum function: {@code GREATEST} or SQLite's scalar {@code MAX}. */
    String greatest() {
        return greatest;
    }

    /** Maps {@link java.sql.DatabaseMetaData#getDatabaseProductName()} to a dialect, or null. */
    static JdbcDialect fromProductName(String productName) {
        if (productName == null) {
            return null;
        }
        String p = productName.toLowerCase(java.util.Locale.ROOT);
        if (p.contains("postgres")) {
            return POSTGRESQL;
        }
        if (p.equals("h2") || p.startsWith("h2 ")) {
            return H2;
        }
        if (p.contains("sqlite")) {
            return SQLITE;
        }
        return null;
    }
}
