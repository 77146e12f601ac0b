package dev.sandboxkit.spring.boot;

import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.testkit.ConfigSamples;
import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.testkit.IsolatedSandboxkitProperties;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The parity of the Boot door with the library's configuration ({@link SandboxConfig}): no property means the
 * library's defaults, every key is reachable as {@code sandboxkit.<key>} and means what it means to
 * {@link SandboxConfig#set}, {@code -Dsandboxkit.*} ({@link SandboxConfig#fromSystemProperties()}) and the MCP server's
 * {@code --set} (ServerConfigTest), and a property that is no key fails the startup naming the nearest one. No engine
 * is needed: the application's own manager (on the test kit's fake driver) leaves only the configuration to the
 * starter.
 */
// The build passes -Dsandboxkit.test.image to the tests: each test starts without any sandboxkit.* property.
@ExtendWith(IsolatedSandboxkitProperties.class)
class BootConfigParityTest {
    @TempDir
    Path root;

    private ApplicationContextRunner runner(String... properties) {
        return new ApplicationContextRunner().withConfiguration(SandboxAutoConfigurationTest.ALL)
                // Not builder(): it would read the -Dsandboxkit.* properties this test sets for the starter.
                .withBean(SandboxManager.class, () -> SandboxManager.builder(new SandboxConfig()).driver(new FakeDriver())
                        .workspaceRoot(root).build(), bd -> bd.setDestroyMethodName("close"))
                .withPropertyValues(properties);
    }

    /** The configuration bean of an application started with these properties. */
    private SandboxConfig boot(String... properties) {
        return boot(runner(properties));
    }

