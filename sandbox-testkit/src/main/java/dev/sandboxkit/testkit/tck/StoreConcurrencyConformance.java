package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import static dev.sandboxkit.testkit.tck.SessionStoreTck.T0;
import static dev.sandboxkit.testkit.tck.SessionStoreTck.record;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** {@link SessionStoreTck}'s concurrent-writers group: compare-and-set under contention, from many threads. */
abstract class StoreConcurrencyConformance {
    /** The attribute the concurrency tests count in. */
    private static final String COUNTER = "counter";
    private static final int THREADS = 8;

    private final SessionStoreTck kit;

    StoreConcurrencyConformance(SessionStoreTck kit) {
        this.kit = kit;
    }

    private SessionStore store() {
        return kit.store();
    }


    @Test
    @DisplayName("read-modify-write loops on one session from many threads lose no increment")
    void oneSessionManyThreads() throws Exception {
        int perThread = 25;
        store().insert(record("hot").withAttributes(Map.of(COUNTER, "0")));
        Set<Long> versionsWon = ConcurrentHashMap.newKeySet();
        AtomicInteger conflicts = new AtomicInteger();
        runConcurrently(THREADS, thread -> {
            for (int i = 0; i < perThread; i++) {
                versionsWon.add(increment("hot", T0.plusMillis(thread * 1000L + i), conflicts).version());
            }
            return null;
        });
        SessionRecord end = store().find("hot").orElseThrow();
        int total = THREADS * perThread;
        assertEquals(Integer.toString(total), end.attributes().get(COUNTER), "lost increments");
        assertEquals(1 + total, end.version());
        Set<Long> expected = new TreeSet<>();
        for (long v = 2; v <= total + 1; v++) {
            expected.add(v);
        }
        assertEquals(expected, new TreeSet<>(versionsWon), "every version must be won exactly once");
    }

    @Test
    @DisplayName("many threads on many sessions lose no update while heartbeats run, and activity only grows")
    void manySessionsWithHeartbeats() throws Exception {
        int sessions = 12;
        int perThread = 30;
        Map<String, AtomicInteger> won = new ConcurrentHashMap<>();
        Map<String, AtomicLong> maxActivity = new ConcurrentHashMap<>();
        for (int s = 0; s < sessions; s++) {
            String id = "s-" + s;
            store().insert(record(id).withOwner("mgr-1", T0).withAttributes(Map.of(COUNTER, "0")));
            won.put(id, new AtomicInteger());
            maxActivity.put(id, new AtomicLong(T0.toEpochMilli()));
        }
        AtomicBoolean writing = new AtomicBoolean(true);
        AtomicInteger heartbeats = new AtomicInteger();
        ExecutorService beat = Executors.newSingleThreadExecutor();
        Future<?> beats = beat.submit(() -> {
            Random random = new Random(42);
            while (writing.get()) {
                String id = "s-" + random.nextInt(sessions);
                long at = T0.toEpochMilli() + random.nextInt(100_000);
                List<String> owned = store().heartbeat("mgr-1", Map.of(id, Instant.ofEpochMilli(at)),
                        T0.plusSeconds(300));
                maxActivity.get(id).accumulateAndGet(at, Math::max);
                assertEquals(sessions, owned.size(), "a heartbeat must see every owned session");
                heartbeats.incrementAndGet();
            }
            return null;
        });
        AtomicInteger conflicts = new AtomicInteger();
        try {
            runConcurrently(THREADS, thread -> {
                Random random = new Random(thread);
                for (int i = 0; i < perThread; i++) {
                    String id = "s-" + random.nextInt(sessions);
                    long at = T0.toEpochMilli() + random.nextInt(100_000);
                    SessionRecord written = increment(id, Instant.ofEpochMilli(at), conflicts);
                    won.get(id).incrementAndGet();
                    maxActivity.get(id).accumulateAndGet(at, Math::max);
                    assertTrue(written.lastActivity().toEpochMilli() >= at, "returned activity went backwards");
                }
                return null;
            });
        } finally {
            writing.set(false);
            beats.get(60, TimeUnit.SECONDS);
            beat.shutdownNow();
        }
        int total = 0;
        for (int s = 0; s < sessions; s++) {
            String id = "s-" + s;
            SessionRecord end = store().find(id).orElseThrow();
            int expected = won.get(id).get();
            total += expected;
            assertEquals(Integer.toString(expected), end.attributes().get(COUNTER), id + ": lost increments");
            assertEquals(1 + expected, end.version(), id + ": heartbeats must not change versions");
            assertEquals(maxActivity.get(id).get(), end.lastActivity().toEpochMilli(),
                    id + ": last activity must be the latest ever written");
        }
        assertEquals(THREADS * perThread, total);
        assertTrue(heartbeats.get() > 0, "the heartbeat thread never ran");
    }

