package dev.sandboxkit.spring.boot;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.docker.DockerDriverProvider;
import dev.sandboxkit.micrometer.SandboxMetrics;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.spring.ai.SandboxToolCallbackProvider;
import dev.sandboxkit.spring.ai.SandboxToolMethods;
import dev.sandboxkit.spring.boot.internal.SandboxBackend;
import dev.sandboxkit.spring.boot.internal.SandboxFailureAnalyzer;
import dev.sandboxkit.store.jdbc.JdbcDialect;
import dev.sandboxkit.store.jdbc.JdbcSessionStore;
import dev.sandboxkit.tools.SandboxTools;
import dev.sandboxkit.tools.SessionResolver;
import dev.sandboxkit.tools.ToolDefinition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The auto-configuration in {@link ApplicationContextRunner}s on the real engine: what the properties bind to,
 * what backs off, and what a bad value says.
 */
class SandboxAutoConfigurationTest {
    static final AutoConfigurations ALL = AutoConfigurations.of(SandboxAutoConfiguration.class,
            SandboxToolsAutoConfiguration.class, SandboxMetricsAutoConfiguration.class,
            SandboxHealthAutoConfiguration.class, SandboxInfoAutoConfiguration.class);

    @TempDir
    Path root;

    private final String fleet = Engine.newFleet();

    private ApplicationContextRunner runner(String... more) {
        return new ApplicationContextRunner().withConfiguration(ALL).withPropertyValues(Engine.base(fleet, root, more));
    }

