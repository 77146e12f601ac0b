package dev.sandboxkit.docker;

import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.docker.internal.settings.DockerSettingKeys;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SettingKey;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The Docker driver's key table: every key documented with a default that parses back to the default, every key's
 * text read and written back unchanged, typed settings handed over as keys, and failures that name the key.
 */
class DockerSettingsTest {
    /** A value other than the default for every key, in canonical form; a new key needs one here. */
    private static final Map<String, String> SAMPLES = new LinkedHashMap<>();

    static {
        SAMPLES.put("docker.host", "tcp://127.0.0.1:2376");
        SAMPLES.put("docker.tlsVerify", "false");
        SAMPLES.put("docker.certPath", "/etc/docker-certs");
        SAMPLES.put("docker.tlsCaCert", "/etc/docker-certs/my-ca.pem");
        SAMPLES.put("docker.tlsCert", "/etc/docker-certs/me.pem");
        SAMPLES.put("docker.tlsKey", "/etc/docker-certs/me-key.pem");
        SAMPLES.put("docker.defaultUser", "2000:3000");
        SAMPLES.put("docker.pullTimeout", "90s");
        SAMPLES.put("docker.workdirs", "volume");
        SAMPLES.put("docker.channelSetsid", "false");
        SAMPLES.put("docker.channelIdleTimeout", "0s");
    }

    private static DriverContext context(Map<String, String> properties) {
        return new DriverContext("t", Path.of("/tmp/ws"), Clock.systemUTC(), properties);
    }

    @Test
    void everyKeyHasADescriptionAndADefaultThatParsesBackToTheDefault() {
        DockerSettings defaults = DockerSettings.builder().build();
        assertThat(DockerSettings.keys()).extracting(SettingKey::name).containsExactlyElementsOf(SAMPLES.keySet());
        assertThat(new DockerDriverProvider().settingKeys()).isEqualTo(DockerSettings.keys());
        Map<String, String> all = new LinkedHashMap<>();
        for (SettingKey k : DockerSettings.keys()) {
            assertThat(k.description()).as(k.name()).isNotBlank();
            assertThat(k.type()).as(k.name()).isNotBlank();
            assertThat(k.defaultValue()).as(k.name()).isNotNull();
            assertThat(DockerSettingKeys.read(context(Map.of(k.name(), k.defaultValue())))).as(k.name())
                    .isEqualTo(defaults);
            all.put(k.name(), k.defaultValue());
        }
        assertThat(DockerSettingKeys.read(context(all))).isEqualTo(defaults);
        assertThat(defaults.toProperties()).isEmpty();
        assertThat(DockerSettings.keys()).filteredOn(k -> !k.defaultValue().isEmpty())
                .extracting(SettingKey::name, SettingKey::defaultValue).containsExactly(
                        org.assertj.core.groups.Tuple.tuple("docker.defaultUser", "10001:10001"),
                        org.assertj.core.groups.Tuple.tuple("docker.pullTimeout", "10m"),
                        org.assertj.core.groups.Tuple.tuple("docker.workdirs", "host"),
                        org.assertj.core.groups.Tuple.tuple("docker.channelSetsid", "true"),
                        org.assertj.core.groups.Tuple.tuple("docker.channelIdleTimeout", "5m"));
    }

    @Test
    void theDocsListEveryKeyWithItsTypeAndDefault() throws IOException {
        List<String> rows = Files.readAllLines(Path.of("..", "docs", "configuration.md")).stream()
                .filter(l -> l.startsWith("| `docker.")).toList();
        assertThat(rows).hasSize(DockerSettings.keys().size());
        for (SettingKey k : DockerSettings.keys()) {
            String start = "| `" + k.name() + "` | " + k.type().replace("|", "\\|") + " | ";
            assertThat(rows).as(k.name()).anySatisfy(row -> assertThat(row).startsWith(start + (k.defaultValue().isEmpty()
                    ? "" : "`" + k.defaultValue() + "` |")));
        }
    }

    @Test
    void everyKeyRoundTripsThroughText() {
        SAMPLES.forEach((key, text) -> {
            DockerSettings read = DockerSettingKeys.read(context(Map.of(key, text)));
            assertThat(read).as(key).isNotEqualTo(DockerSettings.builder().build());
            assertThat(read.toProperties()).as(key).isEqualTo(Map.of(key, text));
            assertThat(DockerSettingKeys.read(context(read.toProperties()))).as(key).isEqualTo(read);
        });
        DockerSettings all = DockerSettingKeys.read(context(SAMPLES));
        assertThat(all.toProperties()).isEqualTo(SAMPLES);
        // Other spellings of the one syntax read to the same value and are written back canonically.
        assertThat(DockerSettingKeys.read(context(Map.of("docker.pullTimeout", "PT1H30M", "docker.workdirs", "VOLUME",
                "docker.channelIdleTimeout", "300", "docker.tlsVerify", "TRUE"))).toProperties())
                .containsExactly(Map.entry("docker.tlsVerify", "true"), Map.entry("docker.pullTimeout", "90m"),
                        Map.entry("docker.workdirs", "volume"));
    }

