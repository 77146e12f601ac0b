package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SessionRecord;

import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Main class of a forked JVM that uses a store: {@code <h2|sqlite|pg> <file|schema> <command> [args]}.
 * Commands: {@code insert <id>}, {@code increment <id> <n>}, {@code hold <id>} (insert, increment once,
 * print READY, then wait to be killed). Prints {@code DONE} when finished.
 */
public final class StoreWorker {
    private StoreWorker() {
    }

    static JdbcSessionStore open(String kind, String location) {
        return switch (kind) {
            case "h2" -> JdbcSessionStore.h2(Path.of(location));
            case "sqlite" -> JdbcSessionStore.sqlite(Path.of(location));
            case "pg" -> JdbcSessionStore.create(new TestPool(Postgres.dataSource(location), 4));
            default -> throw new IllegalArgumentException(kind);
        };
    }

    static SessionRecord record(String id) {
        Instant t0 = Instant.parse("2026-03-01T12:00:00Z");
        return SessionRecord.builder().sessionId(id).driver("docker").state(SessionState.ACTIVE).sandboxId("sbx")
                .workspace("ws").spec("spec").specFingerprint("fp").ephemeral(false).createdAt(t0)
                .lastActivity(t0).sandboxStartedAt(t0).owner("mgr").leaseExpiry(t0.plusSeconds(30)).version(1)
                .attributes(Map.of("counter", "0")).build();
    }

    /** One read-modify-compare-and-set increment, retried until it wins; returns the conflicts seen. */
    static int increment(JdbcSessionStore store, String id) {
        for (int conflicts = 0; ; conflicts++) {
            SessionRecord r = store.find(id).orElseThrow();
            Map<String, String> attrs = new HashMap<>(r.attributes());
            attrs.put("counter", Integer.toString(Integer.parseInt(attrs.get("counter")) + 1));
            Optional<SessionRecord> written = store.update(r.withAttributes(attrs));
            if (written.isPresent()) {
                return conflicts;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        String kind = args[0];
        String location = args[1];
        String command = args[2];
        try (JdbcSessionStore store = open(kind, location)) {
            switch (command) {
                case "insert" -> System.out.println("INSERTED " + store.insert(record(args[3])));
                case "increment" -> {
                    System.out.println("STARTED");
                    int conflicts = 0;
                    for (int i = 0; i < Integer.parseInt(args[4]); i++) {
                        conflicts += increment(store, args[3]);
                    }
                    System.out.println("CONFLICTS " + conflicts);
                }
                case "hold" -> {
                    store.insert(record(args[3]));
                    increment(store, args[3]);
                    System.out.println("READY");
                    System.out.flush();
                    Thread.sleep(Long.MAX_VALUE);
                }
                default -> throw new IllegalArgumentException(command);
            }
        }
        System.out.println("DONE");
        System.out.flush();
        System.exit(0);
    }
}