    @Test
    void everyPropertyGroupReachesTheManagerTheSpecAndTheTools() {
        runner("sandboxkit.idle-timeout=45m",
                "sandboxkit.instance-id=boot-binding-1",
                "sandboxkit.lease-duration=20",
                "sandboxkit.max-file-size=5MB",
                "sandboxkit.spec.env.LANG=C.UTF-8",
                "sandboxkit.spec.user=1000:1000",
                "sandboxkit.spec.memory=256MB",
                "sandboxkit.spec.cpus=1.5",
                "sandboxkit.spec.pids-limit=100",
                "sandboxkit.spec.tmp-size=16MB",
                "sandboxkit.spec.add-capabilities=NET_BIND_SERVICE",
                "sandboxkit.spec.read-only-root-filesystem=true",
                "sandboxkit.spec.labels.team=ai",
                "sandboxkit.spec.max-lifetime=2h",
                "sandboxkit.spec.post-create=echo ready",
                "sandboxkit.spec.post-create-timeout=30",
                "sandboxkit.spec.http-proxy=http://proxy:3128",
                "sandboxkit.spec.no-proxy=localhost",
                "sandboxkit.spec.extra-ca-certificates=classpath:test-ca.pem",
                "sandboxkit.spec.exec-mode=plain",
                "sandboxkit.tools.read-only=true",
                "sandboxkit.tools.allowed=read_file,list_files",
                "sandboxkit.tools.default-timeout=5",
                "sandboxkit.tools.max-timeout=1m",
                "sandboxkit.tools.read-limit=2KB",
                "sandboxkit.tools.session-prefix=chat-",
                "sandboxkit.tools.default-conversation=cli",
                "sandboxkit.spec.runtime=runsc",
                "sandboxkit.spec.template=" + root,
                "sandboxkit.spec.init=false")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    SandboxConfig c = context.getBean(SandboxConfig.class);
                    assertThat(c.getLeaseDuration()).isEqualTo(Duration.ofSeconds(20)); // no unit: seconds
                    assertThat(c.getMaxFileSize()).isEqualTo(DataSize.ofMegabytes(5).toBytes());

                    SandboxManager manager = context.getBean(SandboxManager.class);
                    assertThat(manager.instanceId()).isEqualTo("boot-binding-1");
                    assertThat(manager.driverName()).isEqualTo("docker");
                    assertThat(context.getBean(SandboxBackend.class).workspaceRoot()).isEqualTo(root.toAbsolutePath());

                    SandboxSpec spec = context.getBean(SandboxSpec.class);
                    assertThat(spec.image()).isEqualTo(Engine.IMAGE);
                    assertThat(spec.pullPolicy()).isEqualTo(PullPolicy.NEVER);
                    assertThat(spec.env()).isEqualTo(Map.of("LANG", "C.UTF-8"));
                    assertThat(spec.user()).isEqualTo("1000:1000");
                    assertThat(spec.network()).isEqualTo("none");
                    assertThat(spec.memoryBytes()).isEqualTo(256L * 1024 * 1024);
                    assertThat(spec.cpus()).isEqualTo(1.5);
                    assertThat(spec.pidsLimit()).isEqualTo(100);
                    assertThat(spec.tmpSizeBytes()).isEqualTo(16L * 1024 * 1024);
                    assertThat(spec.addCapabilities()).containsExactly("NET_BIND_SERVICE");
                    assertThat(spec.readOnlyRootFilesystem()).isTrue();
                    assertThat(spec.labels()).isEqualTo(Map.of("team", "ai"));
                    assertThat(spec.maxLifetime()).isEqualTo(Duration.ofHours(2));
                    assertThat(spec.postCreate().command()).containsExactly("/bin/sh", "-c", "echo ready");
                    assertThat(spec.postCreate().timeout()).isEqualTo(Duration.ofSeconds(30));
                    assertThat(spec.proxy()).isEqualTo(new SandboxSpec.Proxy("http://proxy:3128", null, "localhost"));
                    assertThat(spec.extraCaCertificates()).startsWith("-----BEGIN CERTIFICATE-----");
                    assertThat(spec.execMode()).isEqualTo(ExecMode.PLAIN);
                    assertThat(spec.runtime()).isEqualTo("runsc"); // every key of the library, not a Boot subset
                    assertThat(spec.template()).isEqualTo(dev.sandboxkit.WorkspaceTemplate.directory(root));
                    assertThat(spec.init()).isFalse();
                    assertThat(spec.dropAllCapabilities()).isTrue();
                    assertThat(spec.noNewPrivileges()).isTrue();
                    SandboxTools tools = context.getBean(SandboxTools.class);
                    // The idle timeout reached the manager: the model is told about it.
                    assertThat(manager.idleTimeout()).isEqualTo(Duration.ofMinutes(45));
                    assertThat(tools.instructions()).contains("After 45 minutes without activity")
                            .contains("at most 2 hours");
                    assertThat(tools.readOnly()).isTrue();
                    assertThat(tools.spec()).isSameAs(spec);
                    assertThat(tools.definitions()).extracting(ToolDefinition::name).containsExactly("read_file", "list_files");
                    assertThat(tools.definition("read_file").orElseThrow().description()).contains("at most 2,048 bytes");
                    assertThat(tools.sessionId("x")).isEqualTo("chat-x");
                    assertThat(context.getBean(SandboxToolCallbackProvider.class).defaultConversation()).isEqualTo("cli");
                    assertThat(context.getBean(SandboxToolCallbackProvider.class).getToolCallbacks()).hasSize(2);
                });
    }

    @Test
    void durationsWithoutAUnitAreSecondsAndTheToolTimeoutsReachTheModel() {
        runner("sandboxkit.tools.default-timeout=5", "sandboxkit.tools.max-timeout=1m", "sandboxkit.tools.output-limit=1KB")
                .run(context -> assertThat(context.getBean(SandboxTools.class).definition("run_command").orElseThrow()
                        .description()).contains("(default 5, at most 60)").contains("Output over 1,024 bytes"));
    }

    @Test
    void theStartersOwnOptionsAndTheLibrarysDefaults() {
        SandboxProperties p = new SandboxProperties();
        assertThat(p.getStore()).isEqualTo(SandboxProperties.StoreType.MEMORY);
        assertThat(p.isFailFast()).isTrue();
        assertThat(p.isEnabled()).isTrue();
        assertThat(p.getTools().isEnabled()).isTrue();
        assertThat(p.getChatClient().isDefaultTools()).isFalse();
        // Everything else is the library's: the bean differs from the defaults only in what the properties name.
        runner().run(context -> assertThat(context.getBean(SandboxConfig.class).changes().keySet().stream()
                .filter(k -> !k.startsWith("test."))) // the build's -Dsandboxkit.test.* properties
                .containsExactlyInAnyOrder("driver", "fleet", "workspace-root", "spec.image", "spec.pull-policy"));
    }

    @Test
    void withoutAnImageThereIsAManagerButNoSpecAndNoTools() {
        new ApplicationContextRunner().withConfiguration(ALL)
                .withPropertyValues("sandboxkit.driver=docker", "sandboxkit.fleet=" + fleet, "sandboxkit.workspace-root=" + root)
                .run(context -> {
                    assertThat(context).hasSingleBean(SandboxManager.class);
                    assertThat(context).doesNotHaveBean(SandboxSpec.class);
                    assertThat(context).doesNotHaveBean(SandboxTools.class);
                    assertThat(context).doesNotHaveBean(SandboxToolCallbackProvider.class);
                });
    }

    @Test
    void disabledConfiguresNothing() {
        runner("sandboxkit.enabled=false").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(SandboxManager.class);
            assertThat(context).doesNotHaveBean(SandboxProperties.class);
            assertThat(context).doesNotHaveBean(SandboxTools.class);
        });
        runner("sandboxkit.tools.enabled=false").run(context -> {
            assertThat(context).hasSingleBean(SandboxManager.class);
            assertThat(context).doesNotHaveBean(SandboxTools.class);
            assertThat(context).doesNotHaveBean(SandboxToolMethods.class);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnManager {
        @Bean(destroyMethod = "close")
        SandboxManager myManager(@org.springframework.beans.factory.annotation.Value("${test.root}") Path root) {
            return SandboxManager.builder().driver("docker").workspaceRoot(root).fleet("boot-own-manager")
                    .instanceId("my-own-manager").build();
        }
    }

    @Test
    void everyBeanBacksOffForTheApplicationsOwn() {
        runner("test.root=" + root).withUserConfiguration(OwnManager.class).run(context -> {
            assertThat(context).hasSingleBean(SandboxManager.class);
            assertThat(context.getBean(SandboxManager.class).instanceId()).isEqualTo("my-own-manager");
            assertThat(context).doesNotHaveBean(SandboxBackend.class);
            assertThat(context.getBean(SandboxTools.class).manager().instanceId()).isEqualTo("my-own-manager");
            // The health indicator cannot ping an engine it did not create; it says so.
            assertThat(context.getBean("sandboxkitHealthIndicator", org.springframework.boot.health.contributor.HealthIndicator.class)
                    .health().getDetails()).containsEntry("engine", "not checked: the application built its own SandboxManager");
        });

        SandboxSpec mySpec = SandboxSpec.builder().image(Engine.IMAGE).pullPolicy(PullPolicy.NEVER).memoryBytes(0).build();
        runner().withBean(SandboxSpec.class, () -> mySpec).run(context -> {
            assertThat(context.getBean(SandboxSpec.class)).isSameAs(mySpec);
            assertThat(context.getBean(SandboxTools.class).spec()).isSameAs(mySpec);
        });

        runner().withUserConfiguration(OwnTools.class).run(context -> {
            assertThat(context.getBean(SandboxTools.class).readOnly()).isTrue();
            assertThat(context.getBean(SandboxToolCallbackProvider.class).tools().readOnly()).isTrue();
            assertThat(context.getBean(SandboxToolCallbackProvider.class)).isSameAs(context.getBean("myProvider"));
            assertThat(context.getBean(SandboxToolMethods.class)).isSameAs(context.getBean("myMethods"));
        });

        SessionResolver mine = id -> "mine-" + id;
        runner().withBean(SessionResolver.class, () -> mine)
                .run(context -> assertThat(context.getBean(SandboxTools.class).sessionId("7")).isEqualTo("mine-7"));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnTools {
        @Bean
        SandboxTools myTools(SandboxManager manager, SandboxSpec spec) {
            return SandboxTools.builder(manager).spec(spec).readOnly().build();
        }

        @Bean
        SandboxToolCallbackProvider myProvider(SandboxTools tools) {
            return SandboxToolCallbackProvider.of(tools);
        }

        @Bean
        SandboxToolMethods myMethods(SandboxTools tools) {
            return new SandboxToolMethods(tools);
        }
    }

    @Test
    void anApplicationsDriverAndStoreAreUsedNotClosed(@TempDir Path other) {
        SandboxDriver myDriver = new DockerDriverProvider().create(new DriverContext("boot-own-driver", other,
                Clock.systemUTC(), Map.of()));
        SessionStore myStore = JdbcSessionStore.h2(other.resolve("my-sessions"));
        try {
            runner("sandboxkit.instance-id=boot-own-driver")
                    // Registered without a destroy method, as an application's bean from elsewhere would be.
                    .withBean(SandboxDriver.class, () -> myDriver, bd -> bd.setDestroyMethodName(""))
                    .withBean(SessionStore.class, () -> myStore, bd -> bd.setDestroyMethodName(""))
                    .run(context -> {
                        assertThat(context.getBean(SandboxBackend.class).driver()).isSameAs(myDriver);
                        SandboxTools tools = context.getBean(SandboxTools.class);
                        tools.execute("own", "write_file", "{\"path\":\"a.txt\",\"content\":\"x\"}");
                        assertThat(myStore.find(tools.sessionId("own"))).isPresent();
                        assertThat(context).doesNotHaveBean("sandboxSessionStore");
                    });
            myDriver.ping(); // still open after the context closed
            assertThat(myStore.find("conv-own")).isPresent();
        } finally {
            myDriver.close();
            myStore.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            sandboxkit.idle-timeout=-5s                            | sandboxkit.idle-timeout: expected a duration (30s, 10m, 1h30m, 500ms, PT30S), got '-5s'
            sandboxkit.idle-timeout=0                              | sandboxkit.idle-timeout: must be positive, got 0s
            sandboxkit.reaper-interval=-1                          | sandboxkit.reaper-interval: expected a duration
            sandboxkit.lease-duration=0ms                          | sandboxkit.lease-duration: must be positive
            sandboxkit.driver=dockr                                | no sandbox driver named 'dockr' (sandboxkit.driver); did you mean docker? Drivers on the classpath: docker, fake.
            sandboxkit.fleet=no spaces                             | sandboxkit.fleet: 1-63 characters
            sandboxkit.instance-id=a/b                             | sandboxkit.instance-id: 1-63 characters
            sandboxkit.max-file-entries=0                          | sandboxkit.max-file-entries: must be at least 1, got 0
            sandboxkit.spec.image=Not An Image                     | sandboxkit.spec.image: image must be a reference
            sandboxkit.spec.memory=-1MB                            | sandboxkit.spec.memory: expected a size
            sandboxkit.spec.cpus=-1                                | sandboxkit.spec.cpus: expected a number of at least 0
            sandboxkit.spec.user=root                              | sandboxkit.spec.user: user must be uid or uid:gid
            sandboxkit.spec.max-lifetime=-1h                       | sandboxkit.spec.max-lifetime: expected a duration
            sandboxkit.spec.no-proxy=localhost                     | sandboxkit.spec.no-proxy: needs sandboxkit.spec.http-proxy or sandboxkit.spec.https-proxy
            sandboxkit.spec.extra-ca-certificates=classpath:nope.pem | sandboxkit.spec.extra-ca-certificates: cannot read
            sandboxkit.spec.labels.dev.sandboxkit.x=y              | sandboxkit.spec.labels.*: label prefix dev.sandboxkit. is reserved
            sandboxkit.spec.runtime=no such runtime                | sandboxkit.spec.runtime: runtime must be a runtime name
            sandboxkit.warm-pool.size=-1                           | sandboxkit.warm-pool.size: must be at least 0, got -1
            sandboxkit.warm-pool.size=2;sandboxkit.warm-pool.max-size=1 | sandboxkit.warm-pool.max-size: must be at least sandboxkit.warm-pool.size (2), got 1
            sandboxkit.tools.allowed=rm_rf                         | sandboxkit.tools.allowed: no tool named 'rm_rf'; the tools are run_command, read_file
            sandboxkit.tools.read-only=true;sandboxkit.tools.allowed=run_command | sandboxkit.tools.allowed: run_command changes the workspace
            sandboxkit.tools.default-timeout=0                     | sandboxkit.tools.default-timeout: must be positive
            sandboxkit.tools.default-timeout=1500ms                | sandboxkit.tools.default-timeout: defaultTimeout must be whole seconds
            sandboxkit.tools.default-timeout=5m;sandboxkit.tools.max-timeout=1m | sandboxkit.tools.default-timeout: 5m exceeds sandboxkit.tools.max-timeout (1m)
            sandboxkit.tools.output-limit=10B                      | sandboxkit.tools.output-limit: outputLimit must be at least 256
            sandboxkit.tools.session-prefix=-x                     | sandboxkit.tools.session-prefix:
            sandboxkit.idle-timout=5m                              | sandboxkit.idle-timout: no such setting; did you mean sandboxkit.idle-timeout?
            sandboxkit.store=h2                                    | Invalid property sandboxkit.store-file: it is required with sandboxkit.store=h2
            sandboxkit.store=jdbc                                  | Invalid property sandboxkit.store: jdbc needs one DataSource bean
            """)
    void aBadValueFailsTheStartupNamingTheProperty(String properties, String message) {
        runner(properties.split(";")).run(context -> {
            assertThat(context).hasFailed();
            SandboxException failure = Engine.sandboxFailure(context.getStartupFailure());
            assertThat(failure).isInstanceOf(SandboxConfigurationException.class);
            assertThat(failure.getMessage()).startsWith(message);
            FailureAnalysis analysis = new SandboxFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(analysis.getDescription()).startsWith(message);
            assertThat(analysis.getAction()).contains("sandboxkit.*");
        });
        assertThat(Engine.containers(fleet)).isEmpty();
    }

    @Test
    void anArchiveStoreBeanWithArchiveAfterTurnsTheArchiveTierOn(@TempDir Path archive) {
        // Without a store the core refuses archive-after, so a start with the bean shows the bean reached the manager.
        runner("sandboxkit.archive-after=2h").run(context -> {
            assertThat(context).hasFailed();
            assertThat(Engine.sandboxFailure(context.getStartupFailure()).getMessage())
                    .contains("sandboxkit.archive-after is set (PT2H) but there is no archive store");
        });
        runner("sandboxkit.archive-after=2h")
                .withBean(dev.sandboxkit.spi.ArchiveStore.class, () -> dev.sandboxkit.spi.ArchiveStore.directory(archive))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(SandboxManager.class).archiveIdle()).as("nothing suspended yet")
                            .isZero();
                });
    }

    @Test
    void aValueThatDoesNotParseFailsInBootsBinderNamingTheProperty() {
        runner("sandboxkit.idle-timeout=soon").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("sandboxkit.idle-timeout")
                    .hasStackTraceContaining("soon");
        });
        runner("sandboxkit.store=mongo").run(context -> assertThat(context.getStartupFailure())
                .hasStackTraceContaining("sandboxkit.store").hasStackTraceContaining("mongo"));
    }

    @Test
    void anH2FileStoreKeepsSessionsAcrossARestart(@TempDir Path db) {
        ApplicationContextRunner h2 = runner("sandboxkit.store=h2", "sandboxkit.store-file=" + db.resolve("sessions"));
        h2.run(context -> {
            SessionStore store = context.getBean(SessionStore.class);
            assertThat(store).isInstanceOf(JdbcSessionStore.class);
            assertThat(((JdbcSessionStore) store).dialect()).isEqualTo(JdbcDialect.H2);
            SandboxTools tools = context.getBean(SandboxTools.class);
            assertThat(tools.execute("restart", "write_file", "{\"path\":\"kept.txt\",\"content\":\"before\"}").error())
                    .isFalse();
        });
        // A new application on the same store and workspace root finds the conversation and its file.
        h2.run(context -> {
            SandboxTools tools = context.getBean(SandboxTools.class);
            assertThat(context.getBean(SandboxManager.class).session(tools.sessionId("restart"))).isPresent();
            assertThat(tools.execute("restart", "read_file", "{\"path\":\"kept.txt\"}").text()).isEqualTo("before");
        });
        assertThat(Engine.containers(fleet)).isEmpty();
    }

    @Test
    void theJdbcStoreUsesTheApplicationsDataSource() {
        org.h2.jdbcx.JdbcDataSource dataSource = new org.h2.jdbcx.JdbcDataSource();
        dataSource.setURL("jdbc:h2:mem:boot-" + fleet + ";DB_CLOSE_DELAY=-1");
        runner("sandboxkit.store=jdbc").withBean(javax.sql.DataSource.class, () -> dataSource).run(context -> {
            assertThat(context.getBean(SessionStore.class)).isInstanceOf(JdbcSessionStore.class);
            SandboxTools tools = context.getBean(SandboxTools.class);
            tools.execute("ds", "list_files", "{}");
            try (var c = dataSource.getConnection(); var st = c.prepareStatement(
                    "select count(*) from sandboxkit_sessions where session_id = ?")) {
                st.setString(1, tools.sessionId("ds"));
                try (var rs = st.executeQuery()) {
                    rs.next();
                    assertThat(rs.getInt(1)).isEqualTo(1);
                }
            }
        });
    }

    @Test
    void aStoreNeedsTheJdbcModule() {
        runner("sandboxkit.store=h2", "sandboxkit.store-file=" + root.resolve("db"))
                .withClassLoader(new org.springframework.boot.test.context.FilteredClassLoader(JdbcSessionStore.class))
                .run(context -> assertThat(Engine.sandboxFailure(context.getStartupFailure()).getMessage())
                        .isEqualTo("Invalid property sandboxkit.store: h2 needs dev.sandboxkit:sandbox-store-jdbc on the "
                                + "classpath (and the database's JDBC driver)"));
    }

    @Test
    void metricsBindWhenTheApplicationHasAMeterRegistry() {
        runner().run(context -> assertThat(context).doesNotHaveBean(SandboxMetrics.class));

        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        runner().withBean(io.micrometer.core.instrument.MeterRegistry.class, () -> registry).run(context -> {
            assertThat(context).hasSingleBean(SandboxMetrics.class);
            context.getBean(SandboxTools.class).execute("metrics", "run_command", "{\"command\":\"true\"}");
            assertThat(registry.get("sandboxkit.events").tag("event", "created").counter().count()).isEqualTo(1);
            assertThat(registry.get("sandboxkit.sandboxes.active").gauge().value()).isEqualTo(1);
            assertThat(registry.get("sandboxkit.exec").timer().count()).isEqualTo(1);
        });

        // With Boot's own metrics auto-configuration the registry comes from there (ordering).
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(
                        org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration.class,
                        org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration.class,
                        org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration.class))
                .withConfiguration(ALL).withPropertyValues(Engine.base(fleet, root)).run(context -> {
                    assertThat(context).hasSingleBean(SandboxMetrics.class);
                    io.micrometer.core.instrument.MeterRegistry boot = context.getBean(io.micrometer.core.instrument.MeterRegistry.class);
                    assertThat(boot.find("sandboxkit.sessions.suspended").gauge()).isNotNull();
                });
    }
}
