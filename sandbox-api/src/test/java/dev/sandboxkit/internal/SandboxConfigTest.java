package dev.sandboxkit.internal;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.WarmPool;
import dev.sandboxkit.spi.ArchiveStore;
import dev.sandboxkit.testkit.ConfigSamples;
import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The one configuration model: its keys, its syntax, its defaults, and the core's doors onto it. */
class SandboxConfigTest {
    private final ManualClock clock = new ManualClock();
    private final ManualScheduler scheduler = new ManualScheduler(clock);

    @AfterEach
    void clearProperties() {
        System.clearProperty("sandboxkit.idle-timeout");
        System.clearProperty("sandboxkit.orphan-grace");
        System.clearProperty("sandboxkit.spec.memory");
    }

    @Test
    @DisplayName("every key's default reads back as its text, and a changed value survives the trip through text")
    void everyKeyRoundTrips() {
        SandboxConfig defaults = new SandboxConfig();
        SandboxConfig changed = new SandboxConfig();
        Map<String, String> given = new HashMap<>();
        for (SandboxConfig.Key k : SandboxConfig.keys()) {
            if (k.name().endsWith(".*")) {
                continue;
            }
            assertThat(defaults.get(k.name())).as(k.name()).isEqualTo(k.defaultValue());
            String sample = ConfigSamples.sample(k);
            changed.set(k.property(), sample);
            given.put(k.name(), changed.get(k.name()));
            assertThat(changed.get(k.name())).as(k.name()).isNotNull().isNotEqualTo(k.defaultValue());
        }
        changed.set("spec.env.LANG", "C.UTF-8").set("spec.labels.team", "blue").set("docker.host", "unix:///x.sock");
        SandboxConfig copy = SandboxConfig.from(changed.changes());
        assertThat(copy.changes()).isEqualTo(changed.changes()).containsAllEntriesOf(given)
                .containsEntry("spec.env.LANG", "C.UTF-8").containsEntry("spec.labels.team", "blue")
                .containsEntry("docker.host", "unix:///x.sock");
        assertThat(new SandboxConfig().changes()).isEmpty();
    }

    @Test
    @DisplayName("one syntax: units, ISO-8601, plain seconds and bytes, any-case enums")
    void oneSyntax() {
        SandboxConfig c = new SandboxConfig().set("idle-timeout", "1h30m").set("lease-duration", "PT45S")
                .set("reconcile-interval", "90").set("spec.memory", "1g").set("spec.tmp-size", "16MiB")
                .set("tools.output-limit", "4096").set("spec.pull-policy", "Never").set("spec.exec-mode", "plain")
                .set("warm-pool.when-empty", "fail-fast");
        assertThat(c.getIdleTimeout()).isEqualTo(Duration.ofMinutes(90));
        assertThat(c.get("idle-timeout")).isEqualTo("90m");
        assertThat(c.getLeaseDuration()).isEqualTo(Duration.ofSeconds(45));
        assertThat(c.getReconcileInterval()).isEqualTo(Duration.ofSeconds(90));
        assertThat(c.get("spec.memory")).isEqualTo("1GB");
        assertThat(c.get("spec.tmp-size")).isEqualTo("16MB");
        assertThat(c.getToolsOutputLimit()).isEqualTo(4096);
        assertThat(c.set("spec.image", "img:1").spec().pullPolicy()).isEqualTo(PullPolicy.NEVER);
        assertThat(c.spec().execMode()).isEqualTo(ExecMode.PLAIN);
        assertThat(c.warmPool(c.spec())).isNull();
        WarmPool pool = c.set("warm-pool.size", "2").warmPool(c.spec());
        assertThat(pool).isNotNull();
        assertThat(pool.whenEmpty()).isEqualTo(WarmPool.Exhausted.FAIL_FAST);
    }

