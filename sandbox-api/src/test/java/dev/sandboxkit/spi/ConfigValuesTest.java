package dev.sandboxkit.spi;

import dev.sandboxkit.SandboxConfigurationException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The one value syntax: what the MCP server's own parser accepted before it gave way to this one, and what the
 * drivers' settings need beyond the core's (Kubernetes sizes, numbers, the nearest key for a hint).
 */
class ConfigValuesTest {

    @Test
    void durations() {
        assertThat(ConfigValues.duration("k", "30s")).isEqualTo(Duration.ofSeconds(30));
        assertThat(ConfigValues.duration("k", "10m")).isEqualTo(Duration.ofMinutes(10));
        assertThat(ConfigValues.duration("k", "1h30m")).isEqualTo(Duration.ofMinutes(90));
        assertThat(ConfigValues.duration("k", "500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(ConfigValues.duration("k", "2d")).isEqualTo(Duration.ofDays(2));
        assertThat(ConfigValues.duration("k", "45")).isEqualTo(Duration.ofSeconds(45));
        assertThat(ConfigValues.duration("k", "PT30M")).isEqualTo(Duration.ofMinutes(30));
        assertThat(ConfigValues.duration("k", " pt2s ")).isEqualTo(Duration.ofSeconds(2));
        for (String bad : new String[]{"", "x", "10 m", "m10", "1y", "PTX", "-5s", "99999999999999999999s"}) {
            assertThatThrownBy(() -> ConfigValues.duration("sandboxkit.k", bad)).as(bad)
                    .isInstanceOf(SandboxConfigurationException.class).hasMessageStartingWith("sandboxkit.k: expected");
        }
    }

    @Test
    void sizes() {
        assertThat(ConfigValues.size("k", "65536")).isEqualTo(65536);
        assertThat(ConfigValues.size("k", "16m")).isEqualTo(16L << 20);
        assertThat(ConfigValues.size("k", "16MiB")).isEqualTo(16L << 20);
        assertThat(ConfigValues.size("k", "512MB")).isEqualTo(512L << 20);
        assertThat(ConfigValues.size("k", "1g")).isEqualTo(1L << 30);
        assertThat(ConfigValues.size("k", "4k")).isEqualTo(4096);
        assertThat(ConfigValues.size("k", "1t")).isEqualTo(1L << 40);
        for (String bad : new String[]{"", "-1", "1x", "99999999999999999g"}) {
            assertThatThrownBy(() -> ConfigValues.size("sandboxkit.k", bad)).as(bad)
                    .isInstanceOf(SandboxConfigurationException.class).hasMessageStartingWith("sandboxkit.k: expected");
        }
    }

    @Test
    void sizesTakeKubernetesBinarySuffixes() {
        assertThat(ConfigValues.size("k", "1Gi")).isEqualTo(1L << 30);
        assertThat(ConfigValues.size("k", "512Mi")).isEqualTo(512L << 20);
        assertThat(ConfigValues.size("k", "64ki")).isEqualTo(64L << 10);
        assertThat(ConfigValues.size("k", "1GiB")).isEqualTo(1L << 30);
        assertThatThrownBy(() -> ConfigValues.size("kubernetes.workspaceSize", "1.5Gi"))
                .isInstanceOf(SandboxConfigurationException.class)
                .hasMessageStartingWith("kubernetes.workspaceSize: expected a size");
    }

    @Test
    void numbersAreFinite() {
        assertThat(ConfigValues.number("k", " 0.5 ")).isEqualTo(0.5);
        for (String bad : List.of("half", "NaN", "Infinity", "")) {
            assertThatThrownBy(() -> ConfigValues.number("kubernetes.resourceRequestRatio", bad)).as(bad)
                    .hasMessage("kubernetes.resourceRequestRatio: expected a number, got '" + bad + "'");
        }
    }

    @Test
    void theNearestNameIgnoresCaseAndNeedsToBeNear() {
        List<String> names = List.of("docker.host", "docker.tlsVerify", "docker.pullTimeout");
        assertThat(ConfigValues.nearest("docker.hots", names)).hasValue("docker.host");
        assertThat(ConfigValues.nearest("docker.tlsverify", names)).hasValue("docker.tlsVerify");
        assertThat(ConfigValues.nearest("docker.somethingElse", names)).isEmpty();
        assertThat(ConfigValues.nearest("x", List.of())).isEmpty();
    }
}
