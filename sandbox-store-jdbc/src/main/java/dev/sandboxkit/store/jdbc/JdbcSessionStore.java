package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.SessionStoreException;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.Driver;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;

/**
 * A {@link SessionStore} in a relational database, shared by every manager that uses the same database:
 * sessions survive restarts, and several managers (processes, hosts) can serve one set of sessions.
 *
 * <pre>{@code
 * SessionStore local  = JdbcSessionStore.h2(Path.of("/var/lib/sandboxkit/sessions"));   // one host
 * SessionStore shared = JdbcSessionStore.create(pooledPostgresDataSource);                // many hosts
 * SandboxManager manager = SandboxManager.builder().store(shared).build();
 * }</pre>
 *
 * <p><b>Databases.</b> PostgreSQL (through your {@link DataSource}, ideally a pool), H2 2.x and SQLite files.
 * The JDBC drivers are optional dependencies of this module: add {@code org.postgresql:postgresql},
 * {@code com.h2database:h2} or {@code org.xerial:sqlite-jdbc} yourself. A SQLite DataSource shared by several
 * processes needs WAL and a busy timeout; any transaction mode works (opening retries busy answers for up to
 * 10 s, and the migration takes the write lock before it reads).
 *
 * <p><b>Schema.</b> Two tables, {@code sandboxkit_sessions} and {@code sandboxkit_schema_version}, created
 * and migrated when the store is constructed, from the SQL files shipped in this jar
 * ({@link JdbcDialect#migrationResource(int)}); safe when several processes start at once. With
 * {@link Builder#autoMigrate(boolean) autoMigrate(false)} the store only checks the version and fails with a
 * {@link SandboxConfigurationException} naming the files to run.
 *
 * <p><b>Encoding.</b> Instants are stored as UTC epoch milliseconds ({@code BIGINT}), the same on every
 * database: precision is one millisecond, finer parts are truncated, and every record the store returns
 * is exactly what a later read returns. Attributes are one text column,
 * {@code application/x-www-form-urlencoded} UTF-8 with sorted keys.
 *
 * <p><b>Writes.</b> Every method is one statement, except {@link #heartbeat} (one short transaction).
 * {@link #update} is a single {@code UPDATE ... WHERE session_id = ? AND version = ?} that also keeps
 * {@code last_activity} monotonic in SQL. No call holds a connection while calling out of the store.
 *
 * <p><b>Failures</b> are {@link SessionStoreException}s, {@link SessionStoreException#isRetryable()
 * retryable} when the database is unreachable or the failure is transient (connection errors, SQLState class
 * {@code 08}, {@code 57P01}-{@code 57P03}, {@code 40001}, {@code 40P01}, SQLite busy). Messages name the
 * operation and the database, never spec contents or credentials.
 *
 * <p>Thread-safe.
 */
public final class JdbcSessionStore implements SessionStore {
    /** The schema version this library writes and needs. */
    public static final int SCHEMA_VERSION = Migrations.LATEST;

    private static final Logger log = LoggerFactory.getLogger(JdbcSessionStore.class);
    private static final String TABLE = "sandboxkit_sessions";
    private static final String COLUMNS = "session_id, driver, state, sandbox_id, workspace, spec, spec_fingerprint,"
            + " ephemeral, created_at, last_activity, sandbox_started_at, owner, lease_expiry, version, attributes";
    private static final int HEARTBEAT_ATTEMPTS = 3;

    private final ConnectionSource connections;
    private final JdbcDialect dialect;
    private final String database;
    private final String findSql;
    private final String insertSql;
    private final String updateSql;
    private final String deleteSql;
    private final String pageSql;
    private final String leaseSql;
    private final String activitySql;

