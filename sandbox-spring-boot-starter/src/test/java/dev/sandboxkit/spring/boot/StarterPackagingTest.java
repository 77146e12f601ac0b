package dev.sandboxkit.spring.boot;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.spring.boot.internal.SandboxFactory;
import dev.sandboxkit.spring.boot.internal.SandboxFailureAnalyzer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.io.support.SpringFactoriesLoader;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What the jar gives Spring Boot and IDEs: the auto-configuration imports, the failure analyzer, the metadata. */
class StarterPackagingTest {

    @Test
    void bootFindsTheAutoConfigurations() {
        List<String> imported = new ArrayList<>();
        ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()).forEach(imported::add);
        assertThat(imported).contains(SandboxAutoConfiguration.class.getName(), SandboxToolsAutoConfiguration.class.getName(),
                SandboxMetricsAutoConfiguration.class.getName(), SandboxHealthAutoConfiguration.class.getName(),
                SandboxInfoAutoConfiguration.class.getName());
    }

    @Test
    void bootFindsTheFailureAnalyzer() {
        List<FailureAnalyzer> analyzers = SpringFactoriesLoader.forDefaultResourceLocation(getClass().getClassLoader())
                .load(FailureAnalyzer.class, SpringFactoriesLoader.ArgumentResolver.none(),
                        SpringFactoriesLoader.FailureHandler.handleMessage((message, failure) -> { }));
        assertThat(analyzers).hasAtLeastOneElementOfType(SandboxFailureAnalyzer.class);
    }

    @Test
    void theMetadataDescribesThePropertiesWithTheirDefaults() throws Exception {
        Map<String, JsonNode> properties = new HashMap<>();
        JsonNode hints;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("spring-configuration-metadata.json").isNotNull();
            JsonNode root = JsonMapper.builder().build().readTree(in);
            root.get("properties").forEach(p -> properties.put(p.get("name").asString(), p));
            hints = root.get("hints");
        }
        assertThat(properties.get("sandboxkit.idle-timeout").get("defaultValue").asString()).isEqualTo("30m");
        assertThat(properties.get("sandboxkit.idle-timeout").get("description").asString()).startsWith("How long a sandbox");
        assertThat(properties.get("sandboxkit.store").get("defaultValue").asString()).isEqualTo("memory");
        assertThat(properties.get("sandboxkit.spec.memory").get("defaultValue").asString()).isEqualTo("512MB");
        assertThat(properties.get("sandboxkit.spec.pull-policy").get("defaultValue").asString()).isEqualTo("if-missing");
        assertThat(properties.get("sandboxkit.tools.max-timeout").get("defaultValue").asString()).isEqualTo("10m");
        assertThat(properties.get("sandboxkit.chat-client.default-tools").get("defaultValue").asBoolean()).isFalse();
        assertThat(properties).containsKeys("sandboxkit.driver", "sandboxkit.driver-properties", "sandboxkit.workspace-root",
                "sandboxkit.fail-fast", "sandboxkit.store-file", "sandboxkit.warm-pool.size", "sandboxkit.spec.image",
                "sandboxkit.tools.allowed", "sandboxkit.tools.read-only", "sandboxkit.tools.default-conversation",
                "management.health.sandboxkit.enabled", "management.info.sandboxkit.enabled");
        for (JsonNode p : properties.values()) {
            if (p.get("name").asString().startsWith("sandboxkit.")) {
                assertThat(p.has("description")).as(p.get("name").asString() + " has a description").isTrue();
            }
        }
        List<String> hinted = new ArrayList<>();
        hints.forEach(h -> hinted.add(h.get("name").asString()));
        assertThat(hinted).contains("sandboxkit.driver", "sandboxkit.tools.allowed");
    }
}
