package dev.sandboxkit.spring.boot;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.spring.boot.internal.SandboxFailureAnalyzer;
import dev.sandboxkit.spring.boot.internal.SandboxHealthIndicator;
import dev.sandboxkit.tools.SandboxTools;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Startup with and without an engine, health and info, and what closing the context leaves on the engine. */
class SandboxLifecycleTest {
    private static final String NO_ENGINE = "sandboxkit.docker.host=unix:///nonexistent.sock";

    @TempDir
    Path root;

    private final String fleet = Engine.newFleet();

    private ApplicationContextRunner runner(String... more) {
        return new ApplicationContextRunner().withConfiguration(SandboxAutoConfigurationTest.ALL)
                .withPropertyValues(Engine.base(fleet, root, more));
    }

    @Test
    void aMissingEngineFailsTheStartupSayingWhatToSet() {
        runner(NO_ENGINE).run(context -> {
            assertThat(context).hasFailed();
            var failure = Engine.sandboxFailure(context.getStartupFailure());
            assertThat(failure).isInstanceOf(SandboxUnavailableException.class);
            assertThat(failure.getMessage()).startsWith("The sandbox backend cannot be reached (sandboxkit.driver=docker): ")
                    .contains("/nonexistent.sock")
                    .contains("sandboxkit.docker.host")
                    .contains("sandboxkit.fail-fast=false");
            FailureAnalysis analysis = new SandboxFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(analysis.getDescription()).isEqualTo(failure.getMessage());
            assertThat(analysis.getAction()).contains("sandboxkit.fail-fast=false");
        });
        // The starter's older name still reaches the driver.
        runner("sandboxkit.driver-properties.docker.host=unix:///nonexistent.sock").run(context ->
                assertThat(Engine.sandboxFailure(context.getStartupFailure()).getMessage())
                        .contains("unix:///nonexistent.sock is unreachable"));
    }

    @Test
    void aMissingEngineWithTheDriverDetectedNamesTheBootPropertyAndFailFast() {
        ApplicationContextRunner detecting = new ApplicationContextRunner().withConfiguration(SandboxAutoConfigurationTest.ALL)
                .withPropertyValues(Arrays.stream(Engine.base(fleet, root, NO_ENGINE))
                        .filter(p -> !p.startsWith("sandboxkit.driver=")).toArray(String[]::new));
        detecting.run(context -> {
            assertThat(context).hasFailed();
            String message = Engine.sandboxFailure(context.getStartupFailure()).getMessage();
            assertThat(message).contains("docker: no Docker socket at /nonexistent.sock (from "
                            + "sandboxkit.docker.host")
                    .contains("set sandboxkit.driver=docker and sandboxkit.fail-fast=false")
                    .doesNotContain("-Dsandboxkit.docker.host").doesNotContain("sandbox-docker");
            assertThat(new SandboxFailureAnalyzer().analyze(context.getStartupFailure()).getDescription())
                    .isEqualTo(message);
        });
        detecting.withPropertyValues("sandboxkit.fail-fast=false").run(context -> {
            assertThat(context).hasFailed();
            assertThat(Engine.sandboxFailure(context.getStartupFailure()).getMessage())
                    .contains("sandboxkit.docker.host")
                    .contains("sandboxkit.fail-fast=false starts without the engine only with the driver named: set "
                            + "sandboxkit.driver=docker");
        });
    }

    @Test
    void withoutFailFastTheApplicationStartsHealthIsDownAndTheManagerStartsOnceTheEngineAnswers(@TempDir Path sockets)
            throws Exception {
        Path socket = sockets.resolve("docker.sock"); // missing now; a link to the real socket later
        runner("sandboxkit.fail-fast=false", "sandboxkit.driver-properties.docker.host=unix://" + socket).run(context -> {
            assertThat(context).hasNotFailed();
            HealthIndicator health = context.getBean("sandboxkitHealthIndicator", HealthIndicator.class);
            Health down = health.health();
            assertThat(down.getStatus()).isEqualTo(Status.DOWN);
            assertThat(down.getDetails()).containsEntry("driver", "docker").containsEntry("started", false)
                    .containsKey("error");
            assertThat(down.getDetails().get("error").toString()).contains(socket.toString());
            assertThat(info(context.getBean("sandboxkitInfoContributor", InfoContributor.class)))
                    .containsEntry("started", false).containsEntry("active", 0L);

            SandboxTools tools = context.getBean(SandboxTools.class);
            assertThat(tools.instructions()).contains("/workspace"); // for the system prompt, before the manager starts
            assertThatThrownBy(() -> tools.execute("later", "run_command", "{\"command\":\"echo up\"}"))
                    .isInstanceOf(SandboxUnavailableException.class).matches(e -> ((SandboxUnavailableException) e).isRetryable());

            Files.createSymbolicLink(socket, Path.of("/var/run/docker.sock")); // the engine "comes back"
            Health up = health.health();
            assertThat(up.getStatus()).isEqualTo(Status.UP);
            assertThat(up.getDetails()).containsEntry("started", false);
            assertThat(tools.execute("later", "run_command", "{\"command\":\"echo up\"}").text())
                    .isEqualTo("Exit code: 0\n--- stdout ---\nup\n");
            assertThat(health.health().getDetails()).containsEntry("started", true).containsEntry("active", 1L);
            assertThat(Engine.containers(fleet)).hasSize(1);
        });
        assertThat(Engine.containers(fleet)).isEmpty();
        Files.delete(socket); // the link, not the engine's socket
    }

