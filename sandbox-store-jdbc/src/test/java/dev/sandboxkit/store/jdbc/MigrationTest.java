package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SessionRecord;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

import javax.sql.DataSource;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Schema creation and migration on each real database: fresh, re-run, concurrent, and checked-only. */
@Tag("postgres")
@DisplayName("Schema migration")
class MigrationTest {
    private static final Instant T0 = Instant.parse("2026-03-01T12:00:00Z");

    static SessionRecord record(String id) {
        return SessionRecord.builder().sessionId(id).driver("docker").state(SessionState.ACTIVE).sandboxId("sbx")
                .workspace("ws").spec("spec").specFingerprint("fp").ephemeral(false).createdAt(T0)
                .lastActivity(T0).sandboxStartedAt(T0).owner("mgr").leaseExpiry(T0.plusSeconds(30)).version(1)
                .attributes(Map.of("k", "v")).build();
    }

    /** The same checks on every database; subclasses say how to get an empty one. */
    abstract class Checks {
        /** A DataSource on a new, empty database (or schema). */
        abstract DataSource emptyDatabase();

        abstract JdbcDialect dialect();

        /** Another DataSource on the same database, for a concurrent initialiser. */
        abstract Supplier<DataSource> sameDatabase();

        @Test
        @DisplayName("an empty database gets both tables, both indexes and versions 1 and 2")
        void freshDatabase() throws Exception {
            DataSource ds = emptyDatabase();
            try (JdbcSessionStore store = JdbcSessionStore.create(ds)) {
                assertThat(store.dialect()).isEqualTo(dialect());
                assertThat(store.insert(record("a"))).isTrue();
                assertThat(store.find("a")).contains(record("a"));
            }
            assertThat(versionRows(ds)).containsExactly(1, 2);
            assertThat(indexNames(ds)).contains("sandboxkit_sessions_owner", "sandboxkit_sessions_state_id")
                    .doesNotContain("sandboxkit_sessions_state_activity");
        }

        @Test
        @DisplayName("running it again changes nothing and keeps the data")
        void idempotent() throws Exception {
            DataSource ds = emptyDatabase();
            try (JdbcSessionStore store = JdbcSessionStore.create(ds)) {
                store.insert(record("a"));
            }
            for (int i = 0; i < 3; i++) {
                try (JdbcSessionStore store = JdbcSessionStore.create(ds)) {
                    assertThat(store.find("a")).contains(record("a"));
                }
            }
            assertThat(versionRows(ds)).containsExactly(1, 2);
        }

