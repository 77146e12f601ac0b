package dev.sandboxkit.spi;

import dev.sandboxkit.SandboxConfigurationException;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The one value syntax: what the MCP server's own parser accepted before it gave way to this one. */
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
}
