package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.Sandbox;
import dev.sandboxkit.spi.SandboxLabels;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link ComputeDriverTck}'s labels and ownership group. */
abstract class LabelConformance extends KitSupport {
    LabelConformance(DriverKit kit) {
        super(kit);
    }

    @Test
    @DisplayName("the sandbox carries the managed, session and owner labels with the manager's instance id")
    void managedSessionOwner() {
        Sandbox sandbox = acquire();

        assertThat(driver.list(Map.of(SandboxLabels.SESSION, sandbox.sessionId()))).singleElement()
                .satisfies(d -> {
                    assertThat(d.id()).isEqualTo(sandbox.info().sandboxId());
                    assertThat(d.labels()).containsEntry(SandboxLabels.MANAGED, "true")
                            .containsEntry(SandboxLabels.SESSION, sandbox.sessionId())
                            .containsEntry(SandboxLabels.OWNER, manager.instanceId());
                    assertThat(d.sessionId()).isEqualTo(sandbox.sessionId());
                    assertThat(d.owner()).isEqualTo(manager.instanceId());
                });
        assertThat(sandbox.info().owner()).isEqualTo(manager.instanceId());
    }

    @Test
    @DisplayName("a session id with every allowed punctuation character works and is the exact session label")
    void punctuationInSessionId() {
        assertExactSessionLabel(newSessionId("Tck:user@example.com+a=b_c.d"));
    }

    @Test
    @DisplayName("a 128-character session id works and is the exact session label")
    void longestSessionId() {
        String longest = "L" + "x".repeat(119) + UUID.randomUUID().toString().substring(0, 8);
        sessions.add(longest);
        assertExactSessionLabel(longest);
    }

    private void assertExactSessionLabel(String id) {
        String sandboxId = manager.acquire(id, spec()).info().sandboxId();
        assertThat(driver.list(Map.of(SandboxLabels.SESSION, id))).as("listed by session %s", id)
                .singleElement().satisfies(d -> {
                    assertThat(d.id()).isEqualTo(sandboxId);
                    assertThat(d.sessionId()).isEqualTo(id);
                });
    }

    @Test
    @DisplayName("the spec's extra labels are on the sandbox too")
    void specLabels() {
        String session = newSessionId("tck-speclabels");
        manager.acquire(session, spec().toBuilder().label("tck.purpose", "conformance").build());

        assertThat(driver.list(Map.of(SandboxLabels.SESSION, session))).singleElement()
                .satisfies(d -> assertThat(d.labels()).containsEntry("tck.purpose", "conformance"));
        assertThat(ids(Map.of("tck.purpose", "conformance", SandboxLabels.OWNER, context.instanceId())))
                .hasSize(1);
    }
}