    private static SandboxConfig boot(ApplicationContextRunner runner) {
        AtomicReference<SandboxConfig> config = new AtomicReference<>();
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            config.set(context.getBean(SandboxConfig.class));
        });
        return config.get();
    }

    private static String sampleKey(SandboxConfig.Key k) {
        return k.name().endsWith(".*") ? k.name().replace("*", "SAMPLE") : k.name();
    }

    @Test
    @DisplayName("no property: the library's defaults, field by field; the starter names no fleet")
    void noPropertyIsTheLibrarysDefaults() {
        SandboxConfig config = boot();
        assertThat(config.changes()).isEmpty();
        SandboxConfig defaults = new SandboxConfig();
        for (SandboxConfig.Key k : SandboxConfig.keys()) {
            if (!k.name().endsWith(".*")) {
                assertThat(config.get(k.name())).as(k.property()).isEqualTo(defaults.get(k.name()))
                        .isEqualTo(k.defaultValue());
            }
        }
        // The Boot-only options are not library settings: setting all of them changes none.
        assertThat(boot("sandboxkit.fail-fast=false", "sandboxkit.store=memory", "sandboxkit.store-auto-migrate=false",
                "sandboxkit.tools.rethrow-sandbox-exceptions=false", "sandboxkit.chat-client.default-tools=true",
                "sandboxkit.chat-client.conversation-advisor=false").changes()).isEmpty();
    }

    @Test
    @DisplayName("every key, one at a time: a Boot property, -D, SandboxConfig.set and fromSystemProperties agree")
    void everyKeyIsReachableAndMeansTheSame() {
        int checked = 0;
        for (SandboxConfig.Key k : SandboxConfig.keys()) {
            String key = sampleKey(k);
            String sample = ConfigSamples.sample(k);
            SandboxConfig direct = new SandboxConfig().set(key, sample);
            assertThat(direct.get(key)).as(key).isNotNull().isNotEqualTo(new SandboxConfig().get(key));

            assertThat(boot(SandboxConfig.PREFIX + key + "=" + sample).changes()).as("Boot property " + key)
                    .isEqualTo(direct.changes());
            System.setProperty(SandboxConfig.PREFIX + key, sample);
            try {
                assertThat(SandboxConfig.fromSystemProperties().changes()).as("-D" + key).isEqualTo(direct.changes());
                assertThat(boot().changes()).as("-D" + key + " in a Boot application").isEqualTo(direct.changes());
            } finally {
                System.clearProperty(SandboxConfig.PREFIX + key);
            }
            checked++;
        }
        assertThat(checked).isEqualTo(SandboxConfig.keys().size());
    }

    @Test
    @DisplayName("every key at once: Boot properties, -D and builder calls build the same configuration and manager")
    void everyKeyAtOnce() {
        Map<String, String> samples = new TreeMap<>();
        List<String> properties = new ArrayList<>();
        for (SandboxConfig.Key k : SandboxConfig.keys()) {
            if (k.name().equals("spec.egress")) {
                continue; // excludes the samples of spec.network and spec.http-proxy: checked alone above
            }
            samples.put(sampleKey(k), ConfigSamples.sample(k));
            properties.add(SandboxConfig.PREFIX + sampleKey(k) + "=" + ConfigSamples.sample(k));
        }
        SandboxConfig direct = SandboxConfig.from(samples);
        assertThat(boot(properties.toArray(String[]::new)).changes()).isEqualTo(direct.changes());
        samples.forEach((k, v) -> System.setProperty(SandboxConfig.PREFIX + k, v));
        assertThat(SandboxConfig.fromSystemProperties().changes()).isEqualTo(direct.changes());
        assertThat(boot().changes()).isEqualTo(direct.changes());
    }

    @Test
    @DisplayName("one setting through builder calls, -D and Boot gives the same manager")
    void oneSettingGivesTheSameManager() {
        SandboxConfig fromBuilder;
        try (SandboxManager m = SandboxManager.builder().driver(new FakeDriver()).workspaceRoot(root)
                .idleTimeout(Duration.ofMinutes(7)).build()) {
            assertThat(m.idleTimeout()).isEqualTo(Duration.ofMinutes(7));
            fromBuilder = new SandboxConfig();
            fromBuilder.setIdleTimeout(m.idleTimeout());
        }
        SandboxConfig fromBoot = boot("sandboxkit.idle-timeout=7m");
        System.setProperty("sandboxkit.idle-timeout", "420");
        SandboxConfig fromProperty = SandboxConfig.fromSystemProperties();
        assertThat(fromBoot.changes()).isEqualTo(fromBuilder.changes()).isEqualTo(fromProperty.changes())
                .isEqualTo(Map.of("idle-timeout", "7m"));
        try (SandboxManager m = SandboxManager.builder(fromBoot).driver(new FakeDriver()).workspaceRoot(root).build()) {
            assertThat(m.idleTimeout()).isEqualTo(Duration.ofMinutes(7));
        }
    }

    @Test
    @DisplayName("Boot's relaxed names: camelCase, indexed lists, environment variables (both spellings), maps keep case")
    void relaxedNames() {
        SandboxConfig c = boot("sandboxkit.idleTimeout=5m", "sandboxkit.tools.allowed[0]=read_file",
                "sandboxkit.tools.allowed[1]=list_files", "sandboxkit.spec.env.LANG=C.UTF-8",
                "sandboxkit.spec.labels.team.name=ai", "sandboxkit.spec.runtime=runsc",
                "sandboxkit.spec.template=snapshot:snap-1", "sandboxkit.warm-pool.max-size=3");
        assertThat(c.getIdleTimeout()).isEqualTo(Duration.ofMinutes(5));
        assertThat(c.getToolsAllowed()).containsExactly("read_file", "list_files");
        assertThat(c.getEnv()).isEqualTo(Map.of("LANG", "C.UTF-8"));
        assertThat(c.getLabels()).isEqualTo(Map.of("team.name", "ai"));
        assertThat(c.get("spec.runtime")).isEqualTo("runsc");
        assertThat(c.get("spec.template")).isEqualTo("snapshot:snap-1");
        assertThat(c.get("warm-pool.max-size")).isEqualTo("3");

        SandboxConfig env = boot(runner().withInitializer(ctx -> ctx.getEnvironment().getPropertySources().addFirst(
                new SystemEnvironmentPropertySource("test-systemEnvironment", Map.of("SANDBOXKIT_IDLETIMEOUT", "6m",
                        "SANDBOXKIT_LEASE_DURATION", "40s", "SANDBOXKIT_WARM_POOL_WHEN_EMPTY", "wait",
                        "SANDBOXKIT_DOCKER_HOST", "unix:///x.sock", "SANDBOXKIT_FAIL_FAST", "true")))));
        assertThat(env.getIdleTimeout()).isEqualTo(Duration.ofMinutes(6));
        assertThat(env.getLeaseDuration()).isEqualTo(Duration.ofSeconds(40));
        assertThat(env.get("warm-pool.when-empty")).isEqualTo("wait");
        assertThat(env.getDriverSettings()).isEqualTo(Map.of("docker.host", "unix:///x.sock"));
    }

    @Test
    @DisplayName("driver settings: sandboxkit.<driver>.<setting>, and the older sandboxkit.driver-properties.*")
    void driverSettings() {
        assertThat(boot("sandboxkit.docker.host=unix:///a.sock").getDriverSettings())
                .isEqualTo(Map.of("docker.host", "unix:///a.sock"));
        assertThat(boot("sandboxkit.driver-properties.docker.host=unix:///b.sock").getDriverSettings())
                .isEqualTo(Map.of("docker.host", "unix:///b.sock"));
        assertThat(boot("sandboxkit.driver-properties.docker.host=unix:///old.sock",
                "sandboxkit.docker.host=unix:///new.sock").getDriverSettings())
                .as("the newer name wins").isEqualTo(Map.of("docker.host", "unix:///new.sock"));
        assertThat(boot("sandboxkit.kubernetes.namespace=agents").getDriverSettings())
                .as("a driver that is not on the class path keeps its settings").containsEntry("kubernetes.namespace", "agents");
    }

    @Test
    @DisplayName("a property that is no key fails the startup, naming it and the nearest key")
    void unknownPropertiesFail() {
        failsWith(runner("sandboxkit.idle-timout=5m"), "sandboxkit.idle-timout: no such setting; did you mean "
                + "sandboxkit.idle-timeout?");
        failsWith(runner("sandboxkit.spec.imag=x"), "sandboxkit.spec.imag: no such setting; did you mean "
                + "sandboxkit.spec.image?");
        failsWith(runner("sandboxkit.spec.runtme=runsc"), "did you mean sandboxkit.spec.runtime?");
        failsWith(runner("sandboxkit.tools.allowd=read_file"), "did you mean sandboxkit.tools.allowed?");
        failsWith(runner("sandboxkit.fail-fst=false"), "did you mean sandboxkit.fail-fast?");
        failsWith(runner("sandboxkit.idle-timeout.x=5m"), "sandboxkit.idle-timeout.x: no such setting");
        failsWith(runner("sandboxkit.warm-pool.sise=2"), "did you mean sandboxkit.warm-pool.size?");
        failsWith(runner("sandboxkit.spc.image=x"), "sandboxkit.spc.image: no such setting; did you mean "
                + "sandboxkit.spec.image? (it would be a setting of a driver named 'spc', and there is none)");
        failsWith(runner("sandboxkit.nothing-like-it=1"), "sandboxkit.nothing-like-it: no such setting; the properties "
                + "are listed in docs/configuration.md");
        failsWith(runner("sandboxkit.idle-timeout=soon"), "sandboxkit.idle-timeout: expected a duration");
    }

    private static void failsWith(ApplicationContextRunner runner, String message) {
        runner.run(context -> {
            assertThat(context).hasFailed();
            assertThat(Engine.sandboxFailure(context.getStartupFailure()))
                    .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining(message);
        });
    }
}
