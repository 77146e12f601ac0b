package dev.sandboxkit.spring.boot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.spi.SandboxDriverProvider;
import dev.sandboxkit.spi.SettingKey;
import dev.sandboxkit.spring.boot.internal.SandboxConfigBinder;
import dev.sandboxkit.tools.SandboxTool;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.ServiceLoader;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The IDE metadata of the properties cannot drift from the library: the committed
 * {@code additional-spring-configuration-metadata.json} is what {@link SandboxConfig#keys()} produces (name, type,
 * description, default), and the starter's own options are exactly {@link SandboxConfigBinder#BOOT_ONLY}.
 */
class ConfigurationMetadataTest {
    static final Path COMMITTED = Path.of("src/main/resources/META-INF/additional-spring-configuration-metadata.json");
    static final Path GENERATED = Path.of("target/additional-spring-configuration-metadata.json");

    @Test
    void theCommittedMetadataIsWhatTheKeysProduce() throws IOException {
        String expected = generate();
        String committed = Files.readString(COMMITTED, StandardCharsets.UTF_8);
        if (!committed.equals(expected)) {
            Files.createDirectories(GENERATED.getParent());
            Files.writeString(GENERATED, expected, StandardCharsets.UTF_8);
        }
        assertThat(committed).as("%s is out of date with SandboxConfig.keys(); the test wrote the current one to "
                + "sandbox-spring-boot-starter/%s: copy it over (cp %s %s) and commit it", COMMITTED, GENERATED,
                GENERATED, COMMITTED).isEqualTo(expected);
    }

    @Test
    void everyKeyIsListedWithItsTypeDescriptionAndDefault() throws IOException {
        Map<String, JsonNode> listed = new LinkedHashMap<>();
        try (InputStream in = getClass().getClassLoader().getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
            new ObjectMapper().readTree(in).path("properties").forEach(p -> listed.put(p.path("name").asText(), p));
        }
        for (SandboxConfig.Key k : SandboxConfig.keys()) {
            JsonNode p = listed.get(name(k));
            assertThat(p).as(name(k)).isNotNull();
            assertThat(p.path("description").asText()).as(name(k)).isEqualTo(k.description());
            assertThat(p.path("type").asText()).as(name(k)).isEqualTo(javaType(k));
            if (k.defaultValue() != null) {
                if (k.type().equals("number")) {
                    assertThat(p.path("defaultValue").asDouble()).as(name(k)).isEqualTo(Double.parseDouble(k.defaultValue()));
                } else {
                    assertThat(p.path("defaultValue").asText()).as(name(k)).isEqualTo(portable(k.defaultValue()));
                }
            } else {
                assertThat(p.has("defaultValue")).as(name(k)).isFalse();
            }
        }
        // The starter's own options are those of SandboxProperties, which the annotation processor lists.
        Set<String> own = new TreeSet<>();
        listed.forEach((name, p) -> {
            if (p.path("sourceType").asText().startsWith(SandboxProperties.class.getName())) {
                own.add(name.substring(SandboxConfig.PREFIX.length()));
            }
        });
        assertThat(own).isEqualTo(new TreeSet<>(SandboxConfigBinder.BOOT_ONLY));
        assertThat(own).as("no Boot-only option is a key of the library")
                .doesNotContainAnyElementsOf(SandboxConfig.keys().stream().map(SandboxConfig.Key::name).toList());
    }