    private JdbcSessionStore(ConnectionSource connections, JdbcDialect requested, boolean autoMigrate,
                             String fallbackName) {
        this.connections = connections;
        String described = fallbackName;
        JdbcDialect detected = requested;
        Connection c = null;
        boolean broken = false;
        try {
            c = connections.get();
            DatabaseMetaData meta = c.getMetaData();
            described = meta.getDatabaseProductName() + " " + meta.getDatabaseProductVersion() + " at "
                    + safeUrl(meta.getURL());
            if (detected == null) {
                detected = JdbcDialect.fromProductName(meta.getDatabaseProductName());
                if (detected == null) {
                    throw new SandboxConfigurationException("JdbcSessionStore supports PostgreSQL, H2 and SQLite; "
                            + "the DataSource connects to " + described);
                }
            }
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true);
            }
            int before = Migrations.migrate(c, detected, autoMigrate, described);
            if (before < Migrations.LATEST) {
                log.info("sandboxkit session store schema migrated from version {} to {} on {}", before,
                        Migrations.LATEST, described);
            }
        } catch (SQLException e) {
            broken = true;
            connections.close();
            throw Failures.map("initialisation", described, e);
        } catch (RuntimeException e) {
            broken = true;
            connections.close();
            throw e;
        } finally {
            if (c != null) {
                connections.release(c, broken);
            }
        }
        this.dialect = detected;
        this.database = described;

        String max = detected.greatest();
        String placeholders = "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?";
        this.findSql = "SELECT " + COLUMNS + " FROM " + TABLE + " WHERE session_id = ?";
        this.insertSql = "INSERT INTO " + TABLE + " (" + COLUMNS + ") VALUES (" + placeholders + ")"
                + (detected == JdbcDialect.H2 ? "" : " ON CONFLICT (session_id) DO NOTHING");
        String update = "UPDATE " + TABLE + " SET driver = ?, state = ?, sandbox_id = ?, workspace = ?, spec = ?,"
                + " spec_fingerprint = ?, ephemeral = ?, created_at = ?, last_activity = " + max + "(last_activity, ?),"
                + " sandbox_started_at = ?, owner = ?, lease_expiry = ?, attributes = ?, version = version + 1"
                + " WHERE session_id = ? AND version = ?";
        this.updateSql = detected == JdbcDialect.H2
                ? "SELECT last_activity, version FROM FINAL TABLE (" + update + ")"
                : update + " RETURNING last_activity, version";
        this.deleteSql = "DELETE FROM " + TABLE + " WHERE session_id = ? AND version = ?";
        this.pageSql = "SELECT " + COLUMNS + " FROM " + TABLE + " WHERE state = ? AND session_id > ?"
                + " ORDER BY session_id LIMIT ?";
        String lease = "UPDATE " + TABLE + " SET lease_expiry = ? WHERE owner = ?";
        this.leaseSql = detected == JdbcDialect.H2
                ? "SELECT session_id FROM FINAL TABLE (" + lease + ")"
                : lease + " RETURNING session_id";
        this.activitySql = "UPDATE " + TABLE + " SET last_activity = ? WHERE session_id = ? AND owner = ?"
                + " AND last_activity < ?";
    }

    // ------------------------------------------------------------------------------------ factories

    /**
     * A store in an H2 database file, for one host: durable across restarts (every commit is written at once,
     * so a killed process loses nothing it committed), and safe to open from several processes at once
     * ({@code AUTO_SERVER=TRUE}: the first process serves the file to the others, and another takes over
     * when it exits). Needs {@code com.h2database:h2} on the classpath.
     *
     * <p>Network: H2's auto-server listens on a random TCP port on <em>all interfaces</em>; a client needs the
     * random key H2 writes into the {@code .lock.db} file next to the database. Keep the directory private
     * (directories this method creates are {@code 0700}), and on hosts reachable from untrusted networks
     * start the JVM with {@code -Dh2.bindAddress=127.0.0.1} (loopback only; still multi-process) or use
     * {@link #sqlite(Path)}, which opens no port.
     *
     * <p>Reopening after a crash: when the last process that had the file open was killed (no close, so its
     * {@code .lock.db} file is left behind), opening takes about 3 s longer than after a clean exit (4.4 s
     * against 1.4 s measured on a busy two-core host; SQLite 0.6 s either way). H2 first tries to reach the
     * dead process's auto-server (about 1.2 s of connect retries), then its {@code FILE} lock protocol writes
     * a challenge into the lock file and waits 2 s to see whether a live process restores it (up to 2 s more
     * if the lock file is younger than 2 s). This store keeps that protocol: {@code FILE_LOCK=SOCKET}
     * would skip the wait but refuses for good to reopen a crashed store after the host's address changed
     * (a container restarted with a new IP); {@code FS} and {@code NO} do not work with {@code AUTO_SERVER}.
     *
     * @param file the database file; {@code .mv.db} is appended unless present. Missing parent directories are
     *             created, readable by the owner only.
     * @return the store, schema created or migrated
     * @throws SandboxConfigurationException if the H2 driver is missing or the path is unusable
     * @throws SessionStoreException         if the database cannot be opened
     */
    public static JdbcSessionStore h2(Path file) {
        Objects.requireNonNull(file, "file");
        String path = file.toAbsolutePath().normalize().toString();
        if (path.endsWith(".mv.db")) {
            path = path.substring(0, path.length() - ".mv.db".length());
        }
        if (path.indexOf(';') >= 0) {
            throw new SandboxConfigurationException("an H2 database path must not contain ';': " + path);
        }
        createParent(Path.of(path));
        Driver driver = loadDriver("org.h2.Driver", "com.h2database:h2");
        Properties props = new Properties();
        props.setProperty("user", "sa");
        props.setProperty("password", "");
        // AUTO_SERVER: other processes may open the same file. WRITE_DELAY=0: write each commit to the file at
        // once (H2's default flushes up to 500 ms later, so a killed process loses its last commits; measured).
        // LOCK_TIMEOUT: row locks are held for one statement only, but a busy host may need more than 1 s.
        String url = "jdbc:h2:file:" + path + ";AUTO_SERVER=TRUE;WRITE_DELAY=0;LOCK_TIMEOUT=10000";
        return new JdbcSessionStore(new EmbeddedConnections(driver, url, props), JdbcDialect.H2, true,
                "H2 at jdbc:h2:file:" + path);
    }

    /**
     * A store in a SQLite database file, for one host: WAL journal, a 10 s busy timeout and
     * {@code BEGIN IMMEDIATE} transactions, so several threads and processes can share the file. Needs
     * {@code org.xerial:sqlite-jdbc} on the classpath.
     *
     * @param file the database file. Missing parent directories are created, readable by the owner only.
     * @return the store, schema created or migrated
     * @throws SandboxConfigurationException if the SQLite driver is missing
     * @throws SessionStoreException         if the database cannot be opened
     */
    public static JdbcSessionStore sqlite(Path file) {
        Objects.requireNonNull(file, "file");
        Path path = file.toAbsolutePath().normalize();
        createParent(path);
        Driver driver = loadDriver("org.sqlite.JDBC", "org.xerial:sqlite-jdbc");
        Properties props = new Properties();
        props.setProperty("journal_mode", "WAL");
        props.setProperty("synchronous", "FULL");
        props.setProperty("busy_timeout", "10000");
        props.setProperty("transaction_mode", "IMMEDIATE");
        return new JdbcSessionStore(new EmbeddedConnections(driver, "jdbc:sqlite:" + path, props),
                JdbcDialect.SQLITE, true, "SQLite at jdbc:sqlite:" + path);
    }

    /**
     * A store on your DataSource (use a connection pool), dialect detected, schema migrated automatically.
     * The store never closes the DataSource.
     *
     * @param dataSource connections to PostgreSQL, H2 or SQLite
     * @return the store
     * @throws SandboxConfigurationException if the database is not supported or its schema is newer
     * @throws SessionStoreException         if the database cannot be reached (retryable)
     */
    public static JdbcSessionStore create(DataSource dataSource) {
        return builder(dataSource).build();
    }

    /**
     * Starts configuring a store on your DataSource.
     *
     * @param dataSource connections to PostgreSQL, H2 or SQLite; never closed by the store
     * @return a builder
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(Objects.requireNonNull(dataSource, "dataSource"));
    }

    /**
     * Options for a store on a DataSource. Each option may be set once (a service builder; see docs/api.md, "API
     * rules"). Not thread-safe.
     */
    public static final class Builder {
        private final DataSource dataSource;
        private JdbcDialect dialect;
        private Boolean autoMigrate;

        private Builder(DataSource dataSource) {
            this.dataSource = dataSource;
        }

        /**
         * The database dialect. Default: detected from the connection's metadata.
         *
         * @param value the dialect
         * @return this builder
         * @throws IllegalStateException if the dialect was set already
         */
        public Builder dialect(JdbcDialect value) {
            if (dialect != null) {
                throw new IllegalStateException("dialect was already set");
            }
            this.dialect = Objects.requireNonNull(value, "value");
            return this;
        }

        /**
         * Whether the store creates and migrates its tables at construction (default {@code true}). When
         * {@code false}, it only checks that the schema is at {@link #SCHEMA_VERSION} and otherwise fails
         * with a {@link SandboxConfigurationException} naming the scripts to run.
         *
         * @param value whether to migrate
         * @return this builder
         * @throws IllegalStateException if it was set already
         */
        public Builder autoMigrate(boolean value) {
            if (autoMigrate != null) {
                throw new IllegalStateException("autoMigrate was already set");
            }
            this.autoMigrate = value;
            return this;
        }

        /**
         * Connects, migrates or checks the schema, and returns the store.
         *
         * @return the store
         * @throws SandboxConfigurationException if the database is unsupported or the schema is missing
         *                                       (auto-migration off) or newer than this library
         * @throws SessionStoreException         if the database cannot be reached (retryable)
         */
        public JdbcSessionStore build() {
            return new JdbcSessionStore(new DataSourceConnections(dataSource), dialect, autoMigrate == null || autoMigrate,
                    "the database of " + dataSource.getClass().getSimpleName());
        }
    }

    // ------------------------------------------------------------------------------------ SessionStore

    /**
     * {@inheritDoc}
     *
     * @throws SessionStoreException if the database fails
     */
    @Override
    public Optional<SessionRecord> find(String sessionId) {
        Objects.requireNonNull(sessionId, "sessionId");
        return call("find of session " + sessionId, c -> {
            try (PreparedStatement ps = c.prepareStatement(findSql)) {
                ps.setString(1, sessionId);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(SessionRows.read(rs, database)) : Optional.<SessionRecord>empty();
                }
            }
        });
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException if the record's version is not 1
     * @throws SessionStoreException    if the database fails
     */
    @Override
    public boolean insert(SessionRecord record) {
        if (record.version() != 1) {
            throw new IllegalArgumentException("a new record must have version 1, got " + record.version());
        }
        return call("insert of session " + record.sessionId(), c -> {
            try (PreparedStatement ps = c.prepareStatement(insertSql)) {
                ps.setString(1, record.sessionId());
                int i = SessionRows.bindFields(ps, 2, record);
                ps.setLong(i++, 1L);
                ps.setString(i, AttributeCodec.encode(record.attributes()));
                return ps.executeUpdate() == 1;
            } catch (SQLException e) {
                if ("23505".equals(e.getSQLState())) {
                    return false; // H2 (and any other): the id exists
                }
                throw e;
            }
        });
    }

    /**
     * {@inheritDoc}
     *
     * <p>The returned record carries the stored values: instants truncated to milliseconds and the stored
     * last activity when it was newer than the record's.
     *
     * @throws SessionStoreException if the database fails
     */
    @Override
    public Optional<SessionRecord> update(SessionRecord record) {
        return call("update of session " + record.sessionId(), c -> {
            try (PreparedStatement ps = c.prepareStatement(updateSql)) {
                int i = SessionRows.bindFields(ps, 1, record);
                ps.setString(i++, AttributeCodec.encode(record.attributes()));
                ps.setString(i++, record.sessionId());
                ps.setLong(i, record.version());
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return Optional.<SessionRecord>empty();
                    }
                    long lastActivity = rs.getLong(1);
                    long version = rs.getLong(2);
                    return Optional.of(SessionRows.truncated(record).withLastActivity(Instant.ofEpochMilli(lastActivity))
                            .withVersion(version));
                }
            }
        });
    }

    /**
     * {@inheritDoc}
     *
     * @throws SessionStoreException if the database fails
     */
    @Override
    public boolean delete(String sessionId, long expectedVersion) {
        Objects.requireNonNull(sessionId, "sessionId");
        return call("delete of session " + sessionId, c -> {
            try (PreparedStatement ps = c.prepareStatement(deleteSql)) {
                ps.setString(1, sessionId);
                ps.setLong(2, expectedVersion);
                return ps.executeUpdate() == 1;
            }
        });
    }

    /**
     * {@inheritDoc}
     *
     * <p>Served by the {@code (state, session_id)} index (schema version 2), one keyset query per page, so a
     * page costs the same wherever it starts. Ids are ordered by the database's collation.
     *
     * @throws SessionStoreException if the database fails
     */
    @Override
    public List<SessionRecord> findByState(SessionState state, @Nullable String afterSessionId, int limit) {
        Objects.requireNonNull(state, "state");
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        return call("search for " + state + " sessions", c -> {
            try (PreparedStatement ps = c.prepareStatement(pageSql)) {
                ps.setString(1, state.name());
                ps.setString(2, afterSessionId == null ? "" : afterSessionId); // '' sorts before every id
                ps.setInt(3, limit);
                return SessionRows.readAll(ps, database);
            }
        });
    }

    /**
     * {@inheritDoc}
     *
     * <p>One transaction: one {@code UPDATE} renews the lease of every row the owner owns (returning their
     * ids), then a batch moves {@code last_activity} forward for those of them named in
     * {@code lastActivity}. Retried up to three times on a deadlock or serialization failure; it is
     * idempotent.
     *
     * @throws SessionStoreException if the database fails
     */
    @Override
    public List<String> heartbeat(String owner, Map<String, Instant> lastActivity, Instant leaseExpiry) {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(lastActivity, "lastActivity");
        Objects.requireNonNull(leaseExpiry, "leaseExpiry");
        TreeMap<String, Instant> sorted = new TreeMap<>(lastActivity); // one lock order for every caller
        for (int attempt = 1; ; attempt++) {
            try {
                return call("heartbeat of " + owner, c -> heartbeat(c, owner, sorted, leaseExpiry));
            } catch (SessionStoreException e) {
                if (attempt >= HEARTBEAT_ATTEMPTS || !isConflict(e.getCause())) {
                    throw e;
                }
            }
        }
    }

    private List<String> heartbeat(Connection c, String owner, TreeMap<String, Instant> activity,
                                   Instant leaseExpiry) throws SQLException {
        c.setAutoCommit(false);
        boolean done = false;
        try {
            List<String> owned = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(leaseSql)) {
                ps.setLong(1, leaseExpiry.toEpochMilli());
                ps.setString(2, owner);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        owned.add(rs.getString(1));
                    }
                }
            }
            java.util.Set<String> ownedSet = new java.util.HashSet<>(owned);
            boolean any = false;
            try (PreparedStatement ps = c.prepareStatement(activitySql)) {
                for (Map.Entry<String, Instant> e : activity.entrySet()) {
                    if (!ownedSet.contains(e.getKey())) {
                        continue;
                    }
                    long at = e.getValue().toEpochMilli();
                    ps.setLong(1, at);
                    ps.setString(2, e.getKey());
                    ps.setString(3, owner);
                    ps.setLong(4, at);
                    ps.addBatch();
                    any = true;
                }
                if (any) {
                    ps.executeBatch();
                }
            }
            c.commit();
            done = true;
            return owned;
        } finally {
            if (!done) {
                try {
                    c.rollback();
                } catch (SQLException ignored) {
                    // the connection is discarded as broken anyway
                }
            }
            c.setAutoCommit(true);
        }
    }

    /**
     * Closes the connections this store opened itself (embedded H2 and SQLite). A DataSource passed in is
     * left open. Idempotent.
     */
    @Override
    public void close() {
        connections.close();
    }

    /**
     * The dialect in use.
     *
     * @return the dialect
     */
    public JdbcDialect dialect() {
        return dialect;
    }

    /**
     * A description of the store, naming the database without credentials.
     *
     * @return for example {@code JdbcSessionStore[PostgreSQL 15.18 at jdbc:postgresql://db:5432/app]}
     */
    @Override
    public String toString() {
        return "JdbcSessionStore[" + database + "]";
    }

    // ------------------------------------------------------------------------------------ plumbing

    @FunctionalInterface
    private interface SqlCall<T> {
        T apply(Connection c) throws SQLException;
    }

    /** Runs one store call on one connection, mapping failures; the connection is discarded if anything failed. */
    private <T> T call(String operation, SqlCall<T> work) {
        Connection c = null;
        boolean broken = true;
        // An interrupt would close an embedded database's file channel (NIO) and with it the database, for every
        // caller: the call runs without the flag, bounded by the statement timeout, and the flag comes back.
        boolean interrupted = Thread.interrupted();
        try {
            c = connections.get();
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true); // a pool configured with autoCommit=false would never commit our writes
            }
            T result = work.apply(c);
            broken = false;
            return result;
        } catch (SQLException e) {
            throw Failures.map(operation, database, e);
        } finally {
            try {
                if (c != null) {
                    connections.release(c, broken);
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** A deadlock, serialization failure or lock timeout, anywhere in the chain (batches nest them). */
    private static boolean isConflict(Throwable failure) {
        int steps = 0;
        for (Throwable t = failure; t != null && steps++ < 20; t = t.getCause()) {
            if (t instanceof SQLException e) {
                for (SQLException s = e; s != null && steps++ < 20; s = s.getNextException()) {
                    String state = s.getSQLState();
                    if ("40001".equals(state) || "40P01".equals(state) || "HYT00".equals(state)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    private static Driver loadDriver(String className, String coordinate) {
        try {
            Class<?> type = Class.forName(className, true, JdbcSessionStore.class.getClassLoader());
            return (Driver) type.getDeclaredConstructor().newInstance();
        } catch (ClassNotFoundException | NoClassDefFoundError e) {
            throw new SandboxConfigurationException("the JDBC driver " + className + " is not on the classpath: add "
                    + coordinate + " (sandbox-store-jdbc declares it optional)", e);
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new SandboxConfigurationException("cannot instantiate the JDBC driver " + className, e);
        }
    }

    /** Creates missing parent directories, owner-only where the file system has POSIX permissions. */
    private static void createParent(Path file) {
        Path parent = file.getParent();
        if (parent != null && !Files.isDirectory(parent)) {
            try {
                if (parent.getFileSystem().supportedFileAttributeViews().contains("posix")) {
                    Path ancestor = parent;
                    java.util.Deque<Path> missing = new java.util.ArrayDeque<>();
                    while (ancestor != null && !Files.exists(ancestor)) {
                        missing.push(ancestor);
                        ancestor = ancestor.getParent();
                    }
                    for (Path dir : missing) {
                        try {
                            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(
                                    PosixFilePermissions.fromString("rwx------")));
                        } catch (java.nio.file.FileAlreadyExistsException raced) {
                            // another process or thread created it
                        }
                    }
                } else {
                    Files.createDirectories(parent);
                }
            } catch (IOException e) {
                throw new SandboxConfigurationException("cannot create the directory " + parent
                        + " for the session store: " + e, e);
            }
        }
    }

    /** A JDBC URL without credentials or settings: no user-info, nothing after '?' or ';'. */
    static String safeUrl(String url) {
        if (url == null) {
            return "unknown URL";
        }
        String s = url;
        int cut = s.length();
        for (char ch : new char[]{'?', ';'}) {
            int i = s.indexOf(ch);
            if (i >= 0 && i < cut) {
                cut = i;
            }
        }
        s = s.substring(0, cut);
        return s.replaceFirst("//[^/@]*@", "//");
    }
}
