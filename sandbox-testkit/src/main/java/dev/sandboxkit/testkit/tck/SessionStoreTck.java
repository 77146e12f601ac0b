package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Conformance kit for {@link SessionStore} implementations: extend it, implement {@link #createStore()},
 * and every behaviour the lifecycle engine relies on is checked against your store.
 *
 * <pre>{@code
 * class MyStoreTckTest extends SessionStoreTck {
 *     @Override
 *     protected SessionStore createStore() {
 *         return MyStore.connect(testDatabase()); // empty: no sessions
 *     }
 * }
 * }</pre>
 *
 * <p>What is checked, in {@link Nested} groups: insert and read; an insert of an existing id returns
 * {@code false} and writes nothing; compare-and-set updates (version + 1, stale versions write nothing,
 * missing records are not created); deletes by version; every {@link SessionRecord} field, {@code null}s
 * and attributes round-trip exactly; last activity never moves backwards (update and heartbeat);
 * {@link SessionStore#findByState} (every state, including DESTROYING, in session-id order, page by page with
 * an exclusive bound, every match exactly once); {@link SessionStore#heartbeat} (renews the owner's
 * leases, moves last activity forward only, keeps versions, returns exactly the owned ids, leaves other
 * owners alone); and writers on many threads that never lose an update.
 *
 * <p><b>Instant precision.</b> A store must keep instants to the millisecond at least; it may drop
 * (truncate, not round) anything finer. The kit compares instants exactly when it writes whole
 * milliseconds, and for finer input it requires only that the record an {@code update} returns is
 * exactly the record a later {@code find} returns: the engine compares instants it got back from the
 * store with instants it reads later.
 *
 * <p><b>Isolation.</b> {@link #createStore()} is called before every test and must return a store that
 * holds no sessions (for a database: a fresh schema, or the tables emptied). {@link #disposeStore} is
 * called after every test. Tests do not run in parallel with each other.
 */
public abstract class SessionStoreTck {
    /** A whole-millisecond base instant for the records the kit writes. */
    protected static final Instant T0 = Instant.parse("2026-03-01T12:00:00.123Z");

    private SessionStore store;

    /**
     * Creates the store under test. Called once before every test.
     *
     * @return an open store that holds no sessions
     */
    protected abstract SessionStore createStore();

    /**
     * Releases a store after a test (drop a schema, delete files). Default: {@link SessionStore#close()}.
     *
     * @param used the store {@link #createStore()} returned for the test
     */
    protected void disposeStore(SessionStore used) {
        used.close();
    }

    /**
     * The store of the running test.
     *
     * @return the store {@link #createStore()} returned for this test
     */
    protected final SessionStore store() {
        return store;
    }

    @BeforeEach
    final void openStore() {
        store = createStore();
        assertNotNull(store, "createStore() returned null");
    }

    @AfterEach
    final void closeStore() {
        if (store != null) {
            disposeStore(store);
        }
    }

    // ------------------------------------------------------------------------------------------ groups

    @Nested
    @DisplayName("Inserting and reading")
    class InsertAndFind {

        @Test
        @DisplayName("a new session reads back exactly as it was inserted")
        void insertThenFind() {
            SessionRecord r = record("s-1");
            assertTrue(store.insert(r), "insert of a new id must return true");
            assertEquals(Optional.of(r), store.find("s-1"));
        }

        @Test
        @DisplayName("an unknown session reads as empty")
        void findMissing() {
            assertEquals(Optional.empty(), store.find("nobody"));
        }

        @Test
        @DisplayName("inserting an id that exists returns false and changes nothing")
        void insertExisting() {
            SessionRecord first = record("s-1");
            assertTrue(store.insert(first));
            SessionRecord other = record("s-1").withSandbox(SessionState.SUSPENDED, null, null)
                    .withOwner("mgr-other", T0.plusSeconds(99)).withAttributes(Map.of("k", "v"));
            assertFalse(store.insert(other), "insert of an existing id must return false");
            assertEquals(Optional.of(first), store.find("s-1"));
        }

        @Test
        @DisplayName("inserting an id that exists at a later version returns false and keeps the version")
        void insertExistingAtLaterVersion() {
            SessionRecord first = record("s-1");
            store.insert(first);
            SessionRecord v2 = store.update(first.withAttributes(Map.of("k", "v"))).orElseThrow();
            assertFalse(store.insert(record("s-1")));
            assertEquals(Optional.of(v2), store.find("s-1"));
        }

        @Test
        @DisplayName("a record whose version is not 1 is rejected and not written")
        void insertRejectsVersion() {
            assertThrows(IllegalArgumentException.class, () -> store.insert(record("s-1").withVersion(2)));
            assertEquals(Optional.empty(), store.find("s-1"));
        }

        @Test
        @DisplayName("ids that differ only in case are different sessions")
        void caseSensitiveIds() {
            SessionRecord lower = record("chat-a");
            SessionRecord upper = record("CHAT-A").withAttributes(Map.of("who", "upper"));
            assertTrue(store.insert(lower));
            assertTrue(store.insert(upper), "ids are case-sensitive");
            assertEquals(Optional.of(lower), store.find("chat-a"));
            assertEquals(Optional.of(upper), store.find("CHAT-A"));
        }

        @Test
        @DisplayName("many sessions are kept apart")
        void manySessions() {
            List<SessionRecord> all = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                SessionRecord r = record("s-" + i).withAttributes(Map.of("i", Integer.toString(i)))
                        .withLastActivity(T0.plusMillis(i));
                all.add(r);
                assertTrue(store.insert(r));
            }
            for (SessionRecord r : all) {
                assertEquals(Optional.of(r), store.find(r.sessionId()));
            }
        }
    }

    @Nested
    @DisplayName("Every field round-trips exactly")
    class RoundTrip {

        @Test
        @DisplayName("a record with every field set reads back equal, field by field")
        void everyFieldSet() {
            SessionRecord r = SessionRecord.builder().sessionId("full").driver("docker")
                    .state(SessionState.ACTIVE).sandboxId("0123456789abcdef0123")
                    .workspace("/var/lib/sandboxkit/full").spec("sandboxkit-spec/1\nimage=img%3A1\n")
                    .specFingerprint("fp-0123456789").ephemeral(true).createdAt(T0).lastActivity(T0.plusMillis(1))
                    .sandboxStartedAt(T0.plusMillis(2)).owner("mgr-1").leaseExpiry(T0.plusMillis(30_003))
                    .version(1).attributes(Map.of("hook.output", "ok", "a", "b")).build();
            store.insert(r);
            SessionRecord read = store.find("full").orElseThrow();
            assertFieldsEqual(r, read);
        }

        @Test
        @DisplayName("nullable fields (sandbox id, started-at, owner, lease) read back as null")
        void nullsRoundTrip() {
            SessionRecord r = SessionRecord.builder().sessionId("nulls").driver("kubernetes")
                    .state(SessionState.SUSPENDED).sandboxId(null).workspace("ws").spec("spec")
                    .specFingerprint("fp").ephemeral(false).createdAt(T0).lastActivity(T0).sandboxStartedAt(null)
                    .owner(null).leaseExpiry(null).version(1).attributes(Map.of()).build();
            store.insert(r);
            SessionRecord read = store.find("nulls").orElseThrow();
            assertFieldsEqual(r, read);
            assertEquals(null, read.sandboxId());
            assertEquals(null, read.sandboxStartedAt());
            assertEquals(null, read.owner());
            assertEquals(null, read.leaseExpiry());
            assertEquals(Map.of(), read.attributes());
        }

        @Test
        @DisplayName("every lifecycle state reads back as written")
        void everyState() {
            for (SessionState state : SessionState.values()) {
                SessionRecord r = record("state-" + state).withSandbox(state, null, null);
                store.insert(r);
                assertEquals(state, store.find(r.sessionId()).orElseThrow().state());
            }
        }

        @Test
        @DisplayName("attributes with separators, escapes, blanks and non-ASCII text round-trip exactly")
        void awkwardAttributes() {
            Map<String, String> attrs = new HashMap<>();
            attrs.put("plain", "value");
            attrs.put("empty", "");
            attrs.put("k=v&x", "a=b&c=d");
            attrs.put("percent%25", "100% %41 +plus+ space here");
            attrs.put("lines", "one\ntwo\r\nthree\ttab");
            attrs.put("quotes", "'single' \"double\" `back` \\ backslash ; semicolon , comma");
            attrs.put("json", "{\"a\":[1,2,{\"b\":null}]}");
            attrs.put("unicode-\u00e9\u4e2d", "\u00fcml\u00e4ut \u6f22\u5b57 \uD83D\uDE80 nul\u0000byte");
            attrs.put(" leading and trailing ", "  ");
            for (int i = 0; i < 40; i++) {
                attrs.put("bulk." + i, "v" + i);
            }
            SessionRecord r = record("attrs").withAttributes(attrs);
            store.insert(r);
            assertEquals(attrs, store.find("attrs").orElseThrow().attributes());
            SessionRecord updated = store.update(store.find("attrs").orElseThrow()
                    .withAttributes(Map.of("=", "&", "&", "="))).orElseThrow();
            assertEquals(Map.of("=", "&", "&", "="), updated.attributes());
            assertEquals(Optional.of(updated), store.find("attrs"));
        }

        @Test
        @DisplayName("a large spec with non-ASCII text and odd workspace paths round-trip exactly")
        void largeSpec() {
            StringBuilder spec = new StringBuilder("sandboxkit-spec/1\n");
            while (spec.length() < 64 * 1024) {
                spec.append("env.K").append(spec.length()).append("=caf\u00e9%20\u4e2d\u6587 'x' \"y\"\n");
            }
            SessionRecord r = SessionRecord.builder().sessionId("big").driver("docker").state(SessionState.ACTIVE)
                    .sandboxId("c".repeat(64)).workspace("/srv/work spaces/\u00e9t\u00e9/big")
                    .spec(spec.toString()).specFingerprint("f".repeat(64)).ephemeral(false).createdAt(T0)
                    .lastActivity(T0).sandboxStartedAt(T0).owner("m".repeat(63)).leaseExpiry(T0).version(1)
                    .attributes(Map.of("hook.output", "x".repeat(4000))).build();
            store.insert(r);
            assertFieldsEqual(r, store.find("big").orElseThrow());
        }

        @Test
        @DisplayName("instants keep millisecond precision, from the epoch to far in the future")
        void instantsToTheMillisecond() {
            Instant[] instants = {Instant.EPOCH, Instant.ofEpochMilli(1), T0, T0.plusMillis(999),
                    Instant.parse("2099-12-31T23:59:59.999Z"), Instant.parse("2999-01-01T00:00:00.001Z")};
            for (int i = 0; i < instants.length; i++) {
                Instant t = instants[i];
                SessionRecord r = SessionRecord.builder().sessionId("t-" + i).driver("docker")
                        .state(SessionState.ACTIVE).sandboxId("sbx").workspace("ws").spec("spec")
                        .specFingerprint("fp").ephemeral(false).createdAt(t).lastActivity(t).sandboxStartedAt(t)
                        .owner("mgr").leaseExpiry(t).version(1).attributes(Map.of()).build();
                store.insert(r);
                assertFieldsEqual(r, store.find(r.sessionId()).orElseThrow());
            }
        }

        @Test
        @DisplayName("what a write returns is exactly what a later read returns, even for sub-millisecond input")
        void subMillisecondInput() {
            Instant fine = T0.plusNanos(456_789);
            SessionRecord r = SessionRecord.builder().sessionId("fine").driver("docker")
                    .state(SessionState.SUSPENDED).sandboxId(null).workspace("ws").spec("spec")
                    .specFingerprint("fp").ephemeral(false).createdAt(fine).lastActivity(fine)
                    .sandboxStartedAt(null).owner("mgr").leaseExpiry(fine.plusNanos(1)).version(1)
                    .attributes(Map.of()).build();
            store.insert(r);
            SessionRecord read = store.find("fine").orElseThrow();
            for (Instant stored : List.of(read.createdAt(), read.lastActivity(), read.leaseExpiry())) {
                assertEquals(T0.truncatedTo(ChronoUnit.MILLIS), stored.truncatedTo(ChronoUnit.MILLIS),
                        "at least millisecond precision");
                assertFalse(stored.isAfter(fine.plusNanos(1)), "sub-millisecond parts may be dropped, not rounded up");
            }
            Instant later = fine.plusNanos(1_234_567);
            SessionRecord written = store.update(read.withSandbox(SessionState.ACTIVE, "sbx", later)
                    .withLastActivity(later).withOwner("mgr", later)).orElseThrow();
            assertEquals(Optional.of(written), store.find("fine"),
                    "update must return the record as stored (the engine compares it with later reads)");
        }
    }

    @Nested
    @DisplayName("Compare-and-set updates")
    class Updates {

        @Test
        @DisplayName("each update increments the version by exactly one and returns what is stored")
        void versionsIncrementByOne() {
            SessionRecord r = record("s");
            store.insert(r);
            SessionRecord current = r;
            for (int expected = 2; expected <= 5; expected++) {
                SessionRecord next = current.withAttributes(Map.of("step", Integer.toString(expected)));
                SessionRecord written = store.update(next).orElseThrow(() -> new AssertionError("update failed"));
                assertEquals(expected, written.version());
                assertEquals(next.withVersion(expected), written);
                assertEquals(Optional.of(written), store.find("s"));
                current = written;
            }
        }

        @Test
        @DisplayName("an update with a stale version returns empty and writes nothing")
        void staleVersion() {
            SessionRecord v1 = record("s");
            store.insert(v1);
            SessionRecord v2 = store.update(v1.withAttributes(Map.of("writer", "first"))).orElseThrow();
            Optional<SessionRecord> lost = store.update(v1.withSandbox(SessionState.DESTROYED, null, null)
                    .withAttributes(Map.of("writer", "second")).withLastActivity(T0.plusSeconds(60)));
            assertEquals(Optional.empty(), lost, "a stale version must not win");
            assertEquals(Optional.of(v2), store.find("s"), "a lost compare-and-set must write nothing");
        }

        @Test
        @DisplayName("an update with a version from the future returns empty and writes nothing")
        void futureVersion() {
            SessionRecord v1 = record("s");
            store.insert(v1);
            assertEquals(Optional.empty(), store.update(v1.withVersion(7).withAttributes(Map.of("k", "v"))));
            assertEquals(Optional.of(v1), store.find("s"));
        }

        @Test
        @DisplayName("an update of a missing session returns empty and creates nothing")
        void missingRecord() {
            assertEquals(Optional.empty(), store.update(record("ghost")));
            assertEquals(Optional.empty(), store.find("ghost"));
        }

        @Test
        @DisplayName("an update can change every field and clear every nullable one")
        void changesEveryField() {
            SessionRecord v1 = SessionRecord.builder().sessionId("s").driver("docker").state(SessionState.ACTIVE)
                    .sandboxId("sbx-1").workspace("ws-1").spec("spec-1").specFingerprint("fp-1").ephemeral(false)
                    .createdAt(T0).lastActivity(T0).sandboxStartedAt(T0).owner("mgr-1")
                    .leaseExpiry(T0.plusSeconds(30)).version(1).attributes(Map.of("a", "1")).build();
            store.insert(v1);
            SessionRecord changed = SessionRecord.builder().sessionId("s").driver("kubernetes")
                    .state(SessionState.SUSPENDED).sandboxId("sbx-2").workspace("ws-2").spec("spec-2")
                    .specFingerprint("fp-2").ephemeral(true).createdAt(T0.plusSeconds(1))
                    .lastActivity(T0.plusSeconds(2)).sandboxStartedAt(T0.plusSeconds(3)).owner("mgr-2")
                    .leaseExpiry(T0.plusSeconds(4)).version(1).attributes(Map.of("b", "2")).build();
            SessionRecord v2 = store.update(changed).orElseThrow();
            assertFieldsEqual(changed.withVersion(2), v2);
            assertEquals(Optional.of(v2), store.find("s"));

            SessionRecord cleared = SessionRecord.builder().sessionId("s").driver("kubernetes")
                    .state(SessionState.DESTROYED).sandboxId(null).workspace("ws-2").spec("spec-2")
                    .specFingerprint("fp-2").ephemeral(true).createdAt(T0.plusSeconds(1))
                    .lastActivity(T0.plusSeconds(2)).sandboxStartedAt(null).owner(null).leaseExpiry(null)
                    .version(2).attributes(Map.of()).build();
            SessionRecord v3 = store.update(cleared).orElseThrow();
            assertFieldsEqual(cleared.withVersion(3), v3);
            assertEquals(Optional.of(v3), store.find("s"));
        }

        @Test
        @DisplayName("last activity moves forward on update")
        void lastActivityForward() {
            SessionRecord v1 = record("s");
            store.insert(v1);
            SessionRecord v2 = store.update(v1.withLastActivity(T0.plusSeconds(10))).orElseThrow();
            assertEquals(T0.plusSeconds(10), v2.lastActivity());
            assertEquals(T0.plusSeconds(10), store.find("s").orElseThrow().lastActivity());
        }

        @Test
        @DisplayName("last activity never moves backwards on update, but the rest of the update is written")
        void lastActivityNeverBackwards() {
            SessionRecord v1 = record("s").withLastActivity(T0.plusSeconds(10));
            store.insert(v1);
            SessionRecord older = v1.withLastActivity(T0).withSandbox(SessionState.SUSPENDED, null, null);
            SessionRecord v2 = store.update(older).orElseThrow();
            assertEquals(T0.plusSeconds(10), v2.lastActivity(), "the returned record keeps the newer activity");
            assertEquals(SessionState.SUSPENDED, v2.state());
            assertEquals(2, v2.version());
            assertEquals(Optional.of(v2), store.find("s"));
        }

        @Test
        @DisplayName("updating one session leaves the others untouched")
        void othersUntouched() {
            SessionRecord a = record("a");
            SessionRecord b = record("b");
            store.insert(a);
            store.insert(b);
            store.update(a.withSandbox(SessionState.SUSPENDED, null, null)).orElseThrow();
            assertEquals(Optional.of(b), store.find("b"));
        }
    }

    @Nested
    @DisplayName("Deleting")
    class Deletes {

        @Test
        @DisplayName("a delete at the current version removes the session")
        void deleteCurrent() {
            SessionRecord v1 = record("s");
            store.insert(v1);
            SessionRecord v2 = store.update(v1.withAttributes(Map.of("k", "v"))).orElseThrow();
            assertTrue(store.delete("s", v2.version()));
            assertEquals(Optional.empty(), store.find("s"));
            assertFalse(store.delete("s", v2.version()), "a second delete finds nothing");
        }

        @Test
        @DisplayName("a delete at a stale version returns false and keeps the session")
        void deleteStale() {
            SessionRecord v1 = record("s");
            store.insert(v1);
            SessionRecord v2 = store.update(v1.withAttributes(Map.of("k", "v"))).orElseThrow();
            assertFalse(store.delete("s", 1));
            assertFalse(store.delete("s", 3));
            assertEquals(Optional.of(v2), store.find("s"));
        }

        @Test
        @DisplayName("a delete of an unknown session returns false")
        void deleteMissing() {
            assertFalse(store.delete("ghost", 1));
        }

        @Test
        @DisplayName("a deleted id can be inserted again, starting at version 1")
        void reinsertAfterDelete() {
            SessionRecord v1 = record("s");
            store.insert(v1);
            assertTrue(store.delete("s", 1));
            SessionRecord again = record("s").withAttributes(Map.of("incarnation", "2"));
            assertTrue(store.insert(again));
            assertEquals(Optional.of(again), store.find("s"));
        }

        @Test
        @DisplayName("deleting one session leaves the others untouched")
        void othersUntouched() {
            store.insert(record("a"));
            SessionRecord b = record("b");
            store.insert(b);
            assertTrue(store.delete("a", 1));
            assertEquals(Optional.of(b), store.find("b"));
        }
    }

    /** Inserts a session in a state with the given last activity (ACTIVE ones get a sandbox). */
    private SessionRecord insertAt(String id, SessionState state, Instant lastActivity) {
        SessionRecord r = record(id).withSandbox(state, state == SessionState.ACTIVE ? "sbx-" + id : null,
                state == SessionState.ACTIVE ? T0 : null).withLastActivity(lastActivity);
        assertTrue(store.insert(r));
        return r;
    }

    @Nested
    @DisplayName("Finding sessions by state, page by page")
    class FindByState {

        @Test
        @DisplayName("returns exactly the sessions in that state, ordered by session id")
        void exactlyThatState() {
            SessionRecord c = insertAt("c", SessionState.DESTROYING, T0.plusSeconds(1));
            SessionRecord a = insertAt("a", SessionState.DESTROYING, T0.plusSeconds(2));
            SessionRecord b = insertAt("b", SessionState.DESTROYING, T0);
            insertAt("active", SessionState.ACTIVE, T0);
            insertAt("suspended", SessionState.SUSPENDED, T0);
            insertAt("destroyed", SessionState.DESTROYED, T0);

            assertEquals(List.of(a, b, c), store.findByState(SessionState.DESTROYING, null, 100));
            assertEquals(List.of("suspended"), idList(store.findByState(SessionState.SUSPENDED, null, 100)));
            assertEquals(List.of("active"), idList(store.findByState(SessionState.ACTIVE, null, 100)));
            assertEquals(List.of("destroyed"), idList(store.findByState(SessionState.DESTROYED, null, 100)));
            assertEquals(List.of(), store.findByState(SessionState.ACTIVE, "active", 100));
        }

        @Test
        @DisplayName("pages through every match exactly once, the last page shorter, whatever the other states")
        void pages() {
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 25; i++) {
                String id = String.format("s-%02d", i);
                insertAt(id, SessionState.ACTIVE, T0.plusSeconds(25 - i)); // activity order differs from id order
                expected.add(id);
                insertAt(id + "-x", i % 2 == 0 ? SessionState.SUSPENDED : SessionState.DESTROYED, T0);
            }
            List<String> seen = new ArrayList<>();
            List<Integer> sizes = new ArrayList<>();
            String after = null;
            while (true) {
                List<SessionRecord> page = store.findByState(SessionState.ACTIVE, after, 7);
                sizes.add(page.size());
                page.forEach(r -> seen.add(r.sessionId()));
                if (page.size() < 7) {
                    break;
                }
                after = page.get(page.size() - 1).sessionId();
            }
            assertEquals(expected, seen);
            assertEquals(List.of(7, 7, 7, 4), sizes);
            assertEquals(List.of("s-24"), idList(store.findByState(SessionState.ACTIVE, "s-23", 7)));
            assertEquals(List.of("s-00"), idList(store.findByState(SessionState.ACTIVE, "", 1)));
            assertEquals(List.of("s-10"), idList(store.findByState(SessionState.ACTIVE, "s-09-x", 1)),
                    "the bound need not be an id of that state, or exist");
        }

        @Test
        @DisplayName("follows state changes made by updates, and deletes")
        void followsUpdates() {
            SessionRecord old = insertAt("old", SessionState.SUSPENDED, T0);
            SessionRecord gone = insertAt("gone", SessionState.SUSPENDED, T0.plusSeconds(5));
            insertAt("new", SessionState.SUSPENDED, T0.plusSeconds(5));
            assertEquals(List.of(gone), store.findByState(SessionState.SUSPENDED, null, 1));

            SessionRecord destroying = store.update(old.withSandbox(SessionState.DESTROYING, null, null)).orElseThrow();
            assertTrue(store.delete("gone", gone.version()));
            assertEquals(List.of(destroying), store.findByState(SessionState.DESTROYING, null, 10));
            assertEquals(List.of("new"), idList(store.findByState(SessionState.SUSPENDED, null, 10)));
            store.insert(record("gone"));
            assertEquals(List.of("gone"), idList(store.findByState(SessionState.ACTIVE, null, 10)), "re-inserted");
        }

        @Test
        @DisplayName("refuses a page size below 1")
        void pageSize() {
            assertThrows(IllegalArgumentException.class, () -> store.findByState(SessionState.ACTIVE, null, 0));
        }
    }

    @Nested
    @DisplayName("Heartbeats")
    class Heartbeats extends StoreHeartbeatConformance {
        Heartbeats() {
            super(SessionStoreTck.this);
        }
    }

    @Nested
    @DisplayName("Concurrent writers")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    class Concurrency extends StoreConcurrencyConformance {
        Concurrency() {
            super(SessionStoreTck.this);
        }
    }

    // --------------------------------------------------------------------------------------- helpers

    /**
     * A complete, ACTIVE, version-1 record owned by {@code mgr-a}, with whole-millisecond instants.
     *
     * @param sessionId the id
     * @return the record
     */
    protected static SessionRecord record(String sessionId) {
        return SessionRecord.builder().sessionId(sessionId).driver("docker").state(SessionState.ACTIVE)
                .sandboxId("sbx-" + sessionId).workspace("/var/lib/sandboxkit/" + sessionId)
                .spec("sandboxkit-spec/1\nimage=img%3A1\n").specFingerprint("fp-" + sessionId.length())
                .ephemeral(false).createdAt(T0).lastActivity(T0).sandboxStartedAt(T0).owner("mgr-a")
                .leaseExpiry(T0.plusSeconds(30)).version(1).attributes(Map.of()).build();
    }

    private static List<String> idList(List<SessionRecord> records) {
        return records.stream().map(SessionRecord::sessionId).toList();
    }

    /** Field by field, so a failure names the field, then as a whole. */
    private static void assertFieldsEqual(SessionRecord expected, SessionRecord actual) {
        assertEquals(expected.sessionId(), actual.sessionId(), "sessionId");
        assertEquals(expected.driver(), actual.driver(), "driver");
        assertEquals(expected.state(), actual.state(), "state");
        assertEquals(expected.sandboxId(), actual.sandboxId(), "sandboxId");
        assertEquals(expected.workspace(), actual.workspace(), "workspace");
        assertEquals(expected.spec(), actual.spec(), "spec");
        assertEquals(expected.specFingerprint(), actual.specFingerprint(), "specFingerprint");
        assertEquals(expected.ephemeral(), actual.ephemeral(), "ephemeral");
        assertEquals(expected.createdAt(), actual.createdAt(), "createdAt");
        assertEquals(expected.lastActivity(), actual.lastActivity(), "lastActivity");
        assertEquals(expected.sandboxStartedAt(), actual.sandboxStartedAt(), "sandboxStartedAt");
        assertEquals(expected.owner(), actual.owner(), "owner");
        assertEquals(expected.leaseExpiry(), actual.leaseExpiry(), "leaseExpiry");
        assertEquals(expected.version(), actual.version(), "version");
        assertEquals(expected.attributes(), actual.attributes(), "attributes");
        assertEquals(expected, actual);
    }
}