    /** The metadata of every key, with the few entries that are not keys (actuator switches, the older driver map). */
    static String generate() throws IOException {
        List<Map<String, Object>> properties = new ArrayList<>();
        List<Map<String, Object>> hints = new ArrayList<>();
        for (SandboxConfig.Key k : SandboxConfig.keys()) {
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("name", name(k));
            p.put("type", javaType(k));
            p.put("description", k.description());
            if (k.defaultValue() != null) {
                p.put("defaultValue", defaultValue(k.type(), k.defaultValue()));
            }
            properties.add(p);
            hints(name(k), k.type(), hints);
        }
        // The settings of the drivers the starter brings (the Docker driver): what their providers list.
        List<SandboxDriverProvider> providers = new ArrayList<>();
        ServiceLoader.load(SandboxDriverProvider.class).forEach(providers::add);
        providers.sort(Comparator.comparing(SandboxDriverProvider::name));
        for (SandboxDriverProvider provider : providers) {
            for (SettingKey k : provider.settingKeys()) {
                Map<String, Object> p = property(k.property(), javaType(k.type()), k.description());
                if (!k.defaultValue().isEmpty()) {
                    p.put("defaultValue", defaultValue(k.type(), k.defaultValue()));
                }
                properties.add(p);
                hints(k.property(), k.type(), hints);
            }
        }
        Map<String, Object> legacy = property("sandboxkit.driver-properties",
                "java.util.Map<java.lang.String,java.lang.String>", "Driver settings under the starter's older name: "
                        + "sandboxkit.driver-properties.docker.host is sandboxkit.docker.host.");
        legacy.put("deprecation", ordered("level", "warning", "reason", "Driver settings are keys of their own, as "
                + "everywhere else in sandboxkit.", "replacement", "sandboxkit.docker.host"));
        properties.add(legacy);
        properties.add(property("management.health.sandboxkit.enabled", "java.lang.Boolean", "Whether to enable the "
                + "sandboxkit health indicator (engine reachable, active, suspended and pooled counts).", true));
        properties.add(property("management.info.sandboxkit.enabled", "java.lang.Boolean", "Whether to add the "
                + "sandboxkit entry (driver, active, suspended and pooled counts, totals) to the info endpoint.", true));
        hints.add(hint("sandboxkit.driver", List.of(
                ordered("value", "docker", "description", "A local or remote Docker engine (dev.sandboxkit:sandbox-docker, included)."),
                ordered("value", "kubernetes", "description", "Pods with a PVC per session (add dev.sandboxkit:sandbox-kubernetes)."))));
        List<Map<String, Object>> tools = new ArrayList<>();
        for (SandboxTool t : SandboxTool.values()) {
            tools.add(Map.of("value", t.toolName()));
        }
        hints.add(hint("sandboxkit.tools.allowed", tools));
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("properties", properties);
        root.put("hints", hints);
        return new ObjectMapper().writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n";
    }

    private static Object defaultValue(String type, String value) {
        return switch (type) {
            case "boolean" -> Boolean.valueOf(value);
            case "integer" -> Long.valueOf(value);
            case "number" -> Double.valueOf(value);
            default -> portable(value);
        };
    }

    /** An enum-like type ({@code a|b|c}): its values as the property's hints. */
    private static void hints(String name, String type, List<Map<String, Object>> hints) {
        if (type.contains("|")) {
            List<Map<String, Object>> values = new ArrayList<>();
            for (String v : type.split("\\|")) {
                values.add(Map.of("value", v));
            }
            hints.add(hint(name, values));
        }
    }

    /** A map in the order given, so that the file is the same on every run. */
    private static Map<String, Object> ordered(String... keysAndValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }

    /** A default under java.io.tmpdir, written the same on every machine. */
    static String portable(String value) {
        String tmp = Path.of(System.getProperty("java.io.tmpdir")).toString();
        return value.startsWith(tmp + java.io.File.separator) ? "${java.io.tmpdir}" + value.substring(tmp.length()) : value;
    }

    private static Map<String, Object> property(String name, String type, String description, Object... dflt) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("name", name);
        p.put("type", type);
        p.put("description", description);
        if (dflt.length > 0) {
            p.put("defaultValue", dflt[0]);
        }
        return p;
    }

    private static Map<String, Object> hint(String name, List<Map<String, Object>> values) {
        Map<String, Object> h = new LinkedHashMap<>();
        h.put("name", name);
        h.put("values", values);
        return h;
    }

    /** {@code sandboxkit.spec.env} for {@code spec.env.*}: a map property. */
    static String name(SandboxConfig.Key k) {
        return k.name().endsWith(".*") ? k.property().substring(0, k.property().length() - 2) : k.property();
    }

    static String javaType(SandboxConfig.Key k) {
        return javaType(k.type());
    }

    private static String javaType(String type) {
        return switch (type) {
            case "duration" -> "java.time.Duration";
            case "size" -> "org.springframework.util.unit.DataSize";
            case "boolean" -> "java.lang.Boolean";
            case "integer" -> "java.lang.Long";
            case "number" -> "java.lang.Double";
            case "path" -> "java.nio.file.Path";
            case "list" -> "java.util.List<java.lang.String>";
            case "map" -> "java.util.Map<java.lang.String,java.lang.String>";
            default -> "java.lang.String"; // text, and enums (their values are hints)
        };
    }
}
