package dev.sandboxkit;

import dev.sandboxkit.spi.SessionRecord;
import org.jspecify.annotations.NullMarked;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Modifier;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The written API rules, checked: nullness is declared, and the values that grow are not records. */
class ApiRulesTest {

    @Test
    void theApiAndSpiPackagesAreNullMarked() {
        assertThat(SandboxManager.class.getPackage().isAnnotationPresent(NullMarked.class)).isTrue();
        assertThat(SessionRecord.class.getPackage().isAnnotationPresent(NullMarked.class)).isTrue();
    }

    @Test
    void valuesThatGrowAreFinalClassesNotRecords() {
        for (Class<?> c : List.of(SandboxSpec.class, ExecRequest.class, ExecResult.class, SessionInfo.class,
                ManagerStats.class, SessionRecord.class)) {
            assertThat(c.isRecord()).as(c.getSimpleName()).isFalse();
            assertThat(Modifier.isFinal(c.getModifiers())).as(c.getSimpleName()).isTrue();
            assertThat(c.getConstructors()).as("%s has no public constructor", c.getSimpleName()).isEmpty();
        }
    }
}
