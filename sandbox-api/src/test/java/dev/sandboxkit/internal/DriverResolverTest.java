package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the core entry point says when no driver fits: the setting the name came from, the nearest known driver for a
 * typo, and only modules that exist and are missing. The test class path has the fake driver ("fake") only.
 */
class DriverResolverTest {

    @AfterEach
    void clearProperty() {
        System.clearProperty("sandboxkit.driver");
    }

    @Test
    void aTypoOfADriverOnTheClassPathSuggestsIt() {
        assertThatThrownBy(() -> SandboxManager.builder().driver("fak").build())
                .isInstanceOf(SandboxConfigurationException.class)
                .hasMessageStartingWith("no sandbox driver named 'fak' (SandboxManager.builder().driver(..)); did you mean fake?")
                .hasMessageContaining("Drivers on the classpath: fake.")
                .hasMessageNotContaining("sandbox-fak");
    }

    @Test
    void aTypoOfAKnownDriverSuggestsItAndItsModule() {
        assertThatThrownBy(() -> SandboxManager.builder().driver("dockr").build())
                .isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("did you mean docker? It is in dev.sandboxkit:sandbox-docker, which is not on the classpath.")
                .hasMessageNotContaining("sandbox-dockr");
    }

    @Test
    void aNameFromTheSystemPropertyNamesIt() {
        System.setProperty("sandboxkit.driver", "kubernets");
        assertThatThrownBy(() -> SandboxManager.builder().build())
                .isInstanceOf(SandboxConfigurationException.class)
                .hasMessageStartingWith("no sandbox driver named 'kubernets' (-Dsandboxkit.driver); did you mean kubernetes?")
                .hasMessageNotContaining("sandbox-kubernets");
    }

    @Test
    void aKnownDriverThatIsMissingNamesItsModule() {
        assertThatThrownBy(() -> SandboxManager.builder().driver("kubernetes").build())
                .isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("It is in dev.sandboxkit:sandbox-kubernetes, which is not on the classpath.");
    }

    @Test
    void aNameFarFromEveryDriverListsTheKnownOnes() {
        assertThatThrownBy(() -> SandboxManager.builder().driver("lxc").build())
                .isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("sandboxkit's drivers are docker (dev.sandboxkit:sandbox-docker) and kubernetes "
                        + "(dev.sandboxkit:sandbox-kubernetes)")
                .hasMessageNotContaining("did you mean").hasMessageNotContaining("sandbox-lxc");
    }

    @Test
    void detectionWithoutAUsableDriverSaysWhyAndWhatToAdd() {
        assertThatThrownBy(() -> SandboxManager.builder().build())
                .isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("fake: only used when selected by name")
                .hasMessageContaining("Add a driver module: dev.sandboxkit:sandbox-docker or dev.sandboxkit:sandbox-kubernetes.");
    }
}
