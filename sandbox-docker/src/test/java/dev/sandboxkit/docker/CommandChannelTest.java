package dev.sandboxkit.docker;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Frame;
import dev.sandboxkit.ExecMode;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ExecResult.Termination;
import dev.sandboxkit.ExecStream;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.WarmPool;
import dev.sandboxkit.docker.internal.channel.ChannelProbe;
import dev.sandboxkit.docker.internal.channel.ChannelProbe.Channel;
import dev.sandboxkit.docker.internal.engine.DockerHost;
import dev.sandboxkit.docker.internal.engine.EngineClient;
import dev.sandboxkit.docker.internal.engine.EngineExec;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.testkit.ManualClock;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import static dev.sandboxkit.docker.DockerTestSupport.context;
import static dev.sandboxkit.docker.DockerTestSupport.spec;
import static dev.sandboxkit.docker.DockerTestSupport.start;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The command channel on the real engine: framing that output cannot forge, kills, channel death and
 * re-establishment, concurrency, modes and fallback, and clean removal. Driven through the SPI.
 */
@Tag("slow")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class CommandChannelTest extends DriverOnDocker {
    /** Shared by tests that leave it as they found it. */
    private String shared;

    @Override
    String tempPrefix() {
        return "sbx-channel-";
    }

    @BeforeAll
    void startShared() {
        shared = start(driver, instanceId, "c-shared", spec().build());
    }

    private ExecResult exec(String id, ExecRequest request) {
        return driver.exec(id, request);
    }

    private ExecResult sh(String id, String script, String... args) {
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", script, "sh"));
        argv.addAll(List.of(args));
        return driver.exec(id, ExecRequest.of(argv));
    }

    private long channelExecs() {
        return ChannelProbe.channelExecs(driver.channels());
    }

    private long plainExecs() {
        return ChannelProbe.plainExecs(driver.channels());
    }

    private List<Channel> channels(String id) {
        return ChannelProbe.channels(driver.channels(), id);
    }

    /** Runs a command outside the driver (docker-java), as an operator would; returns stdout + stderr. */
    private String outside(String id, String... cmd) throws InterruptedException {
        String execId = docker.execCreateCmd(id).withCmd(cmd).withAttachStdout(true).withAttachStderr(true).exec().getId();
        StringBuilder out = new StringBuilder();
        docker.execStartCmd(execId).exec(new ResultCallback.Adapter<Frame>() {
            @Override
            public void onNext(Frame frame) {
                synchronized (out) {
                    out.append(new String(frame.getPayload(), StandardCharsets.UTF_8));
                }
            }
        }).awaitCompletion(30, TimeUnit.SECONDS);
        synchronized (out) {
            return out.toString();
        }
    }

    private List<String> processes(String id) throws InterruptedException {
        return outside(id, "ps", "-o", "pid,args").lines().skip(1).map(String::strip).toList();
    }

    private static String pidOf(List<String> ps, String argsContain) {
        return ps.stream().filter(l -> l.contains(argsContain)).map(l -> l.split("\\s+")[0]).findFirst()
                .orElseThrow(() -> new AssertionError("no process with '" + argsContain + "' in " + ps));
    }

    // ------------------------------------------------------------------ framing

    @Test
    @DisplayName("output that looks like frames (any nonce, the ready line, exit frames) is passed through verbatim")
    void fakeFramesArePassedThrough() {
        String guessed = "#" + "0".repeat(32);
        String other = "#" + HexFormat.of().formatHex(new byte[16]).replace('0', 'a');
        String payload = guessed + "S" + guessed + "T" + other + "R0." + other + "T\nSBXREADY x /tmp setsid=1 stdin=1\n";
        long before = channelExecs();

        ExecResult r = sh(shared, "printf '%s' \"$1\"; printf '%s' \"$1\" >&2; exit 7", payload);

        assertThat(channelExecs()).as("ran on the channel").isEqualTo(before + 1);
        assertThat(r.exitCode()).isEqualTo(7);
        assertThat(r.termination()).isEqualTo(Termination.EXITED);
        assertThat(r.stdout()).isEqualTo(payload);
        assertThat(r.stderr()).isEqualTo(payload);
    }

    @Test
    @DisplayName("replaying the previous command's nonce as output neither ends the command nor changes its exit code")
    void previousNonceCannotEndACommand() {
        String id = start(driver, instanceId, "c-nonce", spec().build());
        assertThat(exec(id, ExecRequest.of("true")).exitCode()).isZero();
        Channel channel = channels(id).get(0);
        String old = channel.lastNonce();
        String endOut = "#" + old + "T";
        String endErr = "#" + old + "R0.#" + old + "T";

        ExecResult r = sh(id, "printf '%s' \"$1\"; printf '%s' \"$2\" >&2; sleep 0.2; echo after; exit 9", endOut, endErr);

        assertThat(r.exitCode()).isEqualTo(9);
        assertThat(r.stdout()).isEqualTo(endOut + "after\n");
        assertThat(r.stderr()).isEqualTo(endErr);
        assertThat(channels(id)).containsExactly(channel); // still the same, healthy channel
        assertThat(exec(id, ExecRequest.of("echo", "next")).stdout()).isEqualTo("next\n");
    }

    @Test
    @DisplayName("a command cannot see its own nonce: not in its env, argv, stdin, nor the supervisor's cmdline or environ")
    void nonceIsInvisibleToTheCommand() {
        String id = start(driver, instanceId, "c-secret", spec().build());
        exec(id, ExecRequest.of("true"));
        Channel channel = channels(id).get(0);

        ExecResult r = exec(id, ExecRequest.shell("env; cat; for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do "
                + "tr '\\0' '\\n' < \"$f\"; done 2>/dev/null; ls -la /tmp/.sandboxkit-*/ 2>&1")
                .withStdin("stdin").withOutputLimit(8 * 1024 * 1024));

        assertThat(r.exitCode()).isZero();
        assertThat(r.stdout()).contains("SANDBOXKIT_EXEC_ID=").contains("stdin").contains("sandboxkit-channel");
        assertThat(r.stdout()).doesNotContain(channel.lastNonce());
    }

    @Test
    @DisplayName("output without a trailing newline, ending in '#' or a token prefix, arrives exactly")
    void noTrailingNewline() {
        assertThat(sh(shared, "printf abc").stdout()).isEqualTo("abc");
        ExecResult hash = sh(shared, "printf 'x#'; printf '#' >&2");
        assertThat(hash.stdout()).isEqualTo("x#");
        assertThat(hash.stderr()).isEqualTo("#");
        ExecResult prefix = sh(shared, "printf '#0123456789abcdef'; printf '##a#' >&2");
        assertThat(prefix.stdout()).isEqualTo("#0123456789abcdef");
        assertThat(prefix.stderr()).isEqualTo("##a#");
        assertThat(sh(shared, "printf ''").stdout()).isEmpty();
    }

    @Test
    @DisplayName("50 MiB of random bytes (NULs and '#' included) stream through the listener on the calling thread, unchanged")
    void fiftyMegabytesOfRandomBytes() throws Exception {
        String id = start(driver, instanceId, "c-big", spec().build());
        assertThat(exec(id, ExecRequest.shell("head -c 52428800 /dev/urandom > big.bin").withTimeout(Duration.ofSeconds(60)))
                .exitCode()).isZero();
        String expected = exec(id, ExecRequest.of("sha256sum", "big.bin")).stdout().split("\\s+")[0];
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        AtomicLong bytes = new AtomicLong();
        Set<Thread> listenerThreads = new HashSet<>();
        long before = channelExecs();

        ExecResult r = exec(id, ExecRequest.of("cat", "big.bin").withTimeout(Duration.ofSeconds(90))
                .withListener((stream, b, off, len) -> {
                    listenerThreads.add(Thread.currentThread());
                    if (stream == ExecStream.STDOUT) {
                        sha.update(b, off, len);
                        bytes.addAndGet(len);
                    }
                }));

        assertThat(channelExecs()).isEqualTo(before + 1);
        assertThat(r.exitCode()).isZero();
        assertThat(bytes.get()).isEqualTo(52428800L);
        assertThat(HexFormat.of().formatHex(sha.digest())).isEqualTo(expected);
        assertThat(listenerThreads).containsExactly(Thread.currentThread());
        assertThat(r.stdoutBytes()).hasSize(ExecRequest.DEFAULT_OUTPUT_LIMIT);
        assertThat(r.stdoutTruncated()).isTrue();
        assertThat(r.stderrTruncated()).isFalse();
    }

    @Test
    @DisplayName("every byte value, on both streams and through stdin")
    void everyByteValue() {
        byte[] all = new byte[256 * 16];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        ExecResult r = exec(shared, ExecRequest.shell("tee /dev/stderr").withStdin(all));
        assertThat(r.stdoutBytes()).isEqualTo(all);
        assertThat(r.stderrBytes()).isEqualTo(all);
        byte[] random = new byte[1024 * 1024];
        new Random(7).nextBytes(random);
        assertThat(exec(shared, ExecRequest.of("cat").withStdin(random).withOutputLimit(2 * 1024 * 1024)).stdoutBytes())
                .isEqualTo(random);
    }

    @Test
    @DisplayName("a command that closes its own stdout (or both streams) still ends with its exit code")
    void commandClosesItsOwnStdout() {
        ExecResult one = sh(shared, "exec >&-; echo err >&2; sleep 0.2; exit 4");
        assertThat(one.exitCode()).isEqualTo(4);
        assertThat(one.stdout()).isEmpty();
        assertThat(one.stderr()).isEqualTo("err\n");
        ExecResult both = sh(shared, "echo before; exec >&- 2>&-; sleep 0.3; exit 5");
        assertThat(both.exitCode()).isEqualTo(5);
        assertThat(both.stdout()).isEqualTo("before\n");
    }

    @Test
    @DisplayName("a command that never reads its stdin, or reads only part of it, leaves the channel in sync")
    void commandNeverReadsStdin() {
        byte[] input = new byte[3 * 1024 * 1024];
        new Random(3).nextBytes(input);
        long before = channelExecs();
        assertThat(exec(shared, ExecRequest.of("true").withStdin(input)).exitCode()).isZero();
        assertThat(exec(shared, ExecRequest.of("head", "-c", "5").withStdin("abcdefgh")).stdout()).isEqualTo("abcde");
        assertThat(exec(shared, ExecRequest.of("echo", "in sync")).stdout()).isEqualTo("in sync\n");
        assertThat(channelExecs()).isEqualTo(before + 3);
    }

    @Test
    @DisplayName("a background process holding the output is waited for, like a plain exec: its late output belongs to its command")
    void leftoverOutputStaysWithItsCommand() {
        ExecResult r = sh(shared, "(sleep 0.5; echo late; echo late-err >&2) & echo now");
        assertThat(r.stdout()).isEqualTo("now\nlate\n");
        assertThat(r.stderr()).isEqualTo("late-err\n");
        assertThat(sh(shared, "echo next").stdout()).isEqualTo("next\n");
    }

    @Test
    @DisplayName("a background process that keeps the output open past 2 s is cut off like a plain exec, and does not leak into later commands")
    void leftoverPastTwoSecondsIsCutOff() {
        String id = start(driver, instanceId, "c-leftover", spec().build());
        long t0 = System.nanoTime();
        ExecResult r = sh(id, "(sleep 4; echo too-late) & echo now; exit 3");
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);

        assertThat(r.exitCode()).isEqualTo(3);
        assertThat(r.termination()).isEqualTo(Termination.EXITED);
        assertThat(r.stdout()).isEqualTo("now\n");
        assertThat(r.duration()).as("cut 2 s after the exit, not when the leftover ends at 4 s")
                .isBetween(Duration.ofMillis(1900), Duration.ofMillis(3900));
        assertThat(millis).as("including the clean-up of the channel").isLessThan(10_000L);
        ExecResult later = sh(id, "sleep 3; echo mine");
        assertThat(later.stdout()).isEqualTo("mine\n");
    }

    @Test
    @DisplayName("many commands on one channel (several relay batches): relays and stdin copies do not pile up")
    void manyCommandsOnOneChannel() throws Exception {
        String id = start(driver, instanceId, "c-many", spec().build());
        for (int i = 0; i < 80; i++) {
            ExecRequest request = i % 2 == 0 ? ExecRequest.of("cat").withStdin("in-" + i) : ExecRequest.of("echo", "n-" + i);
            String expected = i % 2 == 0 ? "in-" + i : "n-" + i + "\n";
            assertThat(exec(id, request).stdout()).isEqualTo(expected);
        }
        assertThat(channels(id)).hasSize(1);
        List<String> ps = processes(id);
        assertThat(ps.stream().filter(l -> l.contains("cat o1") || l.contains("cat e1"))).hasSize(2);
        String dir = channels(id).get(0).dir();
        String listing = outside(id, "ls", dir);
        assertThat(listing.lines().filter(l -> l.startsWith("in"))).hasSizeLessThanOrEqualTo(32);
        assertThat(outside(id, "sh", "-c", "cat " + dir + "/in* 2>/dev/null | wc -c").strip())
                .as("stdin copies are emptied after use").isEqualTo("0");
    }

    // ------------------------------------------------------------------ kill

    @Test
    @DisplayName("a timeout kills the command, its children and grandchildren; ps shows nothing left; the channel stays")
    void timeoutKillsTheWholeTree() throws Exception {
        String id = start(driver, instanceId, "c-kill", spec().build());
        exec(id, ExecRequest.of("true"));
        List<Channel> before = channels(id);

        long t0 = System.nanoTime();
        ExecResult r = exec(id, ExecRequest.shell("sleep 311 & (sleep 312 &); sh -c 'sleep 313 & sleep 314' & "
                + "setsid sleep 315 & echo started; sleep 310").withTimeout(Duration.ofSeconds(1)));
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);

        assertThat(r.timedOut()).isTrue();
        assertThat(r.stdout()).isEqualTo("started\n");
        assertThat(r.exitCode()).isIn(137, -1);
        assertThat(millis).isBetween(950L, 3500L);
        String ps = String.join("\n", processes(id));
        for (int s = 310; s <= 315; s++) {
            assertThat(ps).doesNotContain("sleep " + s);
        }
        assertThat(exec(id, ExecRequest.of("echo", "alive")).stdout()).isEqualTo("alive\n");
        assertThat(channels(id)).as("the channel survived the timeout").isEqualTo(before);
    }

    @Test
    @DisplayName("kill 0 from a command ends that command only; the channel carries on")
    void killZeroSparesTheChannel() {
        String id = start(driver, instanceId, "c-kill0", spec().build());
        exec(id, ExecRequest.of("true"));
        List<Channel> before = channels(id);

        ExecResult r = sh(id, "sleep 30 & kill 0; sleep 1; echo not-reached");

        assertThat(r.exitCode()).isEqualTo(143);
        assertThat(r.stdout()).isEmpty();
        assertThat(sh(id, "echo fine").stdout()).isEqualTo("fine\n");
        assertThat(channels(id)).isEqualTo(before);
    }

    // ------------------------------------------------------------------ channel death

    @Test
    @DisplayName("a supervisor killed from outside is replaced transparently on the next exec, leaving no relays behind")
    void killedSupervisorIsReplaced() throws Exception {
        String id = start(driver, instanceId, "c-death", spec().build());
        assertThat(exec(id, ExecRequest.of("echo", "one")).stdout()).isEqualTo("one\n");
        Channel first = channels(id).get(0);
        String pid = pidOf(processes(id), ChannelProbe.LABEL);

        outside(id, "kill", "-9", pid);

        assertThat(exec(id, ExecRequest.of("echo", "two")).stdout()).isEqualTo("two\n");
        assertThat(channels(id)).hasSize(1).doesNotContain(first);
        List<String> ps = processes(id);
        assertThat(ps.stream().filter(l -> l.contains(ChannelProbe.LABEL))).hasSize(1);
        assertThat(ps.stream().filter(l -> l.contains("cat o1") || l.contains("cat e1"))).hasSize(2);
    }

    @Test
    @DisplayName("relays killed from outside wedge their channel; the next exec notices and runs on a new one")
    void killedRelaysAreReplaced() throws Exception {
        String id = start(driver, instanceId, "c-relay", spec().build());
        exec(id, ExecRequest.of("true"));
        List<String> ps = processes(id);
        outside(id, "kill", "-9", pidOf(ps, "cat o1"), pidOf(ps, "cat e1"));

        long t0 = System.nanoTime();
        ExecResult r = exec(id, ExecRequest.of("echo", "recovered"));

        assertThat(r.stdout()).isEqualTo("recovered\n");
        assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0)).isLessThan(15);
        assertThat(processes(id).stream().filter(l -> l.contains(ChannelProbe.LABEL))).hasSize(1);
    }

    // ------------------------------------------------------------------ concurrency

    @Test
    @DisplayName("parallel execs on one sandbox each get their own output, stdin, env and exit code")
    void parallelExecs() throws Exception {
        String id = start(driver, instanceId, "c-parallel", spec().build());
        int n = 8;
        CyclicBarrier go = new CyclicBarrier(n);
        List<Future<List<String>>> results = new ArrayList<>();
        for (int t = 0; t < n; t++) {
            int thread = t;
            results.add(threads.submit(() -> {
                go.await(30, TimeUnit.SECONDS);
                List<String> wrong = new ArrayList<>();
                for (int i = 0; i < 25; i++) {
                    String tag = thread + "-" + i;
                    ExecResult r = exec(id, ExecRequest.shell("cat; echo \" $TAG\" >&2; exit $((${#TAG} % 7))")
                            .withStdin(tag).withEnv("TAG", tag));
                    if (!r.stdout().equals(tag) || !r.stderr().equals(" " + tag + "\n") || r.exitCode() != tag.length() % 7) {
                        wrong.add(tag + " -> " + r + " " + r.stdout() + "|" + r.stderr());
                    }
                }
                return wrong;
            }));
        }
        for (Future<List<String>> f : results) {
            assertThat(f.get(120, TimeUnit.SECONDS)).isEmpty();
        }
        assertThat(channels(id).size()).isBetween(1, ChannelProbe.MAX_CHANNELS);
    }

    @Test
    @DisplayName("more concurrent execs than channels: the extra ones run as plain execs, all correct")
    void overflowRunsPlain() throws Exception {
        String id = start(driver, instanceId, "c-overflow", spec().build());
        int n = ChannelProbe.MAX_CHANNELS + 4;
        long plainBefore = plainExecs();
        CyclicBarrier go = new CyclicBarrier(n);
        List<Future<String>> results = new ArrayList<>();
        for (int t = 0; t < n; t++) {
            String tag = "t" + t;
            results.add(threads.submit(() -> {
                go.await(30, TimeUnit.SECONDS);
                return exec(id, ExecRequest.shell("sleep 1; echo $TAG").withEnv("TAG", tag)).stdout();
            }));
        }
        for (int t = 0; t < n; t++) {
            assertThat(results.get(t).get(60, TimeUnit.SECONDS)).isEqualTo("t" + t + "\n");
        }
        assertThat(channels(id)).hasSizeLessThanOrEqualTo(ChannelProbe.MAX_CHANNELS);
        assertThat(plainExecs()).isGreaterThan(plainBefore);
    }

    // ------------------------------------------------------------------ modes and fidelity

    @Test
    @DisplayName("a warm-pool sandbox opens its channel while it waits: the first exec after a pool hit opens none")
    void pooledSandboxesWaitWithAnOpenChannel() throws Exception {
        Map<String, String> caseLabel = Map.of("test.case", "pooled-channel-" + instanceId);
        SandboxSpec pooledSpec = spec().label("test.case", caseLabel.get("test.case")).build();
        try (SandboxManager m = SandboxManager.builder().driver(driver).workspaceRoot(root.resolveSibling("pool-ws"))
                .warmPool(WarmPool.of(pooledSpec, 1)).build()) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (m.stats().poolSize() < 1 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            Sandbox sandbox = m.acquire("c-pooled", pooledSpec);
            String id = sandbox.info().sandboxId();
            assertThat(m.stats().poolHits()).isEqualTo(1);
            assertThat(channels(id)).as("opened by the warm-up exec").hasSize(1);
            long before = channelExecs();

            assertThat(sandbox.exec(ExecRequest.of("echo", "first")).stdout()).isEqualTo("first\n");

            assertThat(channelExecs()).isEqualTo(before + 1);
            assertThat(channels(id)).hasSize(1);
        }
        // The pool was refilling when the manager closed; close waits for that sandbox and removes it.
        assertThat(docker.listContainersCmd().withShowAll(true).withLabelFilter(caseLabel).exec())
                .as("containers left by the closed manager").isEmpty();
    }

    @Test
    @DisplayName("ExecMode.PLAIN never opens a channel")
    void plainModeNeverOpensAChannel() {
        String id = start(driver, instanceId, "c-plain", spec().execMode(ExecMode.PLAIN).build());
        long before = channelExecs();
        assertThat(exec(id, ExecRequest.of("echo", "plain")).stdout()).isEqualTo("plain\n");
        assertThat(channelExecs()).isEqualTo(before);
        assertThat(channels(id)).isEmpty();
    }

    @Test
    @DisplayName("an image without a shell: AUTO falls back to plain execs, CHANNEL fails with the reason")
    void noShellImage() throws IOException {
        String image = noShellImage("sandboxkit-test-noshell-ch");

        String auto = start(driver, instanceId, "c-noshell-auto", spec().image(image).build());
        ExecResult r = exec(auto, ExecRequest.of("/bin/busybox", "echo", "plain"));
        assertThat(r.stdout()).isEqualTo("plain\n");
        assertThat(ChannelProbe.unavailable(driver.channels(), auto)).isNotNull();

        String strict = start(driver, instanceId, "c-noshell-strict", spec().image(image).execMode(ExecMode.CHANNEL).build());
        assertThatThrownBy(() -> exec(strict, ExecRequest.of("/bin/busybox", "true")))
                .isInstanceOf(SandboxExecException.class).hasMessageContaining("ExecMode.CHANNEL");
    }

    @Test
    @DisplayName("a command on the channel sees what a plain exec sees: env, working dir, user, signals, its own session")
    void sameProcessEnvironmentAsAPlainExec() {
        String id = start(driver, instanceId, "c-fidelity", spec().env("SPEC_VAR", "x").build());
        EngineExec plain = new EngineExec(new EngineClient(DockerHost.resolve(context("probe", root))));
        ExecRequest probe = ExecRequest.shell("env | grep -v '^SANDBOXKIT_EXEC_ID=' | grep -v '^SHLVL=' | "
                        + "grep -v '^PWD=' | sort; pwd; id; umask; grep -E '^Sig(Blk|Ign)' /proc/$$/status; "
                        + "read -r pid comm state ppid pgrp sid rest </proc/$$/stat; "
                        + "[ \"$pid\" = \"$sid\" ] && echo session-leader; cat /proc/$$/environ | tr '\\0' '\\n' | "
                        + "grep -c '^SHLVL=\\|^PWD=\\|^OLDPWD='")
                .withEnv("EXEC_VAR", "y z").withWorkingDir("/workspace");
        long before = channelExecs();

        ExecResult viaChannel = exec(id, probe);
        ExecResult viaPlain = plain.exec(id, probe);

        assertThat(channelExecs()).isEqualTo(before + 1);
        assertThat(viaChannel.stdout()).isEqualTo(viaPlain.stdout()).contains("EXEC_VAR=y z").contains("session-leader");
        assertThat(viaChannel.exitCode()).isEqualTo(viaPlain.exitCode());
    }

    @Test
    @DisplayName("requests the channel does not carry (odd env names, big stdin) run plain and behave the same")
    void uncarriableRequestsRunPlain() {
        long plainBefore = plainExecs();
        // The shell drops such names from what it passes on: read its own environment.
        ExecResult oddName = exec(shared, ExecRequest.shell("tr '\\0' '\\n' </proc/$$/environ | grep '^my-var='")
                .withEnv("my-var", "1"));
        assertThat(oddName.stdout()).isEqualTo("my-var=1\n");
        byte[] big = new byte[ChannelProbe.MAX_STDIN + 1];
        assertThat(exec(shared, ExecRequest.of("wc", "-c").withStdin(big)).stdout().strip())
                .isEqualTo(Integer.toString(big.length));
        assertThat(plainExecs()).isEqualTo(plainBefore + 2);
    }

    // ------------------------------------------------------------------ clean-up

    @Test
    @DisplayName("remove closes the sandbox's channels: sockets and threads do not grow over create/exec/remove cycles")
    void removeLeaksNothing() throws Exception {
        // One cycle first, so that the connection pools of docker-java and of the engine client reach their size.
        removeCycle("c-leak-warm");
        long fdsBefore = openFds();
        long threadsBefore = driverThreads();

        for (int cycle = 0; cycle < 3; cycle++) {
            List<Channel> opened = removeCycle("c-leak-" + cycle);
            assertThat(opened).isNotEmpty().allMatch(Channel::broken);
        }

        // 3 cycles x up to 4 channels: a leak would show as a dozen more fds.
        assertThat(openFds()).as("open fds after 3 cycles").isLessThanOrEqualTo(fdsBefore + 3);
        assertThat(driverThreads()).as("threads after 3 cycles (this test's executor not counted)")
                .isLessThanOrEqualTo(threadsBefore);
    }

    /** Creates a sandbox, runs 4 execs at once on it (4 channels), removes it; returns the channels it had. */
    private List<Channel> removeCycle(String session) throws Exception {
        String id = start(driver, instanceId, session, spec().build());
        List<Future<ExecResult>> running = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            running.add(threads.submit(() -> exec(id, ExecRequest.shell("sleep 0.5; echo ok"))));
        }
        for (Future<ExecResult> f : running) {
            assertThat(f.get(30, TimeUnit.SECONDS).stdout()).isEqualTo("ok\n");
        }
        List<Channel> opened = channels(id);
        driver.remove(id);
        assertThat(ChannelProbe.pool(driver.channels(), id)).isNull();
        return opened;
    }

    @Test
    @DisplayName("closing the driver ends idle supervisors and their relays, and removes their directories")
    void driverCloseEndsSupervisors() throws Exception {
        String owner = DockerTestSupport.newInstanceId();
        Path otherRoot = root.getParent().resolve("other");
        DockerSandboxDriver other = (DockerSandboxDriver) new DockerDriverProvider().create(context(owner, otherRoot));
        String id;
        try {
            id = start(other, owner, "c-close", spec().build());
            List<Future<ExecResult>> running = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                running.add(threads.submit(() -> other.exec(id, ExecRequest.shell("sleep 0.3"))));
            }
            for (Future<ExecResult> f : running) {
                f.get(30, TimeUnit.SECONDS);
            }
            assertThat(processes(id).stream().filter(l -> l.contains(ChannelProbe.LABEL))).isNotEmpty();
        } finally {
            other.close();
        }
        try {
            List<String> left = List.of();
            for (int i = 0; i < 50; i++) {
                left = processes(id).stream().filter(l -> l.contains(ChannelProbe.LABEL) || l.contains("cat o")
                        || l.contains("cat e")).toList();
                if (left.isEmpty()) {
                    break;
                }
                Thread.sleep(100);
            }
            assertThat(left).as("channel processes after close").isEmpty();
            assertThat(outside(id, "sh", "-c", "ls -a /tmp /dev/shm")).doesNotContain(".sandboxkit-");
        } finally {
            docker.removeContainerCmd(id).withForce(true).exec();
            DockerTestSupport.deleteTree(otherRoot);
        }
    }

    /** Live threads, without this test's executor threads (named pool-N-thread-M). */
    private static long driverThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
                .filter(t -> !t.getName().startsWith("pool-")).count();
    }

    private static long openFds() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }


    // ------------------------------------------------------------------ idle close

    @Test
    @DisplayName("a channel idle past docker.channelIdleTimeout is closed (supervisor gone) and the next exec opens one")
    void idleChannelIsClosedAndReopened() throws Exception {
        ManualClock clock = new ManualClock();
        DockerSandboxDriver idling = (DockerSandboxDriver) new DockerDriverProvider().create(new DriverContext(
                instanceId, root.resolveSibling("idle-workspaces"), clock, Map.of("docker.channelIdleTimeout", "PT1M")));
        try {
            String a = start(idling, instanceId, "c-idle-a", spec().build());
            String b = start(idling, instanceId, "c-idle-b", spec().build());
            assertThat(idling.exec(a, ExecRequest.of("true")).exitCode()).isZero();
            assertThat(idling.exec(b, ExecRequest.of("true")).exitCode()).isZero();
            List<Channel> channelsOfA = ChannelProbe.channels(idling.channels(), a);
            assertThat(channelsOfA).hasSize(1);
            assertThat(ChannelProbe.channels(idling.channels(), b)).hasSize(1);

            // Not idle long enough: the orphan sweep's list() keeps both.
            clock.advance(Duration.ofSeconds(59));
            idling.list(Map.of(SandboxLabels.OWNER, instanceId));
            assertThat(ChannelProbe.channels(idling.channels(), a)).isEqualTo(channelsOfA);
            assertThat(ChannelProbe.channels(idling.channels(), b)).hasSize(1);

            // Past the timeout, an exec in a runs on a's own channel and then closes b's.
            clock.advance(Duration.ofSeconds(2));
            long before = ChannelProbe.channelExecs(idling.channels());
            assertThat(idling.exec(a, ExecRequest.shell("echo still")).stdout()).isEqualTo("still\n");
            assertThat(ChannelProbe.channelExecs(idling.channels())).isEqualTo(before + 1);
            assertThat(ChannelProbe.channels(idling.channels(), a)).as("a's channel was just used").isEqualTo(channelsOfA);
            assertThat(ChannelProbe.channels(idling.channels(), b)).as("b's channel is closed").isEmpty();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (processes(b).stream().anyMatch(p -> p.contains(ChannelProbe.LABEL)) && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(processes(b)).as("the supervisor exited on end of file").noneMatch(p -> p.contains(ChannelProbe.LABEL));
            assertThat(outside(b, "ls", "-a", "/tmp")).as("and removed its directory").doesNotContain(".sandboxkit-");

            // The next exec in b opens a fresh channel and runs on it.
            ExecResult r = idling.exec(b, ExecRequest.shell("echo back; echo err >&2; exit 3"));
            assertThat(r.exitCode()).isEqualTo(3);
            assertThat(r.stdout()).isEqualTo("back\n");
            assertThat(r.stderr()).isEqualTo("err\n");
            assertThat(ChannelProbe.channelExecs(idling.channels())).isEqualTo(before + 2);
            assertThat(ChannelProbe.channels(idling.channels(), b)).hasSize(1);

            // After a whole idle period without execs, the orphan sweep's list() closes both.
            clock.advance(Duration.ofMinutes(2));
            idling.list(Map.of(SandboxLabels.OWNER, instanceId));
            assertThat(ChannelProbe.channels(idling.channels(), a)).isEmpty();
            assertThat(ChannelProbe.channels(idling.channels(), b)).isEmpty();
            assertThat(idling.exec(a, ExecRequest.of("true")).exitCode()).isZero();
            idling.remove(a);
            idling.remove(b);
        } finally {
            idling.close();
        }
    }

    @Test
    @DisplayName("docker.channelIdleTimeout must be a non-negative duration")
    void idleTimeoutIsValidated() {
        for (String bad : List.of("soon", "-PT1S")) {
            assertThatThrownBy(() -> new DockerDriverProvider().create(context(instanceId, root,
                    Map.of("docker.channelIdleTimeout", bad))))
                    .isInstanceOf(dev.sandboxkit.SandboxConfigurationException.class)
                    .hasMessageContaining("docker.channelIdleTimeout");
        }
    }
}
