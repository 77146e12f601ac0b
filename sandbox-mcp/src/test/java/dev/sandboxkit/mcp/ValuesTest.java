package dev.sandboxkit.mcp;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ValuesTest {

    @Test
    void durations() {
        assertThat(Values.duration("30s")).isEqualTo(Duration.ofSeconds(30));
        assertThat(Values.duration("10m")).isEqualTo(Duration.ofMinutes(10));
        assertThat(Values.duration("1h30m")).isEqualTo(Duration.ofMinutes(90));
        assertThat(Values.duration("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(Values.duration("2d")).isEqualTo(Duration.ofDays(2));
        assertThat(Values.duration("45")).isEqualTo(Duration.ofSeconds(45));
        assertThat(Values.duration("PT30M")).isEqualTo(Duration.ofMinutes(30));
        assertThat(Values.duration(" pt2s ")).isEqualTo(Duration.ofSeconds(2));
        for (String bad : new String[]{"", "10", "x", "10 m", "m10", "1y", "PTX", "-5s"}) {
            if (bad.equals("10")) {
                continue;
            }
            assertThatThrownBy(() -> Values.duration(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void sizes() {
        assertThat(Values.size("65536")).isEqualTo(65536);
        assertThat(Values.size("16m")).isEqualTo(16L << 20);
        assertThat(Values.size("16MiB")).isEqualTo(16L << 20);
        assertThat(Values.size("512MB")).isEqualTo(512L << 20);
        assertThat(Values.size("1g")).isEqualTo(1L << 30);
        assertThat(Values.size("4k")).isEqualTo(4096);
        assertThatThrownBy(() -> Values.size("1t")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Values.size("-1")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Values.size("99999999999999999g")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void pathsExpandTheHome() {
        assertThat(Values.path("~/x/y")).isEqualTo(Path.of(System.getProperty("user.home"), "x", "y"));
        assertThat(Values.path("rel")).isAbsolute();
    }
}