    @Test
    @DisplayName("a wrong key or value names the key, and a near miss is suggested")
    void errorsNameTheKey() {
        SandboxConfig c = new SandboxConfig();
        assertThatThrownBy(() -> c.set("sandboxkit.idle-timout", "5m")).isInstanceOf(SandboxConfigurationException.class)
                .hasMessage("sandboxkit.idle-timout: no such setting; did you mean sandboxkit.idle-timeout?");
        assertThatThrownBy(() -> c.set("idle-timeout", "soon")).isInstanceOf(SandboxConfigurationException.class)
                .hasMessageStartingWith("sandboxkit.idle-timeout: expected a duration");
        assertThatThrownBy(() -> c.set("idle-timeout", "0s")).hasMessageStartingWith("sandboxkit.idle-timeout: must be positive");
        assertThatThrownBy(() -> c.set("spec.memory", "lots")).hasMessageStartingWith("sandboxkit.spec.memory: expected a size");
        assertThatThrownBy(() -> c.set("spec.pull-policy", "sometimes"))
                .hasMessage("sandboxkit.spec.pull-policy: expected one of always, if-missing, never, got 'sometimes'");
        assertThatThrownBy(() -> c.set("fleet", "no spaces")).hasMessageStartingWith("sandboxkit.fleet: 1-63 characters");
        assertThatThrownBy(() -> c.set("spec.nonsense", "1")).hasMessageStartingWith("sandboxkit.spec.nonsense: no such setting");
        assertThatThrownBy(c::spec).hasMessageStartingWith("sandboxkit.spec.image: required");
        SandboxConfig withImage = new SandboxConfig().set("spec.image", "img:1");
        assertThatThrownBy(() -> withImage.set("spec.template", "snapshot:abc").spec())
                .isInstanceOf(SandboxConfigurationException.class)
                .hasMessage("sandboxkit.spec.template: not a snapshot id: abc");
        assertThatThrownBy(() -> withImage.set("spec.template", "relative/dir").spec())
                .isInstanceOf(SandboxConfigurationException.class)
                .hasMessageStartingWith("sandboxkit.spec.template: a template directory must be an absolute path");
    }

    @Test
    @DisplayName("the spec's defaults are SandboxSpec.Builder's, and the tools' are SandboxConfig's own")
    void specDefaultsAreTheSpecBuilders() {
        assertThat(new SandboxConfig().set("spec.image", "img:1").spec()).isEqualTo(SandboxSpec.builder().image("img:1").build());
    }

    @Test
    @DisplayName("-Dsandboxkit.* system properties reach SandboxManager.builder(); an explicit builder call wins")
    void systemPropertiesDoor() {
        System.setProperty("sandboxkit.idle-timeout", "7m");
        System.setProperty("sandboxkit.orphan-grace", "2m");
        try (SandboxManager fromProperty = manager(SandboxManager.builder());
             SandboxManager explicit = manager(SandboxManager.builder().idleTimeout(Duration.ofMinutes(3)))) {
            assertThat(fromProperty.idleTimeout()).isEqualTo(Duration.ofMinutes(7));
            assertThat(explicit.idleTimeout()).isEqualTo(Duration.ofMinutes(3));
        }
        System.setProperty("sandboxkit.spec.memory", "lots");
        assertThatThrownBy(SandboxManager::builder).hasMessageStartingWith("sandboxkit.spec.memory: expected a size");
    }

    @Test
    @DisplayName("a configuration object is a door too: SandboxManager.builder(config), and its warm pool")
    void configDoor() {
        Properties file = new Properties();
        file.setProperty("sandboxkit.idle-timeout", "11m");
        file.setProperty("sandboxkit.spec.image", "img:1");
        file.setProperty("sandboxkit.warm-pool.size", "1");
        file.setProperty("other.key", "ignored");
        SandboxConfig config = SandboxConfig.fromProperties(file);
        try (SandboxManager m = manager(SandboxManager.builder(config))) {
            assertThat(m.idleTimeout()).isEqualTo(Duration.ofMinutes(11));
            scheduler.runDueTasks(); // the pool's first fill
            assertThat(m.stats().poolSize()).as("warm-pool.size=1 of the configured spec").isEqualTo(1);
            m.acquire("s", config.spec());
            assertThat(m.stats().poolHits()).isEqualTo(1);
        }
        assertThatThrownBy(() -> SandboxManager.builder(config).idleTimeout(Duration.ofMinutes(1)).idleTimeout(Duration.ofMinutes(2)))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("archive-after without an archive store fails the build instead of quietly archiving nothing")
    void archiveAfterNeedsAStore(@TempDir Path archive) {
        SandboxConfig config = new SandboxConfig();
        config.set("archive-after", "2h");
        assertThatThrownBy(() -> manager(SandboxManager.builder(config)))
                .isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("sandboxkit.archive-after is set (PT2H) but there is no archive store");
        try (SandboxManager m = manager(SandboxManager.builder(config)
                .archive(ArchiveStore.directory(archive), Duration.ofHours(2)))) {
            assertThat(m.idleTimeout()).isEqualTo(config.getIdleTimeout());
        }
    }

    private SandboxManager manager(SandboxManager.Builder b) {
        return b.driver(new FakeDriver(clock)).clock(clock).scheduler(scheduler).build();
    }
}
