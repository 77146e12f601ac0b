package dev.sandboxkit.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.InspectContainerResponse;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.docker.internal.files.FilesTestSupport;
import dev.sandboxkit.spi.SandboxLabels;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.UUID;

import static dev.sandboxkit.docker.internal.files.FilesTestSupport.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Per-container set-up on the real engine (the fake-driver tests are in the testkit's ContainerSetupTest):
 * per-exec secrets vs spec env, proxy and CA variables, the post-create hook across an idle reap and resume,
 * and failing hooks.
 */
@Tag("slow")
@DisplayName("Per-container set-up on the real Docker engine")
class SetupOnDockerTest {
    static final String PEM = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUSANDBOXKITTESTCA\n"
            + "-----END CERTIFICATE-----\n";
    private static DockerClient docker;
    @TempDir
    static Path tmp;
    private static SandboxManager manager;
    private String sessionId;

    @BeforeAll
    static void start() {
        docker = ManagerOnDockerTest.EngineCheck.requireEngine();
        manager = SandboxManager.builder().driver("docker").workspaceRoot(tmp.resolve("ws"))
                .idleTimeout(Duration.ofSeconds(2)).reaperInterval(Duration.ofMillis(200)).build();
    }

    @AfterAll
    static void stop() throws Exception {
        if (manager != null) {
            manager.close();
        }
        if (docker != null) {
            docker.close();
        }
    }

    @BeforeEach
    void id() {
        sessionId = "setup-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void destroy() {
        manager.destroy(sessionId);
    }

    @Test
    @DisplayName("a per-exec secret reaches that exec only: not later execs, not /proc/*/environ later, not the container config, not the store")
    void perExecSecret() {
        String secret = "sk-live-" + UUID.randomUUID();
        Sandbox sandbox = manager.acquire(sessionId, FilesTestSupport.spec().env("MODE", "spec-level").build());
        ExecResult with = sandbox.exec(ExecRequest.shell("echo \"$API_TOKEN|$MODE\"").withEnv("API_TOKEN", secret));
        assertThat(with.stdout()).isEqualTo(secret + "|spec-level\n");
        // A long-lived process started later, and a later exec: neither carries it.
        sandbox.exec(ExecRequest.shell("sleep 300 >/dev/null 2>&1 &"));
        ExecResult later = sandbox.exec(ExecRequest.shell(
                "echo \"[$API_TOKEN|$MODE]\"; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>/dev/null"
                        + " | grep -c 'API_TOKEN' ; true"));
        assertThat(later.stdout()).startsWith("[|spec-level]\n").doesNotContain(secret);
        assertThat(later.stdout().lines().skip(1).findFirst().orElse("")).isEqualTo("0");
        // The container's own configuration holds neither the secret nor the spec env (the engine adds both per exec).
        InspectContainerResponse c = docker.inspectContainerCmd(sandbox.info().sandboxId()).exec();
        String[] env = c.getConfig().getEnv() == null ? new String[0] : c.getConfig().getEnv();
        assertThat(Arrays.toString(env)).doesNotContain(secret).doesNotContain("API_TOKEN");
        assertThat(c.toString()).doesNotContain(secret);
        SessionInfo info = sandbox.info();
        assertThat(info.toString()).doesNotContain(secret);
        assertThat(info.spec().env()).containsOnlyKeys("MODE");
    }

    @Test
    @DisplayName("spec env and proxy variables are visible in every exec; a per-exec value wins")
    void proxyVariables() {
        SandboxSpec spec = FilesTestSupport.spec().env("MODE", "m")
                .proxy(new SandboxSpec.Proxy("http://proxy.invalid:3128", "http://proxy.invalid:3129", "localhost,.local"))
                .build();
        Sandbox sandbox = manager.acquire(sessionId, spec);
        String env = sandbox.exec("env").stdout();
        assertThat(env).contains("HTTP_PROXY=http://proxy.invalid:3128\n", "http_proxy=http://proxy.invalid:3128\n",
                "HTTPS_PROXY=http://proxy.invalid:3129\n", "https_proxy=http://proxy.invalid:3129\n",
                "NO_PROXY=localhost,.local\n", "no_proxy=localhost,.local\n", "MODE=m\n");
        assertThat(sandbox.exec(ExecRequest.shell("echo $HTTPS_PROXY").withEnv("HTTPS_PROXY", "http://other:1")).stdout())
                .isEqualTo("http://other:1\n");
    }

    @Test
    @DisplayName("the extra CA is installed under /tmp/.sandboxkit, the variables point at it, and it is back after a resume")
    void extraCa() throws Exception {
        SandboxSpec spec = FilesTestSupport.spec().extraCaCertificates(PEM).build();
        Sandbox sandbox = manager.acquire(sessionId, spec);
        assertCaInstalled(sandbox);
        awaitSuspended();
        assertCaInstalled(sandbox); // /tmp is a fresh tmpfs in the new container: installed again
    }

    private static void assertCaInstalled(Sandbox sandbox) {
        ExecResult r = sandbox.exec(ExecRequest.shell("cat /tmp/.sandboxkit/extra-ca.pem; echo ---; "
                + "tail -c " + PEM.length() + " /tmp/.sandboxkit/ca-bundle.pem; echo ---; "
                + "echo $SSL_CERT_FILE $REQUESTS_CA_BUNDLE $CURL_CA_BUNDLE $GIT_SSL_CAINFO $PIP_CERT $NODE_EXTRA_CA_CERTS; "
                + "stat -c '%a %u' /tmp/.sandboxkit /tmp/.sandboxkit/ca-bundle.pem"));
        String bundle = "/tmp/.sandboxkit/ca-bundle.pem";
        assertThat(r.stdout()).isEqualTo(PEM + "---\n" + PEM + "---\n" + String.join(" ", bundle, bundle, bundle, bundle,
                bundle, "/tmp/.sandboxkit/extra-ca.pem") + "\n755 10001\n644 10001\n");
    }

    @Test
    @DisplayName("the post-create hook runs again after an idle reap and resume; each result is stored on the session")
    void hookAfterResume() throws Exception {
        SandboxSpec spec = FilesTestSupport.spec().env("MODE", "m")
                .postCreate(ExecRequest.shell("echo \"run $MODE\" >> /workspace/hook.log && wc -l < /workspace/hook.log"))
                .build();
        Sandbox sandbox = manager.acquire(sessionId, spec);
        String firstContainer = sandbox.info().sandboxId();
        assertThat(sandbox.info().attributes()).containsEntry("postCreate.exitCode", "0")
                .containsEntry("postCreate.output", "1").containsKey("postCreate.millis");

        awaitSuspended();
        assertThat(sandbox.exec("cat", "hook.log").stdout()).isEqualTo("run m\nrun m\n");
        SessionInfo info = sandbox.info();
        assertThat(info.sandboxId()).isNotEqualTo(firstContainer);
        assertThat(info.attributes()).containsEntry("postCreate.exitCode", "0").containsEntry("postCreate.output", "2");
    }

    @Test
    @DisplayName("a failing hook fails the acquire with its output and leaves no container, session or workdir")
    void failingHook() {
        SandboxSpec spec = FilesTestSupport.spec()
                .postCreate(ExecRequest.shell("echo installing; echo 'pip: not found' >&2; exit 3")).build();
        assertThatThrownBy(() -> manager.acquire(sessionId, spec)).isInstanceOf(SandboxAcquireException.class)
                .hasMessageContaining("pip: not found").hasMessageContaining("installing").hasMessageContaining("exit 3");
        assertThat(containers()).isEmpty();
        assertThat(manager.session(sessionId)).isEmpty();
        assertThat(tmp.resolve("ws").resolve(sessionId)).doesNotExist();
    }

    @Test
    @DisplayName("a hook failing on resume fails that call, removes the new container, keeps the session and workdir; fixing a file while suspended recovers")
    void failingHookOnResume() throws Exception {
        SandboxSpec spec = FilesTestSupport.spec()
                .postCreate(ExecRequest.shell("if [ -e /workspace/break ]; then echo resume-broke; exit 4; fi; echo fine"))
                .build();
        Sandbox sandbox = manager.acquire(sessionId, spec);
        sandbox.files().write("notes.txt", utf8("kept\n"));
        sandbox.files().write("break", utf8(""));
        awaitSuspended();
        assertThatThrownBy(() -> sandbox.exec("true")).isInstanceOf(SandboxAcquireException.class)
                .hasMessageContaining("resume-broke").hasMessageContaining("exit 4");
        assertThat(containers()).isEmpty();
        assertThat(manager.session(sessionId).orElseThrow().state()).isEqualTo(SessionState.SUSPENDED);
        // The files API works without a container: remove the culprit, and the next call resumes cleanly.
        sandbox.files().delete("break");
        assertThat(sandbox.exec("cat", "notes.txt").stdout()).isEqualTo("kept\n");
        assertThat(sandbox.info().attributes()).containsEntry("postCreate.output", "fine");
    }

    private java.util.List<com.github.dockerjava.api.model.Container> containers() {
        return docker.listContainersCmd().withShowAll(true)
                .withLabelFilter(Map.of(SandboxLabels.SESSION, sessionId)).exec();
    }

    /** Waits until the idle reaper suspended the session and its container is gone. */
    private void awaitSuspended() throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (manager.session(sessionId).orElseThrow().state() != SessionState.SUSPENDED || !containers().isEmpty()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("session " + sessionId + " was not reaped in time");
            }
            Thread.sleep(100);
        }
        assertThat(Files.isDirectory(tmp.resolve("ws").resolve(sessionId))).isTrue();
    }
}
