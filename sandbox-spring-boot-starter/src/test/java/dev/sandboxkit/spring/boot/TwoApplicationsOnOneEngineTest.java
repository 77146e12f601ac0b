package dev.sandboxkit.spring.boot;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.tools.SandboxTools;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 29 A: applications that share one engine but not a store never remove each other's live containers, whatever
 * fleet they name. The sweeping side runs with a 1 s grace and a 1 s sweep interval, and sweeps by hand too, so that
 * anything it could wrongly remove would be gone within the test.
 */
class TwoApplicationsOnOneEngineTest {
    private static final SandboxSpec SPEC = SandboxSpec.builder().image(Engine.IMAGE)
            .pullPolicy(dev.sandboxkit.PullPolicy.NEVER).build();

    @TempDir
    Path rootA;
    @TempDir
    Path rootB;

    /** A Boot application with its own in-memory store; {@code more} adds or overrides properties. */
    private static ApplicationContextRunner bootApp(Path root, String... more) {
        String[] base = {
            "sandboxkit.driver=docker",
            "sandboxkit.workspace-root=" + root,
            "sandboxkit.spec.image=" + Engine.IMAGE,
            "sandboxkit.spec.pull-policy=never",
            "sandboxkit.reconcile-interval=1",
            "sandboxkit.orphan-grace=1",
        };
        String[] all = java.util.Arrays.copyOf(base, base.length + more.length);
        System.arraycopy(more, 0, all, base.length, more.length);
        return new ApplicationContextRunner().withConfiguration(SandboxAutoConfigurationTest.ALL).withPropertyValues(all);
    }

    @Test
    @DisplayName("a Boot app naming fleet 'default' never removes a plain app's live container (nor the reverse)")
    void bootAppAndPlainApp() throws Exception {
        try (SandboxManager plain = SandboxManager.builder().driver("docker").workspaceRoot(rootA)
                .orphanGrace(Duration.ofSeconds(1)).reconcileInterval(Duration.ofSeconds(1)).build()) {
            String plainContainer = plain.acquire("plain-live", SPEC).info().sandboxId();
            bootApp(rootB, "sandboxkit.fleet=default").run(context -> {
                SandboxManager boot = context.getBean(SandboxManager.class);
                String bootContainer = startBootSession(context.getBean(SandboxTools.class), boot);
                assertThat(labels(plainContainer, SandboxLabels.FLEET)).isEqualTo(labels(bootContainer, SandboxLabels.FLEET))
                        .isEqualTo("default");
                assertThat(labels(plainContainer, SandboxLabels.STORE)).isNotEqualTo(labels(bootContainer, SandboxLabels.STORE));

                keepBothBusyAndSweep(plain, "plain-live", boot, "conv-cli");

                assertThat(running(plainContainer)).as("the plain app's live container").isTrue();
                assertThat(running(bootContainer)).as("the Boot app's live container").isTrue();
                assertThat(plain.session("plain-live").orElseThrow().sandboxId()).isEqualTo(plainContainer);
                assertThat(plain.stats().resumed()).as("never lost its container").isZero();
                assertThat(boot.stats().orphansRemoved()).isZero();
                assertThat(plain.stats().orphansRemoved()).isZero();
            });
        }
    }

    @Test
    @DisplayName("two Boot apps with their own stores never remove each other's live containers")
    void twoBootApps() {
        bootApp(rootA).run(a -> bootApp(rootB).run(b -> {
            SandboxManager managerA = a.getBean(SandboxManager.class);
            SandboxManager managerB = b.getBean(SandboxManager.class);
            String containerA = startBootSession(a.getBean(SandboxTools.class), managerA);
            String containerB = startBootSession(b.getBean(SandboxTools.class), managerB);
            assertThat(labels(containerA, SandboxLabels.FLEET)).isEqualTo("default");

            keepBothBusyAndSweep(managerA, "conv-cli", managerB, "conv-cli");

            assertThat(running(containerA)).isTrue();
            assertThat(running(containerB)).isTrue();
            assertThat(managerA.stats().orphansRemoved() + managerB.stats().orphansRemoved()).isZero();
            assertThat(managerA.stats().resumed() + managerB.stats().resumed()).isZero();
        }));
    }

    /** One tool call through the Boot app's own tool set (conversation "cli"); returns its container. */
    private static String startBootSession(SandboxTools tools, SandboxManager manager) {
        assertThat(tools.execute("cli", "run_command", "{\"command\":\"echo hi\"}").text()).contains("hi");
        return manager.session("conv-cli").orElseThrow().sandboxId();
    }

    /**
     * For 4 s (four times the grace and the sweep interval), both sides keep their sessions busy and sweep by hand
     * between calls; every sweep must remove nothing.
     */
    private static void keepBothBusyAndSweep(SandboxManager a, String sessionA, SandboxManager b, String sessionB)
            throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(4).toNanos();
        while (System.nanoTime() < until) {
            assertThat(a.exec(sessionA, ExecRequest.shell("true")).exitCode()).isZero();
            assertThat(b.exec(sessionB, ExecRequest.shell("true")).exitCode()).isZero();
            assertThat(b.reconcile()).isZero();
            assertThat(a.reconcile()).isZero();
            Thread.sleep(250);
        }
    }

    private static boolean running(String container) {
        return "true".equals(docker("inspect", "-f", "{{.State.Running}}", container));
    }

    private static String labels(String container, String label) {
        return docker("inspect", "-f", "{{index .Config.Labels \"" + label + "\"}}", container);
    }

    private static String docker(String... args) {
        String[] cmd = new String[args.length + 1];
        cmd[0] = "docker";
        System.arraycopy(args, 0, cmd, 1, args.length);
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            p.waitFor();
            return out;
        } catch (IOException e) {
            throw new AssertionError("cannot run the docker CLI", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
