package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SessionRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A caller whose thread is interrupted (an MCP session closing, an executor shutting down) must not break an
 * embedded store for everyone: NIO closes a file channel on interrupt, and H2 then closes the whole database.
 * CI saw it once: a destroy on an interrupted thread, then "The database has been closed" for every session.
 */
class InterruptedCallerTest {
    private JdbcSessionStore store;

    @AfterEach
    void close() {
        Thread.interrupted();
        if (store != null) {
            store.close();
        }
    }

    @Test
    @DisplayName("an H2 file store written from an interrupted thread keeps working, and the flag is kept")
    void interruptedWriterKeepsTheStore(@TempDir Path dir) {
        store = JdbcSessionStore.h2(dir.resolve("sessions"));
        Instant t0 = Instant.parse("2026-03-01T12:00:00Z");
        for (int i = 0; i < 20; i++) {
            SessionRecord r = SessionRecord.builder().sessionId("s-" + i).driver("docker")
                    .state(SessionState.ACTIVE).workspace("/w/" + i).spec("spec").specFingerprint("fp")
                    .createdAt(t0).lastActivity(t0).version(1).attributes(Map.of("k", "v".repeat(2000))).build();
            Thread.currentThread().interrupt();
            assertThat(store.insert(r)).isTrue();
            assertThat(Thread.interrupted()).as("the interrupt flag is kept").isTrue();
        }
        assertThat(store.find("s-0")).isPresent();
        assertThat(store.find("s-19")).isPresent();
    }
}
