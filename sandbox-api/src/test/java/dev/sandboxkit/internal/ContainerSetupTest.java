package dev.sandboxkit.internal;

import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.testkit.FakeExec;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Per-container set-up: post-create hook, proxy and CA variables, model instructions. */
class ContainerSetupTest {
    private static final String PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    private final ManualClock clock = new ManualClock();
    private final ManualScheduler scheduler = new ManualScheduler(clock);
    private final FakeDriver driver = new FakeDriver(clock);
    private final SandboxManager manager = SandboxManager.builder().driver(driver).clock(clock).scheduler(scheduler)
            .idleTimeout(Duration.ofMinutes(30)).reaperInterval(Duration.ofSeconds(1)).build();

    @AfterEach
    void close() {
        manager.close();
    }

    @Test
    @DisplayName("the post-create hook runs in every new container, resume included, and its result is stored")
    void hookRunsOnCreateAndResume() {
        driver.when(e -> e.commandLine().equals("setup.sh"), FakeDriver.result(0, "installed\n", ""));
        SandboxSpec spec = SandboxSpec.builder().image("img").postCreate(ExecRequest.of("setup.sh")).build();

        manager.acquire("s", spec);
        scheduler.advance(Duration.ofMinutes(31));
        manager.exec("s", ExecRequest.of("true"));

        assertThat(driver.execs()).extracting(FakeExec::commandLine).containsExactly("setup.sh", "setup.sh", "true");
        SessionInfo info = manager.session("s").orElseThrow();
        assertThat(info.attributes()).containsEntry("postCreate.exitCode", "0").containsEntry("postCreate.output", "installed");
    }

    @Test
    @DisplayName("a hook without a timeout gets 10 minutes; its own timeout is kept")
    void hookTimeout() {
        manager.acquire("default", SandboxSpec.builder().image("img").postCreate(ExecRequest.of("setup.sh")).build());
        manager.acquire("own", SandboxSpec.builder().image("img")
                .postCreate(ExecRequest.of("setup.sh").withTimeout(Duration.ofSeconds(42))).build());

        assertThat(driver.execs()).extracting(e -> e.request().timeout())
                .containsExactly(Duration.ofMinutes(10), Duration.ofSeconds(42));
    }

    @Test
    @DisplayName("a failing hook fails the acquire with its output and leaves no container")
    void failingHook() {
        driver.when(e -> e.commandLine().equals("setup.sh"), FakeDriver.result(2, "", "pip: not found"));
        SandboxSpec spec = SandboxSpec.builder().image("img").postCreate(ExecRequest.of("setup.sh")).build();

        assertThatThrownBy(() -> manager.acquire("s", spec)).isInstanceOf(SandboxAcquireException.class)
                .hasMessageContaining("pip: not found").hasMessageContaining("exit 2");
        assertThat(driver.liveSandboxes()).isEmpty();
    }

    @Test
    @DisplayName("proxy and extra-CA variables reach every exec; the CA is installed from stdin")
    void proxyAndCa() {
        SandboxSpec spec = SandboxSpec.builder().image("img").env("MODE", "test")
                .proxy(new SandboxSpec.Proxy("http://proxy:3128", "http://proxy:3128", "localhost"))
                .extraCaCertificates(PEM).build();

        manager.acquire("s", spec).exec(ExecRequest.of("env").withEnv("SECRET", "x"));

        FakeExec install = driver.execs().get(0);
        assertThat(install.commandLine()).contains("/tmp/.sandboxkit/extra-ca.pem");
        assertThat(new String(install.request().stdin(), StandardCharsets.UTF_8)).isEqualTo(PEM);
        FakeExec user = driver.execs().get(1);
        assertThat(user.request().env()).containsEntry("HTTPS_PROXY", "http://proxy:3128")
                .containsEntry("no_proxy", "localhost").containsEntry("SSL_CERT_FILE", "/tmp/.sandboxkit/ca-bundle.pem")
                .containsEntry("NODE_EXTRA_CA_CERTS", "/tmp/.sandboxkit/extra-ca.pem")
                .containsEntry("MODE", "test").containsEntry("SECRET", "x");
    }

    @Test
    @DisplayName("the spec, hook included, survives the store round trip used for resume")
    void specRoundTrip() {
        SandboxSpec spec = SandboxSpec.builder().image("img").postCreate(ExecRequest.shell("echo a b").withTimeout(
                Duration.ofSeconds(5)).withEnv("K", "V")).proxy(new SandboxSpec.Proxy(null, "http://p", null))
                .extraCaCertificates(PEM).maxLifetime(Duration.ofHours(2)).label("team", "a").build();
        manager.acquire("s", spec);
        assertThat(manager.session("s").orElseThrow().spec()).isEqualTo(spec);
    }
}