    @Test
    void healthLogsOncePerChangeOfStateWithoutAStackTrace(@TempDir Path sockets) throws Exception {
        Path socket = sockets.resolve("docker.sock"); // missing now; a link to the real socket later
        Logger logger = (Logger) LoggerFactory.getLogger(SandboxHealthIndicator.class);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        logger.addAppender(logged);
        Level level = logger.getLevel();
        logger.setLevel(Level.DEBUG);
        try {
            runner("sandboxkit.fail-fast=false", "sandboxkit.docker.host=unix://" + socket).run(context -> {
                HealthIndicator health = context.getBean("sandboxkitHealthIndicator", HealthIndicator.class);
                for (int i = 0; i < 3; i++) {
                    assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);
                }
                Files.createSymbolicLink(socket, Path.of("/var/run/docker.sock")); // the engine "comes back"
                for (int i = 0; i < 3; i++) {
                    assertThat(health.health().getStatus()).isEqualTo(Status.UP);
                }
            });
        } finally {
            logger.detachAppender(logged);
            logger.setLevel(level);
            Files.deleteIfExists(socket); // the link, not the engine's socket
        }

        List<ILoggingEvent> loud = logged.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.INFO)).toList();
        assertThat(loud).extracting(ILoggingEvent::getLevel).containsExactly(Level.WARN, Level.INFO);
        assertThat(loud.get(0).getFormattedMessage()).contains("DOWN").contains(socket.toString());
        assertThat(loud.get(1).getFormattedMessage()).contains("UP");
        assertThat(loud).allMatch(e -> e.getThrowableProxy() == null, "no stack trace above debug");
        assertThat(logged.list).filteredOn(e -> e.getLevel() == Level.DEBUG).isNotEmpty(); // the probes in between
    }

    @Test
    void healthIsUpWithTheCountsAndInfoShowsThem() {
        runner().run(context -> {
            SandboxTools tools = context.getBean(SandboxTools.class);
            tools.execute("h1", "run_command", "{\"command\":\"true\"}");
            tools.execute("h2", "run_command", "{\"command\":\"true\"}");
            context.getBean(SandboxManager.class).destroy(tools.sessionId("h2"));

            Health health = context.getBean("sandboxkitHealthIndicator", HealthIndicator.class).health();
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsEntry("driver", "docker").containsEntry("started", true)
                    .containsEntry("active", 1L).containsEntry("suspended", 0L).containsEntry("pooled", 0L)
                    .containsEntry("instanceId", context.getBean(SandboxManager.class).instanceId());

            Map<String, Object> info = info(context.getBean("sandboxkitInfoContributor", InfoContributor.class));
            assertThat(info).containsEntry("active", 1L).containsEntry("suspended", 0L).containsEntry("pooled", 0L);
            assertThat(info.get("totals")).isEqualTo(Map.of("created", 2L, "resumed", 0L, "idleReaped", 0L,
                    "lifetimeKilled", 0L, "destroyed", 1L, "orphansRemoved", 0L, "poolHits", 0L, "poolMisses", 0L));
        });
    }

    @Test
    void healthAndInfoCanBeSwitchedOffAndAreAbsentWithoutActuator() {
        runner("management.health.sandboxkit.enabled=false", "management.info.sandboxkit.enabled=false").run(context -> {
            assertThat(context).hasSingleBean(SandboxManager.class);
            assertThat(context).doesNotHaveBean("sandboxkitHealthIndicator");
            assertThat(context).doesNotHaveBean("sandboxkitInfoContributor");
        });
        runner().withClassLoader(new FilteredClassLoader(HealthIndicator.class, InfoContributor.class)).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(SandboxManager.class);
            assertThat(context).doesNotHaveBean("sandboxkitHealthIndicator");
            assertThat(context).doesNotHaveBean("sandboxkitInfoContributor");
        });
    }

    @Test
    void closingTheContextLeavesNoContainerAndKeepsTheWorkdirs() throws Exception {
        runner("sandboxkit.warm-pool.size=1").run(context -> {
            SandboxManager manager = context.getBean(SandboxManager.class);
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (manager.stats().poolSize() < 1) { // the pool fills in the background
                assertThat(System.nanoTime()).as("warm pool filled").isLessThan(deadline);
                Thread.sleep(50);
            }
            SandboxTools tools = context.getBean(SandboxTools.class);
            tools.execute("c1", "write_file", "{\"path\":\"keep.txt\",\"content\":\"1\"}");
            tools.execute("c2", "run_command", "{\"command\":\"sleep 300 &\"}");
            assertThat(manager.stats().poolHits()).isEqualTo(1);
            while (manager.stats().poolSize() < 1) { // refilled after the checkout
                assertThat(System.nanoTime()).as("warm pool refilled").isLessThan(deadline);
                Thread.sleep(50);
            }
            assertThat(Engine.containers(fleet)).hasSize(3); // two sessions and the pooled one
        });
        assertThat(Engine.containers(fleet)).isEmpty();
        try (var workdirs = Files.list(root)) {
            assertThat(workdirs.filter(Files::isDirectory).count()).isGreaterThanOrEqualTo(2); // persistent: kept
        }
    }

    private static Map<String, Object> info(InfoContributor contributor) {
        Info.Builder b = new Info.Builder();
        contributor.contribute(b);
        @SuppressWarnings("unchecked")
        Map<String, Object> sandboxkit = (Map<String, Object>) b.build().getDetails().get("sandboxkit");
        return sandboxkit;
    }
}
