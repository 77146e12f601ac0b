package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SandboxDescriptor;
import dev.sandboxkit.spi.SandboxLabels;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link ComputeDriverTck}'s lifecycle group: ping, create, list, remove, acquire, destroy and close. */
abstract class LifecycleConformance extends KitSupport {
    LifecycleConformance(DriverKit kit) {
        super(kit);
    }

    @Test
    @DisplayName("ping succeeds and the driver names itself")
    void pingAndName() {
        driver.ping();
        assertThat(driver.name()).isNotBlank();
        assertThat(manager.driverName()).isEqualTo(driver.name());
    }

    @Test
    @DisplayName("create returns a sandbox that accepts execs at once and is listed with its labels")
    void createThenExecAndList() {
        String session = newSessionId("tck-direct");
        String id = createDirectly(session);

        assertThat(driver.exec(id, ExecRequest.of("true")).exitCode()).isZero();
        List<SandboxDescriptor> found = driver.list(Map.of(SandboxLabels.SESSION, session));
        assertThat(found).singleElement().satisfies(d -> {
            assertThat(d.id()).isEqualTo(id);
            assertThat(d.running()).isTrue();
            assertThat(d.labels()).containsAllEntriesOf(labels(session));
        });
    }

    @Test
    @DisplayName("list returns exactly the sandboxes that carry every given label")
    void listByLabels() {
        String a = newSessionId("tck-list-a");
        String b = newSessionId("tck-list-b");
        String idA = createDirectly(a);
        String idB = createDirectly(b);
        String owner = context.instanceId();

        assertThat(ids(Map.of(SandboxLabels.OWNER, owner))).containsExactlyInAnyOrder(idA, idB);
        assertThat(ids(Map.of(SandboxLabels.MANAGED, "true", SandboxLabels.OWNER, owner)))
                .containsExactlyInAnyOrder(idA, idB);
        assertThat(ids(Map.of(SandboxLabels.SESSION, a))).containsExactly(idA);
        assertThat(ids(labels(b))).containsExactly(idB);
        assertThat(ids(Map.of(SandboxLabels.SESSION, a, SandboxLabels.OWNER, "tck-someone-else"))).isEmpty();
        assertThat(ids(Map.of(SandboxLabels.OWNER, "tck-nobody-" + UUID.randomUUID()))).isEmpty();
    }

    @Test
    @DisplayName("remove is idempotent, and exec on a removed sandbox is 'not found'")
    void removeIdempotent() {
        String session = newSessionId("tck-remove");
        String id = createDirectly(session);

        driver.remove(id);
        driver.remove(id);

        assertThat(ids(Map.of(SandboxLabels.SESSION, session))).isEmpty();
        assertThatThrownBy(() -> driver.exec(id, ExecRequest.of("true")))
                .isInstanceOf(SandboxNotFoundException.class);
    }

    @Test
    @DisplayName("acquire creates one sandbox for the session and returns it again while it lives")
    void acquireReuses() {
        String session = newSessionId("tck-acquire");
        Sandbox first = manager.acquire(session, spec());
        Sandbox second = manager.acquire(session, spec());

        SessionInfo info = second.info();
        assertThat(info.state()).isEqualTo(SessionState.ACTIVE);
        assertThat(info.sandboxId()).isNotNull().isEqualTo(first.info().sandboxId());
        assertThat(ids(Map.of(SandboxLabels.SESSION, session))).containsExactly(info.sandboxId());
    }

    @Test
    @DisplayName("destroy removes the sandbox, is idempotent, and the session is then 'not found'")
    void destroyIdempotent() {
        Sandbox sandbox = acquire();
        String session = sandbox.sessionId();

        sandbox.destroy();
        manager.destroy(session);

        assertThat(ids(Map.of(SandboxLabels.SESSION, session))).isEmpty();
        assertThat(manager.session(session).orElseThrow().state()).isEqualTo(SessionState.DESTROYED);
        assertThatThrownBy(() -> sandbox.exec("true")).isInstanceOf(SandboxNotFoundException.class);
    }

    @Test
    @DisplayName("closing the manager removes every sandbox it started")
    void closeRemovesSandboxes() {
        acquire();
        acquire();
        assertThat(ids(Map.of(SandboxLabels.OWNER, context.instanceId()))).hasSize(2);

        manager.close();

        assertThat(ids(Map.of(SandboxLabels.OWNER, context.instanceId()))).isEmpty();
        manager = newManager(); // so that clean-up can destroy the suspended sessions and their workdirs
    }
}
