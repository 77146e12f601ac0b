package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.SessionState;
import dev.sandboxkit.SessionStoreException;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.testsupport.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;
import org.sqlite.SQLiteDataSource;

import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.ArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.Future;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** What callers see when the database fails, and that nothing is half-written afterwards. */
@Tag("postgres")
@DisplayName("Database failures")
class FailureTest {
    private static final Instant T0 = Instant.parse("2026-03-01T12:00:00Z");

    private static SessionRecord record(String id) {
        return SessionRecord.builder().sessionId(id).driver("docker").state(SessionState.ACTIVE).sandboxId("sbx")
                .workspace("ws").spec("spec").specFingerprint("fp").ephemeral(false).createdAt(T0)
                .lastActivity(T0).sandboxStartedAt(T0).owner("mgr-1").leaseExpiry(T0.plusSeconds(30)).version(1)
                .attributes(Map.of("counter", "0")).build();
    }

    private static SessionStoreException storeFailure(Executable call) {
        return catchThrowableOfType(SessionStoreException.class, () -> {
            try {
                call.execute();
            } catch (RuntimeException e) {
                throw e;
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
        });
    }

    @Nested
    @DisplayName("on PostgreSQL")
    class OnPostgres {
        private String schema;
        private TcpProxy proxy;
        private TestPool pool;

        @BeforeEach
        void setUp() throws Exception {
            schema = Postgres.createSchema("fail");
            proxy = new TcpProxy(URI.create(Postgres.URL.substring("jdbc:".length())).getPort()).start();
            PGSimpleDataSource ds = Postgres.dataSource(schema);
            ds.setPortNumbers(new int[]{proxy.port()});
            ds.setConnectTimeout(2);
            ds.setSocketTimeout(10);
            pool = new TestPool(ds, 4);
        }

        @AfterEach
        void tearDown() {
            proxy.close();
            pool.close();
            Postgres.dropSchema(schema);
        }

        @Test
        @DisplayName("a DataSource on a closed port: building the store fails, retryable, naming the database")
        void closedPort() throws Exception {
            int closed;
            try (ServerSocket s = new ServerSocket(0)) {
                closed = s.getLocalPort();
            }
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setURL("jdbc:postgresql://127.0.0.1:" + closed + "/sandboxkit_test");
            ds.setUser(Postgres.USER);
            ds.setPassword("secret-password-123");
            ds.setConnectTimeout(2);
            SessionStoreException e = storeFailure(() -> JdbcSessionStore.create(ds));
            assertThat(e).isNotNull();
            assertThat(e.isRetryable()).isTrue();
            assertThat(e.getMessage()).contains("initialisation").contains("PGSimpleDataSource")
                    .contains("08001").doesNotContain("secret-password-123");
        }

        @Test
        @DisplayName("PostgreSQL going away: every call fails retryable, nothing is written, and all works when it is back")
        void outageAndRecovery() throws Exception {
            JdbcSessionStore store = JdbcSessionStore.create(pool);
            SessionRecord v1 = record("s");
            assertThat(store.insert(v1)).isTrue();
            assertThat(store.toString()).contains("PostgreSQL").doesNotContainIgnoringCase("password");

            proxy.stop();
            Map<String, Executable> calls = new HashMap<>();
            calls.put("find", () -> store.find("s"));
            calls.put("insert", () -> store.insert(record("t")));
            calls.put("update", () -> store.update(v1.withSandbox(SessionState.SUSPENDED, null, null)));
            calls.put("delete", () -> store.delete("s", 1));
            calls.put("search for ACTIVE sessions", () -> store.findByState(SessionState.ACTIVE, null, 10));
            calls.put("heartbeat", () -> store.heartbeat("mgr-1", Map.of("s", T0.plusSeconds(5)), T0.plusSeconds(60)));
            for (Map.Entry<String, Executable> call : calls.entrySet()) {
                SessionStoreException e = storeFailure(call.getValue());
                assertThat(e).as(call.getKey()).isNotNull();
                assertThat(e.isRetryable()).as(call.getKey() + " retryable: " + e.getMessage()).isTrue();
                assertThat(e.getMessage()).contains(call.getKey()).contains("PostgreSQL");
            }

            proxy.start();
            assertThat(store.find("s")).as("nothing written while down").contains(v1);
            assertThat(store.find("t")).isEmpty();
            SessionRecord v2 = store.update(v1.withSandbox(SessionState.SUSPENDED, null, null)).orElseThrow();
            assertThat(v2.version()).isEqualTo(2);
            assertThat(store.heartbeat("mgr-1", Map.of("s", T0.plusSeconds(5)), T0.plusSeconds(60))).containsExactly("s");
            assertThat(store.find("s").orElseThrow().version()).isEqualTo(2);
            store.close();
        }

        @Test
        @DisplayName("connections cut mid-transaction never leave a heartbeat half-applied")
        void heartbeatsAreAtomic() throws Exception {
            JdbcSessionStore store = JdbcSessionStore.create(pool);
            int sessions = 40;
            for (int i = 0; i < sessions; i++) {
                store.insert(record("s-" + i));
            }
            AtomicBoolean running = new AtomicBoolean(true);
            Thread cutter = new Thread(() -> {
                Random random = new Random(7);
                while (running.get()) {
                    try {
                        Thread.sleep(random.nextInt(15));
                    } catch (InterruptedException e) {
                        return;
                    }
                    proxy.cutConnections();
                }
            });
            cutter.start();
            AtomicInteger failed = new AtomicInteger();
            int[] succeeded = {0};
            int[] round = {0};
            // 20 heartbeats, and on until some were cut and some got through: however slowly the machine runs them.
            try {
                Await.repeatUntil(Duration.ofSeconds(60), () -> round[0] >= 20 && failed.get() > 0 && succeeded[0] > 0,
                        () -> round[0] + " heartbeats: " + succeeded[0] + " got through, " + failed + " cut"
                                + " (wanted 20, some of each)", () -> {
                            round[0]++;
                            Map<String, Instant> activity = new HashMap<>();
                            for (int i = 0; i < sessions; i++) {
                                activity.put("s-" + i, T0.plusSeconds(round[0]));
                            }
                            try {
                                assertThat(store.heartbeat("mgr-1", activity, T0.plusSeconds(1000 + round[0])))
                                        .hasSize(sessions);
                                succeeded[0]++;
                            } catch (SessionStoreException e) {
                                assertThat(e.isRetryable()).as(e.getMessage()).isTrue();
                                failed.incrementAndGet();
                            }
                        });
            } finally {
                running.set(false);
                cutter.join();
            }

            Set<Instant> activities = new HashSet<>();
            Set<Instant> leases = new HashSet<>();
            List<SessionRecord> owned = new ArrayList<>();
            for (SessionState state : SessionState.values()) {
                store.findByState(state, null, 10_000).stream().filter(r -> "mgr-1".equals(r.owner())).forEach(owned::add);
            }
            assertThat(owned).isNotEmpty();
            for (SessionRecord r : owned) {
                activities.add(r.lastActivity());
                leases.add(r.leaseExpiry());
                assertThat(r.version()).isEqualTo(1);
            }
            assertThat(activities).as("one heartbeat wrote all rows or none").hasSize(1);
            assertThat(leases).hasSize(1);
            store.close();
        }

        @Test
        @DisplayName("a permanent failure is not retryable, and its message keeps row contents out")
        void permanentFailure() throws Exception {
            JdbcSessionStore store = JdbcSessionStore.create(pool);
            try (Connection c = Postgres.dataSource(schema).getConnection(); Statement s = c.createStatement()) {
                s.execute("ALTER TABLE sandboxkit_sessions ADD CONSTRAINT no_secrets CHECK (spec NOT LIKE '%TOKEN%')");
            }
            SessionRecord secret = SessionRecord.builder().sessionId("s").driver("docker")
                    .state(SessionState.ACTIVE).sandboxId(null).workspace("ws").spec("env.API_KEY=TOKEN-abc123")
                    .specFingerprint("fp").ephemeral(false).createdAt(T0).lastActivity(T0).sandboxStartedAt(null)
                    .owner(null).leaseExpiry(null).version(1).attributes(Map.of()).build();
            SessionStoreException e = storeFailure(() -> store.insert(secret));
            assertThat(e).isNotNull();
            assertThat(e.isRetryable()).isFalse();
            assertThat(e.getMessage()).contains("insert of session s").contains("23514").doesNotContain("TOKEN-abc123");

            Postgres.execute(Postgres.dataSource(schema), "DROP TABLE sandboxkit_sessions");
            SessionStoreException missing = storeFailure(() -> store.find("s"));
            assertThat(missing.isRetryable()).isFalse();
            assertThat(missing.getMessage()).contains("find of session s").contains("42P01");
            store.close();
        }
    }

    @Nested
    @DisplayName("on SQLite")
    class OnSqlite {
        @TempDir
        Path dir;

        @Test
        @DisplayName("a file locked by another writer beyond the busy timeout is retryable, and nothing is written")
        void busy() throws Exception {
            Path file = dir.resolve("busy.sqlite");
            JdbcSessionStore.sqlite(file).close();
            SQLiteDataSource ds = new SQLiteDataSource();
            ds.setUrl("jdbc:sqlite:" + file);
            ds.setBusyTimeout(200);
            try (JdbcSessionStore store = JdbcSessionStore.create(ds)) {
                store.insert(record("s"));
                try (Connection locker = ds.getConnection(); Statement s = locker.createStatement()) {
                    s.execute("BEGIN EXCLUSIVE");
                    SessionStoreException e = storeFailure(() -> store.update(record("s").withAttributes(Map.of())));
                    assertThat(e).isNotNull();
                    assertThat(e.isRetryable()).as(e.getMessage()).isTrue();
                    assertThat(e.getMessage()).contains("update of session s").contains("SQLite");
                    s.execute("ROLLBACK");
                }
                assertThat(store.find("s")).contains(record("s"));
                assertThat(store.update(record("s").withAttributes(Map.of()))).isPresent();
            }
        }

        @ParameterizedTest(name = "{0}")
        @ValueSource(strings = {"JdbcSessionStore.sqlite", "a WAL SQLiteDataSource"})
        @DisplayName("stores opened at once on a new file all come up (the switch to WAL can answer busy)")
        void concurrentOpens(String opener) throws Exception {
            boolean embedded = opener.equals("JdbcSessionStore.sqlite");
            int threads = 4;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                for (int round = 0; round < 25; round++) {
                    Path file = dir.resolve("race-" + round + ".sqlite");
                    CyclicBarrier start = new CyclicBarrier(threads);
                    List<Future<Boolean>> opened = new ArrayList<>();
                    for (int t = 0; t < threads; t++) {
                        String id = "s" + t;
                        opened.add(pool.submit(() -> {
                            start.await(10, TimeUnit.SECONDS);
                            try (JdbcSessionStore store = embedded ? JdbcSessionStore.sqlite(file)
                                    : JdbcSessionStore.create(walDataSource(file))) {
                                return store.insert(record(id));
                            }
                        }));
                    }
                    for (Future<Boolean> f : opened) {
                        assertThat(f.get(30, TimeUnit.SECONDS)).isTrue();
                    }
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    /** What a caller would pass for a shared SQLite file: WAL, a busy timeout, IMMEDIATE transactions. */
    static SQLiteDataSource walDataSource(Path file) {
        SQLiteDataSource ds = new SQLiteDataSource();
        ds.setUrl("jdbc:sqlite:" + file);
        ds.setJournalMode("WAL");
        ds.setBusyTimeout(10_000);
        ds.setTransactionMode("IMMEDIATE");
        return ds;
    }

    @Nested
    @DisplayName("on H2")
    class OnH2 {
        @TempDir
        Path dir;

        @Test
        @DisplayName("a closed store refuses calls instead of reopening the file")
        void closedStore() {
            JdbcSessionStore store = JdbcSessionStore.h2(dir.resolve("closed"));
            store.close();
            store.close();
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> store.find("s"))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        }
    }

    @Test
    @DisplayName("the retry classification follows SQLState, exception type and cause")
    void classification() {
        List<String> retryable = List.of("08001", "08006", "08S01", "57P01", "57P02", "57P03", "40001", "40P01", "53300",
                "HYT00", "90067");
        for (String state : retryable) {
            assertThat(Failures.isRetryable(new java.sql.SQLException("x", state))).as(state).isTrue();
        }
        for (String state : List.of("23505", "23514", "42P01", "42601", "22001", "XX000")) {
            assertThat(Failures.isRetryable(new java.sql.SQLException("x", state))).as(state).isFalse();
        }
        assertThat(Failures.isRetryable(new java.sql.SQLTransientConnectionException("x"))).isTrue();
        assertThat(Failures.isRetryable(new java.sql.SQLRecoverableException("x"))).isTrue();
        assertThat(Failures.isRetryable(new java.sql.SQLException("x", null,
                new java.net.ConnectException("Connection refused")))).isTrue();
        assertThat(Failures.firstLine("ERROR: boom\n  Detail: Failing row contains (secret)")).isEqualTo("ERROR: boom");
        assertThat(Failures.firstLine("Unique index violation; SQL statement:\nINSERT ...")).isEqualTo("Unique index violation");
        assertThat(JdbcSessionStore.safeUrl("jdbc:postgresql://u:pw@db:5432/app?password=pw&ssl=true"))
                .isEqualTo("jdbc:postgresql://db:5432/app");
        assertThat(JdbcSessionStore.safeUrl("jdbc:h2:file:/x/y;PASSWORD=pw;AUTO_SERVER=TRUE")).isEqualTo("jdbc:h2:file:/x/y");
    }

    @Test
    @DisplayName("attributes encode as sorted form-urlencoded text and decode back")
    void attributeCodec() {
        Map<String, String> attrs = Map.of("b", "x y", "a", "1=2&3", "c", "");
        assertThat(AttributeCodec.encode(attrs)).isEqualTo("a=1%3D2%263&b=x+y&c=");
        assertThat(AttributeCodec.decode(AttributeCodec.encode(attrs))).isEqualTo(attrs);
        assertThat(AttributeCodec.encode(Map.of())).isEmpty();
        assertThat(AttributeCodec.decode("")).isEmpty();
        assertThat(AttributeCodec.decode(AttributeCodec.encode(Map.of("", "")))).isEqualTo(Map.of("", ""));
    }
}
