package dev.sandboxkit.tools;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SessionResolverTest {
    /** The manager's session-id rule (SessionIds), restated: what every resolved id must satisfy. */
    private static final String SESSION_ID = "[A-Za-z0-9][A-Za-z0-9._:@+=-]{0,127}";
    private final SessionResolver resolver = SessionResolver.prefixed("conv-");

    @Test
    void readableIdsStayReadable() {
        assertThat(resolver.sessionId("chat-42")).isEqualTo("conv-chat-42");
        assertThat(resolver.sessionId(7)).isEqualTo("conv-7");
        UUID u = UUID.fromString("3f2c8d9e-0000-4000-8000-000000000001");
        assertThat(resolver.sessionId(u)).isEqualTo("conv-" + u);
        assertThat(resolver.sessionId("user@example.com:thread+1")).isEqualTo("conv-user@example.com:thread+1");
    }

    @Test
    void idsThatAreNotValidSessionIdsAreHashed() {
        for (String id : new String[] {"a/b", "../../etc", "", " ", "with space", "naïve", "a\0b", "x".repeat(65),
                "-leading", ".hidden", "a=b", "=", "line\nbreak"}) {
            String s = resolver.sessionId(id);
            assertThat(s).as(id).matches(SESSION_ID).startsWith("conv-=").hasSize(5 + 1 + 52);
            assertThat(resolver.sessionId(id)).as("stable").isEqualTo(s);
        }
    }

    @Test
    void hashedAndPlainIdsNeverMeet() {
        // A plain id never holds '=', a hashed one always does right after the prefix: an id crafted to look like
        // another's hash is itself hashed.
        String hashed = resolver.sessionId("a/b");
        String crafted = hashed.substring("conv-".length());
        assertThat(resolver.sessionId(crafted)).isNotEqualTo(hashed).startsWith("conv-=");
        assertThat(resolver.sessionId("x".repeat(64))).isEqualTo("conv-" + "x".repeat(64));
        assertThat(resolver.sessionId("x".repeat(65))).startsWith("conv-=");
    }

    @Test
    void manyConversationsNeverCollide() {
        Random random = new Random(14);
        Map<String, String> seen = new HashMap<>();
        for (int i = 0; i < 100_000; i++) {
            String id = switch (i % 4) {
                case 0 -> "chat-" + i;
                case 1 -> "thread/" + i;
                case 2 -> UUID.randomUUID().toString();
                default -> Long.toString(random.nextLong(), 36) + " " + i;
            };
            String s = resolver.sessionId(id);
            assertThat(s).matches(SESSION_ID);
            String before = seen.put(s, id);
            assertThat(before).as("%s and %s share %s", before, id, s).isNull();
        }
    }

    @Test
    void prefixesAreChecked() {
        assertThat(SessionResolver.prefixed("lc4j.").sessionId("m")).isEqualTo("lc4j.m");
        for (String bad : new String[] {"", "-x", "a/b", "a=b", "x".repeat(33)}) {
            assertThatThrownBy(() -> SessionResolver.prefixed(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> resolver.sessionId(null)).isInstanceOf(NullPointerException.class);
    }
}
