package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecStream;
import dev.sandboxkit.ProcessOutput;
import dev.sandboxkit.ProcessStatus;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxProcess;
import dev.sandboxkit.TerminalSize;
import dev.sandboxkit.spi.SandboxDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue #19's reattach: a background process started through one manager is read, listed and killed through a
 * second manager on the same JDBC store (an H2 file, opened separately by each, as two JVMs would), while the
 * first still owns the session. The second needs no lease: its handle execs into the container the store records.
 */
@DisplayName("Background processes reattached from a second manager on a shared H2 store, on the real Docker engine")
@Timeout(120)
class ProcessReattachTest {
    private static final String COUNTER = "i=0; while true; do echo $i; i=$((i+1)); sleep 0.1; done";

    @TempDir
    Path tmp;
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private String fleet;
    private SandboxDriver cleaner;

    @BeforeEach
    void setUp() throws Exception {
        Docker.require();
        Files.createDirectories(tmp.resolve("ws"));
        fleet = "proc-" + UUID.randomUUID().toString().substring(0, 8);
        cleaner = Docker.driver("cleaner", tmp.resolve("ws"));
    }

    @AfterEach
    void tearDown() {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            try {
                toClose.get(i).close();
            } catch (Exception e) {
                // best effort
            }
        }
        Docker.removeFleet(cleaner, fleet);
        cleaner.close();
    }

    private SandboxManager manager(String instanceId) {
        SandboxDriver driver = Docker.driver(instanceId, tmp.resolve("ws"));
        toClose.add(driver);
        JdbcSessionStore store = JdbcSessionStore.h2(tmp.resolve("store"));
        toClose.add(store);
        SandboxManager m = SandboxManager.builder().driver(driver).store(store).instanceId(instanceId).fleet(fleet)
                .workspaceRoot(tmp.resolve("ws")).build();
        toClose.add(m);
        return m;
    }

    @Test
    @DisplayName("start on A, read incrementally, detach; on B: acquire refused, reattach by id, read, kill; nothing left; A's close makes it LOST")
    void reattachFromSecondManager() throws Exception {
        SandboxManager a = manager("proc-a-" + fleet);
        Sandbox sandbox = a.acquire("proc-shared", Docker.SPEC);
        SandboxProcess started = sandbox.start(ExecRequest.shell(COUNTER));
        String id = started.id();
        ProcessOutput seen = awaitLines(started, 3);
        started.close();

        SandboxManager b = manager("proc-b-" + fleet);
        assertThatThrownBy(() -> b.acquire("proc-shared", Docker.SPEC)).isInstanceOf(SandboxAcquireException.class);
        SandboxProcess there = b.process("proc-shared", id);

        assertThat(there.status()).isEqualTo(ProcessStatus.running());
        assertThat(b.processes("proc-shared")).extracting(SandboxProcess::id).containsExactly(id);
        ProcessOutput more = there.output(ExecStream.STDOUT, seen.nextOffset(), 1024);
        assertThat(more.offset()).isEqualTo(seen.nextOffset());
        assertThat(seen.text() + more.text()).startsWith("0\n1\n2\n");
        assertThat(there.kill()).isTrue();
        assertThat(there.waitFor(Duration.ofSeconds(20))).isEqualTo(ProcessStatus.signaled(9));
        assertThat(sandbox.process(id).status()).isEqualTo(ProcessStatus.signaled(9));
        assertThat(psOnceGone(sandbox, "sandboxkit-proc", "while true")).doesNotContain("999999999");

        SandboxProcess second = sandbox.start(ExecRequest.shell(COUNTER));
        SandboxProcess secondOnB = b.process("proc-shared", second.id());
        assertThat(secondOnB.status().isRunning()).isTrue();
        a.close(); // suspends the session: the container and its processes go
        ProcessStatus lost = secondOnB.status();
        assertThat(lost.state()).isEqualTo(ProcessStatus.State.LOST);
        assertThat(lost.reason()).contains("suspended");
    }

    @Test
    @DisplayName("a process on a terminal started on A: B reattaches, reads the pty's output, resizes and kills it")
    void terminalReattachedFromSecondManager() throws Exception {
        SandboxManager a = manager("pty-a-" + fleet);
        Sandbox sandbox = a.acquire("pty-shared", Docker.SCRIPT_SPEC); // fails if the script image is missing
        SandboxProcess started = sandbox.start(ExecRequest.shell("tty; while :; do stty size; sleep 0.1; done")
                .withTty(TerminalSize.of(81, 25)));
        String id = started.id();
        awaitText(started, "25 81\r\n");
        started.close();

        SandboxManager b = manager("pty-b-" + fleet);
        SandboxProcess there = b.process("pty-shared", id);
        assertThat(there.hasTerminal()).isTrue();
        assertThat(there.output(ExecStream.STDOUT, 0, 100).text()).startsWith("/dev/pts/");
        there.resize(TerminalSize.of(120, 50));
        assertThat(awaitText(there, "50 120\r\n")).startsWith("/dev/pts/");
        assertThat(there.kill()).isTrue();
        assertThat(there.waitFor(Duration.ofSeconds(20))).isEqualTo(ProcessStatus.signaled(9));
        assertThat(sandbox.process(id).status()).isEqualTo(ProcessStatus.signaled(9));
        assertThat(psOnceGone(sandbox, "sandboxkit-proc", "stty size")).doesNotContain("script ");
    }

    /** The sandbox's {@code ps} once none of the markers shows (asserted), waiting up to 5 s for them to go. */
    private static String psOnceGone(Sandbox sandbox, String... markers) throws InterruptedException {
        String ps = "";
        for (int i = 0; i < 100; i++) {
            String now = sandbox.exec(ExecRequest.of("ps", "-o", "pid,args")).stdout();
            ps = now;
            if (java.util.Arrays.stream(markers).noneMatch(now::contains)) {
                break;
            }
            Thread.sleep(50);
        }
        assertThat(ps).doesNotContain(markers);
        return ps;
    }

    private static String awaitText(SandboxProcess p, String expected) throws InterruptedException {
        String out = "";
        for (int i = 0; i < 400; i++) {
            out = p.output(ExecStream.STDOUT, 0, 100_000).text();
            if (out.contains(expected)) {
                return out;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no '" + expected + "' from " + p + " in: " + out);
    }

    private static ProcessOutput awaitLines(SandboxProcess p, int lines) throws InterruptedException {
        for (int i = 0; i < 400; i++) {
            ProcessOutput o = p.output(ExecStream.STDOUT, 0, 6);
            if (o.text().split("\n").length >= lines) {
                return o;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no output from " + p);
    }
}
