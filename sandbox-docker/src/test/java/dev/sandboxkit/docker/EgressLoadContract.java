package dev.sandboxkit.docker;

import dev.sandboxkit.EgressPolicy;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxUnavailableException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The egress checks that do not depend on the workdir backend: hostile spellings, no network besides the proxy, 50
 * parallel downloads and 100 MiB, and a flood held at the limit. Run once per runtime, on host-directory workdirs.
 */
abstract class EgressLoadContract extends EgressOnDockerContract {

    @Test
    @DisplayName("hostile spellings of the host's own addresses are denied unless a rule names them")
    void hostileSpellings() {
        Sandbox sandbox = manager.acquire("egress-hostile", spec("allowed.test"));
        for (String host : List.of("localhost", "0.0.0.0", "[::1]", "[::ffff:127.0.0.1]", "2130706433",
                "0177.0.0.1", "127.1", "0x7f.0.0.1")) {
            String reply = raw(sandbox, "CONNECT " + host + ":" + port + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n");
            assertThat(reply).as("CONNECT %s", host).startsWith("HTTP/1.1 403");
        }
        manager.updateEgress("egress-hostile", EgressPolicy.parse("127.0.0.0/8:" + port));
        String named = raw(sandbox, "CONNECT 2130706433:" + port + " HTTP/1.1\r\n\r\nGET /hello HTTP/1.0\r\n"
                + "Host: rule\r\n\r\n");
        assertThat(named).as("a CIDR rule names it").startsWith("HTTP/1.1 200").contains("hello rule");
    }

    @Test
    @DisplayName("there is still no network: DNS fails, and a direct connection does not get out")
    void noNetworkInside() {
        Sandbox sandbox = manager.acquire("egress-dns", spec("allowed.test"));
        assertThat(sh(sandbox, "nslookup allowed.test").exitCode()).isNotZero();
        ExecResult direct = sh(sandbox, "unset http_proxy HTTP_PROXY; wget -q -T 5 -O - " + url("allowed.test", "/hello"));
        assertThat(direct.exitCode()).isNotZero();
    }

    @Test
    @DisplayName("50 parallel downloads, and 100 MiB arrives whole")
    void parallelAndBig() {
        Sandbox sandbox = manager.acquire("egress-load", spec("allowed.test"));
        // One process per download here: the endpoint costs six more each, under the spec's 512-process limit.
        ExecResult fifty = sh(sandbox, "mkdir -p /tmp/dl && cd /tmp/dl && for i in $(seq 50); do wget -q -O o.$i "
                + url("allowed.test", "/hello") + " & done; wait; cat o.* | grep -c hello");
        assertThat(fifty.stdout()).as("%s: %s", fifty, fifty.stderr()).isEqualTo("50\n");
        ExecResult big = sh(sandbox, "wget -q -O - " + url("allowed.test", "/big") + " | wc -c");
        assertThat(big.stdout().strip()).isEqualTo(Long.toString(BIG));
    }

    @Test
    @DisplayName("a sandbox opening connections until it cannot fork is held at the limit; another session is not hurt")
    void floodIsHeld() throws InterruptedException {
        manager.close();
        manager = builder(new SandboxConfig().set("egress.max-connections", "16")).build();
        Sandbox hostile = manager.acquire("egress-flood", spec("allowed.test"));
        Sandbox victim = manager.acquire("egress-victim", spec("allowed.test"));
        int threadsBefore = Thread.activeCount();
        // Connections that stay open (nc waits on its stdin): 10,000 tries, as many as the sandbox can fork. Its
        // process limit ends the loop: the pids cgroup under runc; under gVisor, where that cgroup holds gVisor's own
        // threads, an rlimit (per sandbox there; under runc it would count the uid's processes on the whole host).
        String limit = runtime() == null ? "" : "ulimit -u 300; ";
        hostile.exec(ExecRequest.shell(limit + "i=0; while [ $i -lt 10000 ]; do (sleep 600 | nc 127.0.0.1 3128 "
                + ">/dev/null 2>&1) 2>/dev/null & i=$((i+1)); done").withTimeout(Duration.ofMinutes(3)));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (manager.egressUsage("egress-flood").denied() == 0 && System.nanoTime() - until < 0) {
            Thread.sleep(100); // the joins of the held connections reach the proxy one engine call each
        }
        ExecResult ok = sh(victim, "wget -q -O - " + url("allowed.test", "/hello"));
        assertThat(ok.stdout()).as("the other session: %s", ok).startsWith("hello");
        assertThat(manager.egressUsage("egress-flood").denied()).as("refused over the limit of 16").isPositive();
        int threadsDuring = Thread.activeCount();
        assertThat(threadsDuring - threadsBefore).as("threads the flood costs the host").isLessThan(200);
        destroy("egress-flood");
        assertThat(sh(victim, "wget -q -O - " + url("allowed.test", "/hello")).stdout()).startsWith("hello");
    }

    /** A destroy is retryable when the engine is slow (gVisor takes a while to end hundreds of processes). */
    private void destroy(String sessionId) throws InterruptedException {
        for (int attempt = 1; ; attempt++) {
            try {
                manager.destroy(sessionId);
                return;
            } catch (SandboxUnavailableException slow) {
                if (attempt == 10) {
                    throw slow;
                }
                Thread.sleep(2_000);
            }
        }
    }
}