        @Test
        @DisplayName("stores initialising one empty database at the same time all succeed, and migrate once")
        void concurrentInitialisation() throws Exception {
            DataSource first = emptyDatabase();
            int threads = 4;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            CyclicBarrier start = new CyclicBarrier(threads);
            try {
                List<Future<?>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int thread = t;
                    DataSource ds = t == 0 ? first : sameDatabase().get();
                    results.add(pool.submit(() -> {
                        start.await(10, TimeUnit.SECONDS);
                        try (JdbcSessionStore store = JdbcSessionStore.create(ds)) {
                            assertThat(store.insert(record("s-" + thread))).isTrue();
                        }
                        return null;
                    }));
                }
                for (Future<?> f : results) {
                    f.get(60, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(versionRows(first)).containsExactly(1, 2);
            try (JdbcSessionStore store = JdbcSessionStore.create(first)) {
                for (int t = 0; t < threads; t++) {
                    assertThat(store.find("s-" + t)).isPresent();
                }
            }
        }

        @Test
        @DisplayName("with auto-migration off, an empty database fails with a clear message and stays empty")
        void disabledOnEmpty() throws Exception {
            DataSource ds = emptyDatabase();
            assertThatThrownBy(() -> JdbcSessionStore.builder(ds).autoMigrate(false).build())
                    .isInstanceOf(SandboxConfigurationException.class)
                    .hasMessageContaining("no sandboxkit schema")
                    .hasMessageContaining("automatic migration is disabled")
                    .hasMessageContaining(dialect().migrationResource(1))
                    .hasMessageContaining("autoMigrate(true)");
            try (Connection c = ds.getConnection()) {
                assertThat(Migrations.currentVersion(c, dialect())).isZero();
            }
        }

        @Test
        @DisplayName("with auto-migration off, a schema created by running the shipped script by hand is accepted")
        void disabledWithManualSchema() throws Exception {
            DataSource ds = emptyDatabase();
            for (int version = 1; version <= JdbcSessionStore.SCHEMA_VERSION; version++) {
                String resource = dialect().migrationResource(version);
                String script;
                try (InputStream in = getClass().getClassLoader().getResourceAsStream(resource)) {
                    assertThat(in).as(resource + " in the jar").isNotNull();
                    script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
                try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                    // What a team would do with psql/sqlite3/RunScript: run the statements in order.
                    for (String sql : script.replaceAll("(?m)^\\s*--.*$", "").split(";\\s*\\n")) {
                        if (!sql.isBlank()) {
                            s.execute(sql);
                        }
                    }
                }
            }
            try (JdbcSessionStore store = JdbcSessionStore.builder(ds).autoMigrate(false).build()) {
                assertThat(store.insert(record("a"))).isTrue();
                assertThat(store.find("a")).contains(record("a"));
            }
            assertThat(versionRows(ds)).containsExactly(1, 2);
        }

        @Test
        @DisplayName("a schema newer than this library is refused, with or without auto-migration")
        void newerSchema() throws Exception {
            DataSource ds = emptyDatabase();
            JdbcSessionStore.create(ds).close();
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute("INSERT INTO sandboxkit_schema_version (version, description) VALUES (99, 'future')");
            }
            assertThatThrownBy(() -> JdbcSessionStore.create(ds)).isInstanceOf(SandboxConfigurationException.class)
                    .hasMessageContaining("version 99").hasMessageContaining("upgrade sandboxkit");
            assertThatThrownBy(() -> JdbcSessionStore.builder(ds).autoMigrate(false).build())
                    .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("version 99");
        }

        @Test
        @DisplayName("a database at version 1 (an earlier release) is migrated to version 2, its sessions kept and paged")
        void upgradeFromVersionOne() throws Exception {
            DataSource ds = emptyDatabase();
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                for (String sql : Migrations.statements(dialect(), 1)) {
                    s.execute(sql);
                }
            }
            assertThat(versionRows(ds)).containsExactly(1);
            assertThat(indexNames(ds)).contains("sandboxkit_sessions_state_activity");
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute("INSERT INTO sandboxkit_sessions (session_id, driver, state, workspace, spec, spec_fingerprint,"
                        + " ephemeral, created_at, last_activity, version, attributes) VALUES ('old', 'fake', 'ACTIVE',"
                        + " 'w', 's', 'f', " + (dialect() == JdbcDialect.SQLITE ? "0" : "FALSE") + ", 1, 2, 1, '')");
            }
            try (JdbcSessionStore store = JdbcSessionStore.create(ds)) {
                assertThat(store.findByState(dev.sandboxkit.SessionState.ACTIVE, null, 10))
                        .extracting(dev.sandboxkit.spi.SessionRecord::sessionId).containsExactly("old");
            }
            assertThat(versionRows(ds)).containsExactly(1, 2);
            assertThat(indexNames(ds)).contains("sandboxkit_sessions_state_id").doesNotContain("sandboxkit_sessions_state_activity");
        }