    @Test
    @DisplayName("of many concurrent inserts of one id exactly one wins")
    void concurrentInserts() throws Exception {
        for (int round = 0; round < 5; round++) {
            String id = "race-" + round;
            List<Boolean> results = runConcurrently(THREADS, thread ->
                    store().insert(record(id).withAttributes(Map.of("winner", Integer.toString(thread)))));
            assertEquals(1, results.stream().filter(b -> b).count(), "exactly one insert must win");
            int winner = results.indexOf(Boolean.TRUE);
            SessionRecord stored = store().find(id).orElseThrow();
            assertEquals(Integer.toString(winner), stored.attributes().get("winner"));
            assertEquals(1, stored.version());
        }
    }

    @Test
    @DisplayName("of concurrent updates at one version exactly one wins")
    void concurrentUpdatesSameVersion() throws Exception {
        for (int round = 0; round < 5; round++) {
            String id = "cas-" + round;
            SessionRecord v1 = record(id);
            store().insert(v1);
            List<Optional<SessionRecord>> results = runConcurrently(THREADS, thread ->
                    store().update(v1.withAttributes(Map.of("winner", Integer.toString(thread)))));
            List<SessionRecord> winners = results.stream().flatMap(Optional::stream).collect(Collectors.toList());
            assertEquals(1, winners.size(), "exactly one compare-and-set must win");
            assertEquals(Optional.of(winners.get(0)), store().find(id));
            assertEquals(2, winners.get(0).version());
        }
    }

    @Test
    @DisplayName("a delete racing an update at the same version: exactly one of them wins")
    void deleteRacingUpdate() throws Exception {
        for (int round = 0; round < 10; round++) {
            String id = "dr-" + round;
            SessionRecord v1 = record(id);
            store().insert(v1);
            List<Boolean> results = runConcurrently(2, thread -> thread == 0
                    ? store().delete(id, 1)
                    : store().update(v1.withAttributes(Map.of("k", "v"))).isPresent());
            boolean deleted = results.get(0);
            boolean updated = results.get(1);
            assertTrue(deleted ^ updated, "exactly one must win: deleted=" + deleted + ", updated=" + updated);
            Optional<SessionRecord> end = store().find(id);
            assertEquals(updated, end.isPresent());
            end.ifPresent(r -> assertEquals(2, r.version()));
        }
    }

    /** Read, add one to the counter, compare-and-set; retried until it wins. Returns what was written. */
    private SessionRecord increment(String id, Instant activity, AtomicInteger conflicts) {
        for (int attempt = 1; attempt <= 10_000; attempt++) {
            SessionRecord current = store().find(id).orElseThrow(() -> new AssertionError(id + " vanished"));
            Map<String, String> attrs = new LinkedHashMap<>(current.attributes());
            attrs.put(COUNTER, Integer.toString(Integer.parseInt(attrs.get(COUNTER)) + 1));
            Optional<SessionRecord> written = store().update(current.withAttributes(attrs).withLastActivity(activity));
            if (written.isPresent()) {
                assertEquals(current.version() + 1, written.get().version());
                return written.get();
            }
            conflicts.incrementAndGet();
            Thread.onSpinWait();
        }
        return fail(id + ": could not win a compare-and-set in 10000 attempts");
    }

    /** A task for one of several threads started together. */
    @FunctionalInterface
    private interface ThreadTask<T> {
        T run(int thread) throws Exception;
    }

    /** Runs the task on {@code threads} threads released together; returns the results in thread order. */
    private static <T> List<T> runConcurrently(int threads, ThreadTask<T> task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CyclicBarrier start = new CyclicBarrier(threads);
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                Callable<T> c = () -> {
                    start.await(30, TimeUnit.SECONDS);
                    return task.run(thread);
                };
                futures.add(pool.submit(c));
            }
            List<T> results = new ArrayList<>();
            for (Future<T> f : futures) {
                try {
                    results.add(f.get(110, TimeUnit.SECONDS));
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof Error err) {
                        throw err;
                    }
                    throw new AssertionError("a writer thread failed: " + cause, cause);
                }
            }
            return results;
        } finally {
            pool.shutdownNow();
            pool.awaitTermination(10, TimeUnit.SECONDS);
        }
    }
}
