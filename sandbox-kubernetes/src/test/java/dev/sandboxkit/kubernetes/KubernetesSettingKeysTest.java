package dev.sandboxkit.kubernetes;

import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SettingKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Kubernetes driver's key table: every key documented with a default that parses back to the builder's default,
 * and every key's text read into the driver's settings and written back unchanged.
 */
class KubernetesSettingKeysTest {
    /** A value other than the default for every key, in canonical form; a new key needs one here. */
    private static final Map<String, String> SAMPLES = new LinkedHashMap<>();

    static {
        SAMPLES.put("kubernetes.context", "other");
        SAMPLES.put("kubernetes.namespace", "agents");
        SAMPLES.put("kubernetes.storageClass", "fast");
        SAMPLES.put("kubernetes.workspaceSize", "512Mi");
        SAMPLES.put("kubernetes.runAsUser", "2000");
        SAMPLES.put("kubernetes.runAsGroup", "2001");
        SAMPLES.put("kubernetes.fsGroup", "0");
        SAMPLES.put("kubernetes.readOnlyRootFilesystem", "true");
        SAMPLES.put("kubernetes.readinessTimeout", "90s");
        SAMPLES.put("kubernetes.terminationGracePeriod", "0s");
        SAMPLES.put("kubernetes.networkPolicy", "false");
        SAMPLES.put("kubernetes.resourceRequestRatio", "0.5");
        SAMPLES.put("kubernetes.runtimeClassName", "gvisor");
        SAMPLES.put("kubernetes.imagePullSecrets", "a,b");
    }

    @TempDir
    Path dir;

    /** The settings a driver would get: the builder's, before the client's namespace is known. */
    private Settings settings(Map<String, String> properties) {
        return KubernetesDriverProvider.builder(new DriverContext("m-1", dir, Clock.systemUTC(), properties))
                .settings();
    }

    @Test
    void everyKeyHasADescriptionAndADefaultThatParsesBackToTheDefault() {
        Settings defaults = KubernetesSandboxDriver.builder().settings();
        assertThat(KubernetesDriverProvider.keys()).extracting(SettingKey::name)
                .containsExactlyElementsOf(SAMPLES.keySet());
        assertThat(new KubernetesDriverProvider().settingKeys()).isEqualTo(KubernetesDriverProvider.keys());
        Map<String, String> all = new LinkedHashMap<>();
        for (SettingKey k : KubernetesDriverProvider.keys()) {
            assertThat(k.description()).as(k.name()).isNotBlank();
            assertThat(k.type()).as(k.name()).isNotBlank();
            assertThat(k.defaultValue()).as(k.name()).isNotNull();
            assertThat(settings(Map.of(k.name(), k.defaultValue()))).as(k.name()).isEqualTo(defaults);
            all.put(k.name(), k.defaultValue());
        }
        assertThat(settings(all)).isEqualTo(defaults);
        assertThat(KubernetesDriverProvider.keys()).filteredOn(k -> !k.defaultValue().isEmpty())
                .extracting(k -> k.name() + "=" + k.defaultValue()).containsExactly("kubernetes.workspaceSize=1Gi",
                        "kubernetes.runAsUser=10001", "kubernetes.runAsGroup=10001", "kubernetes.fsGroup=10001",
                        "kubernetes.readOnlyRootFilesystem=false", "kubernetes.readinessTimeout=2m",
                        "kubernetes.terminationGracePeriod=1s", "kubernetes.networkPolicy=auto",
                        "kubernetes.resourceRequestRatio=1.0");
    }

    @Test
    void everyKeyRoundTripsThroughText() {
        Settings defaults = KubernetesSandboxDriver.builder().settings();
        for (KubernetesDriverProvider.Key key : KubernetesDriverProvider.Keys.ALL) {
            String name = key.doc().name();
            String text = SAMPLES.get(name);
            Settings read = settings(Map.of(name, text));
            assertThat(read).as(name).isNotEqualTo(defaults);
            assertThat(key.text().apply(read)).as(name).isEqualTo(text);
        }
        Settings all = settings(SAMPLES);
        for (KubernetesDriverProvider.Key key : KubernetesDriverProvider.Keys.ALL) {
            assertThat(key.text().apply(all)).as(key.doc().name()).isEqualTo(SAMPLES.get(key.doc().name()));
        }
        // Other spellings of the one syntax read to the same value and are written back canonically.
        Settings spelled = settings(Map.of("kubernetes.workspaceSize", "2Gi", "kubernetes.readinessTimeout", "PT1M30S",
                "kubernetes.networkPolicy", "AUTO", "kubernetes.imagePullSecrets", " a , ,b "));
        assertThat(spelled.workspaceSize()).isEqualTo("2Gi");
        assertThat(settings(Map.of("kubernetes.workspaceSize", "512MB")).workspaceSize()).isEqualTo("512Mi");
        assertThat(spelled.readinessTimeout()).isEqualTo(settings(Map.of("kubernetes.readinessTimeout", "90s"))
                .readinessTimeout());
        assertThat(spelled.networkPolicy()).isNull();
        assertThat(spelled.imagePullSecrets()).containsExactly("a", "b");
    }

    @Test
    void theDocsListEveryKeyWithItsDefault() throws IOException {
        List<String> rows = Files.readAllLines(Path.of("..", "docs", "configuration.md")).stream()
                .filter(l -> l.startsWith("| ")).toList();
        for (SettingKey k : KubernetesDriverProvider.keys()) {
            assertThat(rows).as(k.name()).anySatisfy(row -> {
                assertThat(row).contains("| `" + k.name() + "`");
                if (!k.defaultValue().isEmpty()) {
                    assertThat(row).contains("| `" + k.defaultValue() + "`");
                }
            });
        }
    }

    @Test
    void sizesBecomeKubernetesQuantities() {
        assertThat(KubernetesDriverProvider.quantity(1L << 30)).isEqualTo("1Gi");
        assertThat(KubernetesDriverProvider.quantity(512L << 20)).isEqualTo("512Mi");
        assertThat(KubernetesDriverProvider.quantity(3L << 40)).isEqualTo("3Ti");
        assertThat(KubernetesDriverProvider.quantity(1000)).isEqualTo("1000");
        assertThat(KubernetesDriverProvider.quantity(1536)).isEqualTo("1536");
    }
}