        @Test
        @DisplayName("an explicitly chosen dialect is used")
        void explicitDialect() {
            try (JdbcSessionStore store = JdbcSessionStore.builder(emptyDatabase()).dialect(dialect()).build()) {
                assertThat(store.dialect()).isEqualTo(dialect());
                assertThat(store.toString()).contains("JdbcSessionStore[");
            }
        }
    }

    @Nested
    @DisplayName("on PostgreSQL")
    class OnPostgres extends Checks {
        private final List<String> schemas = new ArrayList<>();
        private String schema;

        @BeforeEach
        void require() {
            Postgres.require();
        }

        @AfterEach
        void drop() {
            schemas.forEach(Postgres::dropSchema);
        }

        @Override
        DataSource emptyDatabase() {
            schema = Postgres.createSchema("mig");
            schemas.add(schema);
            return Postgres.dataSource(schema);
        }

        @Override
        Supplier<DataSource> sameDatabase() {
            String s = schema;
            return () -> Postgres.dataSource(s);
        }

        @Override
        JdbcDialect dialect() {
            return JdbcDialect.POSTGRESQL;
        }

        @Test
        @DisplayName("the schema is created inside the connection's schema (search_path), not in public")
        void staysInItsSchema() throws Exception {
            DataSource ds = emptyDatabase();
            JdbcSessionStore.create(ds).close();
            try (Connection c = Postgres.dataSource(null).getConnection(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT table_schema FROM information_schema.tables"
                         + " WHERE table_name = 'sandboxkit_sessions' AND table_schema = '" + schema + "'")) {
                assertThat(rs.next()).isTrue();
            }
        }
    }

    @Nested
    @DisplayName("on an H2 file")
    class OnH2 extends Checks {
        @TempDir
        Path dir;
        private String url;
        private int n;

        @Override
        DataSource emptyDatabase() {
            // DB_CLOSE_DELAY=-1: these plain data sources open a connection per call, and in one JVM the stores share
            // one embedded database, which H2 closes when its last connection closes; a connection opened at that
            // moment finds it closed (seen in concurrentInitialisation). A pool, or the h2() factory's stores, keep a
            // connection, as applications do.
            url = "jdbc:h2:file:" + dir.resolve("db-" + (++n))
                    + ";AUTO_SERVER=TRUE;LOCK_TIMEOUT=10000;DB_CLOSE_DELAY=-1";
            return sameDatabase().get();
        }

        @Override
        Supplier<DataSource> sameDatabase() {
            String u = url;
            return () -> {
                JdbcDataSource ds = new JdbcDataSource();
                ds.setURL(u);
                ds.setUser("sa");
                ds.setPassword("");
                // Pooled, so that the database is not reopened for every connection (that costs ~0.1 s).
                TestPool pool = new TestPool(ds, 4);
                pools.add(pool);
                return pool;
            };
        }

        private final List<TestPool> pools = new java.util.concurrent.CopyOnWriteArrayList<>();

        @AfterEach
        void closePools() {
            pools.forEach(TestPool::close);
        }

        @Override
        JdbcDialect dialect() {
            return JdbcDialect.H2;
        }

        @Test
        @DisplayName("JdbcSessionStore.h2 creates missing directories readable by the owner only")
        void privateDirectories() throws Exception {
            Path file = dir.resolve("new/deeper/sessions");
            JdbcSessionStore.h2(file).close();
            for (Path created : List.of(dir.resolve("new"), dir.resolve("new/deeper"))) {
                assertThat(java.nio.file.Files.getPosixFilePermissions(created))
                        .isEqualTo(java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
            }
            assertThat(dir.resolve("new/deeper/sessions.mv.db")).exists();
        }

        @Test
        @DisplayName("JdbcSessionStore.h2 opens the same schema (one version row, data visible)")
        void factoryMatches() throws Exception {
            Path file = dir.resolve("factory");
            try (JdbcSessionStore store = JdbcSessionStore.h2(file)) {
                store.insert(record("a"));
            }
            try (JdbcSessionStore store = JdbcSessionStore.h2(dir.resolve("factory.mv.db"))) {
                assertThat(store.find("a")).contains(record("a"));
            }
            url = "jdbc:h2:file:" + file + ";AUTO_SERVER=TRUE";
            assertThat(versionRows(sameDatabase().get())).containsExactly(1, 2);
        }
    }

    @Nested
    @DisplayName("on a SQLite file")
    class OnSqlite extends Checks {
        @TempDir
        Path dir;
        private Path file;
        private int n;

        @Override
        DataSource emptyDatabase() {
            file = dir.resolve("db-" + (++n) + ".sqlite");
            return sameDatabase().get();
        }

        @Override
        Supplier<DataSource> sameDatabase() {
            Path f = file;
            return () -> {
                SQLiteDataSource ds = FailureTest.walDataSource(f);
                ds.setTransactionMode(transactionMode());
                return ds;
            };
        }

        String transactionMode() {
            return "IMMEDIATE";
        }

        @Override
        JdbcDialect dialect() {
            return JdbcDialect.SQLITE;
        }

        @Test
        @DisplayName("JdbcSessionStore.sqlite uses WAL and the same schema")
        void factoryMatches() throws Exception {
            file = dir.resolve("factory.sqlite");
            try (JdbcSessionStore store = JdbcSessionStore.sqlite(file)) {
                store.insert(record("a"));
            }
            DataSource ds = sameDatabase().get();
            try (Connection c = ds.getConnection(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("PRAGMA journal_mode")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualToIgnoringCase("wal");
            }
            assertThat(versionRows(ds)).containsExactly(1, 2);
        }
    }

    @Nested
    @DisplayName("on a SQLite file through a DataSource in the default (DEFERRED) transaction mode")
    class OnSqliteDeferred extends OnSqlite {
        @Override
        String transactionMode() {
            return "DEFERRED";
        }
    }

    // -------------------------------------------------------------------------------------------- helpers

    static List<Integer> versionRows(DataSource ds) throws SQLException {
        List<Integer> out = new ArrayList<>();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT version FROM sandboxkit_schema_version ORDER BY version")) {
            while (rs.next()) {
                out.add(rs.getInt(1));
            }
        }
        return out;
    }

    static Set<String> indexNames(DataSource ds) throws SQLException {
        Set<String> out = new HashSet<>();
        try (Connection c = ds.getConnection()) {
            for (String table : List.of("sandboxkit_sessions", "SANDBOXKIT_SESSIONS")) {
                try (ResultSet rs = c.getMetaData().getIndexInfo(null, null, table, false, false)) {
                    while (rs.next()) {
                        String name = rs.getString("INDEX_NAME");
                        if (name != null) {
                            out.add(name.toLowerCase(Locale.ROOT));
                        }
                    }
                }
            }
        }
        return out;
    }
}