    @Test
    void typedSettingsFromCodeReachTheDriverAsKeys() {
        DockerSettings typed = DockerSettings.builder().host("unix:///run/user/1000/docker.sock")
                .workdirs(DockerSettings.Workdirs.VOLUME).pullTimeout(Duration.ofMinutes(30))
                .channelSetsid(false).channelIdleTimeout(Duration.ZERO).defaultUser("1000")
                .certPath(Path.of("/certs")).tlsVerify(true).build();
        assertThat(typed.pullTimeout()).isEqualTo(Duration.ofMinutes(30));
        assertThat(typed.host()).hasValue("unix:///run/user/1000/docker.sock");
        assertThat(typed.tlsCaCert()).isEmpty();

        SandboxConfig config = new SandboxConfig();
        typed.toProperties().forEach(config::set);
        DriverContext fromConfig = context(config.getDriverSettings());
        assertThat(DockerSettingKeys.read(fromConfig)).isEqualTo(typed).hasSameHashCodeAs(typed);

        SandboxManager.Builder builder = SandboxManager.builder();
        typed.toProperties().forEach(builder::driverProperty); // the class Javadoc's way; each key once
        assertThat(typed.toString()).contains("docker.workdirs=volume").doesNotContain("docker.tlsKey");
    }

    @Test
    void anUnknownKeyIsNamedAsTheUserSetItWithTheNearest() {
        assertThatThrownBy(() -> DockerSettingKeys.read(context(Map.of("docker.hots", "unix:///x.sock"))))
                .isInstanceOf(SandboxConfigurationException.class)
                .hasMessage("driverProperty(\"docker.hots\"): no such setting; did you mean driverProperty(\"docker.host\")?");
        // Case does not hide the key meant (environment variables lower-case them).
        assertThatThrownBy(() -> DockerSettingKeys.read(context(Map.of("docker.tlsverify", "true"))))
                .hasMessageContaining("did you mean driverProperty(\"docker.tlsVerify\")?");
        // Another entry point names the keys its own way: so does the suggestion.
        DriverContext boot = new DriverContext("t", Path.of("/tmp/ws"), Clock.systemUTC(),
                Map.of("docker.workdir", "volume"), k -> "sandboxkit.driver-properties." + k);
        assertThatThrownBy(() -> DockerSettingKeys.read(boot)).hasMessage("sandboxkit.driver-properties.docker.workdir: "
                + "no such setting; did you mean sandboxkit.driver-properties.docker.workdirs?");
        assertThatThrownBy(() -> DockerSettingKeys.read(context(Map.of("docker.nothingLikeIt", "1"))))
                .hasMessageStartingWith("driverProperty(\"docker.nothingLikeIt\"): no such setting; the settings are ")
                .hasMessageContaining("docker.channelIdleTimeout");
        // Detection does not pass over a mistyped Docker setting to another driver: it fails too.
        assertThatThrownBy(() -> new DockerDriverProvider().unavailableReason(context(Map.of("docker.hots", "x"))))
                .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("did you mean");
        // Other drivers' keys are theirs to check.
        assertThat(DockerSettingKeys.read(context(Map.of("kubernetes.namespace", "x"))))
                .isEqualTo(DockerSettings.builder().build());
    }

    @Test
    void anUnknownSystemPropertyIsNamedAsOne() {
        System.setProperty("sandboxkit.docker.pullTimeot", "1m");
        try {
            assertThatThrownBy(() -> DockerSettingKeys.read(context(Map.of())))
                    .hasMessage("-Dsandboxkit.docker.pullTimeot: no such setting; did you mean "
                            + "-Dsandboxkit.docker.pullTimeout?");
        } finally {
            System.clearProperty("sandboxkit.docker.pullTimeot");
        }
    }

    @Test
    void invalidValuesNameTheKey() {
        Map<String, String> bad = Map.of("docker.pullTimeout", "soon", "docker.workdirs", "nfs",
                "docker.tlsVerify", "1", "docker.defaultUser", "nobody", "docker.channelIdleTimeout", "-PT1S");
        bad.forEach((key, value) -> assertThatThrownBy(() -> DockerSettingKeys.read(context(Map.of(key, value))))
                .as(key).isInstanceOf(SandboxConfigurationException.class)
                .hasMessageStartingWith("driverProperty(\"" + key + "\"): "));
        assertThatThrownBy(() -> DockerSettingKeys.read(context(Map.of("docker.pullTimeout", "0s"))))
                .hasMessage("driverProperty(\"docker.pullTimeout\"): must be positive, got 0s");
        assertThatThrownBy(() -> DockerSettings.builder().defaultUser("2147483648"))
                .isInstanceOf(SandboxConfigurationException.class).hasMessageStartingWith("docker.defaultUser: ");
        assertThatThrownBy(() -> DockerSettings.builder().channelIdleTimeout(Duration.ofSeconds(-1)))
                .hasMessageStartingWith("docker.channelIdleTimeout: must not be negative");
    }
}
