package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static dev.sandboxkit.testkit.tck.SessionStoreTck.T0;
import static dev.sandboxkit.testkit.tck.SessionStoreTck.record;

/** {@link SessionStoreTck}'s heartbeat group: an owner's leases renewed and its sessions' activity recorded in one call. */
abstract class StoreHeartbeatConformance {
    private final SessionStoreTck kit;

    StoreHeartbeatConformance(SessionStoreTck kit) {
        this.kit = kit;
    }

    private SessionStore store() {
        return kit.store();
    }

    @Test
    @DisplayName("renew the lease of every session the owner owns and return exactly their ids")
    void renewsEveryLease() {
        store().insert(record("a").withOwner("mgr-1", T0));
        store().insert(record("b").withOwner("mgr-1", T0.plusSeconds(5)).withSandbox(SessionState.SUSPENDED, null, null));
        store().insert(record("c").withOwner("mgr-2", T0));
        Instant lease = T0.plusSeconds(300);

        List<String> owned = store().heartbeat("mgr-1", Map.of(), lease);

        assertEquals(Set.of("a", "b"), new HashSet<>(owned));
        assertEquals(2, owned.size(), "each owned id once");
        assertEquals(lease, store().find("a").orElseThrow().leaseExpiry());
        assertEquals(lease, store().find("b").orElseThrow().leaseExpiry());
        assertEquals(T0, store().find("c").orElseThrow().leaseExpiry());
    }

    @Test
    @DisplayName("move last activity forward only, and only for the sessions named")
    void activityForwardOnly() {
        store().insert(record("fwd").withOwner("mgr-1", T0).withLastActivity(T0.plusSeconds(10)));
        store().insert(record("back").withOwner("mgr-1", T0).withLastActivity(T0.plusSeconds(10)));
        store().insert(record("unnamed").withOwner("mgr-1", T0).withLastActivity(T0.plusSeconds(10)));

        store().heartbeat("mgr-1", Map.of("fwd", T0.plusSeconds(20), "back", T0.plusSeconds(5)),
                T0.plusSeconds(60));

        assertEquals(T0.plusSeconds(20), store().find("fwd").orElseThrow().lastActivity());
        assertEquals(T0.plusSeconds(10), store().find("back").orElseThrow().lastActivity());
        assertEquals(T0.plusSeconds(10), store().find("unnamed").orElseThrow().lastActivity());
    }

    @Test
    @DisplayName("do not change versions, so a writer's compare-and-set still succeeds afterwards")
    void keepVersions() {
        SessionRecord v1 = record("a").withOwner("mgr-1", T0);
        store().insert(v1);
        SessionRecord v2 = store().update(v1.withAttributes(Map.of("k", "v"))).orElseThrow();

        store().heartbeat("mgr-1", Map.of("a", T0.plusSeconds(20)), T0.plusSeconds(60));

        SessionRecord after = store().find("a").orElseThrow();
        assertEquals(2, after.version());
        assertEquals(v2.withOwner("mgr-1", T0.plusSeconds(60)).withLastActivity(T0.plusSeconds(20)), after);
        SessionRecord v3 = store().update(v2.withAttributes(Map.of("k", "w"))).orElseThrow();
        assertEquals(3, v3.version());
        assertEquals(T0.plusSeconds(20), v3.lastActivity(), "the heartbeat's activity is kept by the update");
    }

    @Test
    @DisplayName("do not touch other owners' sessions, even when they are named")
    void otherOwnersUntouched() {
        SessionRecord theirs = record("theirs").withOwner("mgr-2", T0);
        SessionRecord nobodys = record("nobodys").withOwner(null, null);
        SessionRecord mine = record("mine").withOwner("mgr-1", T0);
        store().insert(theirs);
        store().insert(nobodys);
        store().insert(mine);

        List<String> owned = store().heartbeat("mgr-1", Map.of("theirs", T0.plusSeconds(99),
                "nobodys", T0.plusSeconds(99), "mine", T0.plusSeconds(99), "ghost", T0.plusSeconds(99)),
                T0.plusSeconds(120));

        assertEquals(List.of("mine"), owned);
        assertEquals(Optional.of(theirs), store().find("theirs"));
        assertEquals(Optional.of(nobodys), store().find("nobodys"));
        assertEquals(Optional.empty(), store().find("ghost"), "a heartbeat never creates sessions");
    }

    @Test
    @DisplayName("for an owner without sessions return an empty list and change nothing")
    void ownerWithoutSessions() {
        SessionRecord r = record("a").withOwner("mgr-1", T0);
        store().insert(r);
        assertEquals(List.of(), store().heartbeat("mgr-9", Map.of("a", T0.plusSeconds(9)), T0.plusSeconds(9)));
        assertEquals(Optional.of(r), store().find("a"));
    }

    @Test
    @DisplayName("stop returning a session once another owner has taken it over")
    void afterTakeover() {
        SessionRecord r = record("a").withOwner("mgr-1", T0);
        store().insert(r);
        assertEquals(List.of("a"), store().heartbeat("mgr-1", Map.of(), T0.plusSeconds(30)));
        SessionRecord current = store().find("a").orElseThrow();
        store().update(current.withOwner("mgr-2", T0.plusSeconds(60))).orElseThrow();
        assertEquals(List.of(), store().heartbeat("mgr-1", Map.of("a", T0.plusSeconds(40)), T0.plusSeconds(90)));
        SessionRecord after = store().find("a").orElseThrow();
        assertEquals("mgr-2", after.owner());
        assertEquals(T0.plusSeconds(60), after.leaseExpiry());
        assertEquals(T0, after.lastActivity());
    }

    @Test
    @DisplayName("handle many sessions in one call")
    void manySessions() {
        Map<String, Instant> activity = new HashMap<>();
        for (int i = 0; i < 200; i++) {
            store().insert(record("s-" + i).withOwner("mgr-1", T0));
            if (i % 2 == 0) {
                activity.put("s-" + i, T0.plusMillis(1000 + i));
            }
        }
        List<String> owned = store().heartbeat("mgr-1", activity, T0.plusSeconds(30));
        assertEquals(200, new HashSet<>(owned).size());
        for (int i = 0; i < 200; i++) {
            SessionRecord r = store().find("s-" + i).orElseThrow();
            assertEquals(i % 2 == 0 ? T0.plusMillis(1000 + i) : T0, r.lastActivity(), r.sessionId());
            assertEquals(T0.plusSeconds(30), r.leaseExpiry());
            assertEquals(1, r.version());
        }
    }
}
