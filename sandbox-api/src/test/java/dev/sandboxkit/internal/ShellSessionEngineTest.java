package dev.sandboxkit.internal;

import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.testkit.FakeExec;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.ShellSession;
import dev.sandboxkit.ShellSessionEndedException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The engine's side of shell sessions (the execs it sends, activity, end of session, serialisation), with a
 * fake driver and manual time. What the scripts do in a real shell is the conformance kit's part.
 */
class ShellSessionEngineTest {
    private static final Duration TTL = Duration.ofMinutes(30);
    private static final SandboxSpec SPEC = SandboxSpec.builder().image("img:1").env("SPEC_VAR", "v").build();
    private static final String STATE_DIR = "/tmp/.sandboxkit-shell-0123abcd";

    private ManualClock clock;
    private ManualScheduler scheduler;
    private FakeDriver fake;
    private SandboxManager manager;
    private ExecutorService threads;
    /** Commands the fake "shell" ran (argv[5] of the session's exec), in order. */
    private final List<String> scripts = new CopyOnWriteArrayList<>();
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicInteger maxInside = new AtomicInteger();
    private final CountDownLatch entered = new CountDownLatch(1);
    private volatile CountDownLatch block;
    private volatile String openAnswer = STATE_DIR;

    @BeforeEach
    void setUp() {
        clock = new ManualClock();
        scheduler = new ManualScheduler(clock);
        fake = new FakeDriver(clock)
                .when(x -> isOpen(x.command()), x -> FakeDriver.result(0, openAnswer, ""))
                .when(x -> isCommand(x.command()), x -> runCommand(x.command().get(5)));
        manager = SandboxManager.builder().driver(fake).clock(clock).scheduler(scheduler)
                .idleTimeout(TTL).reaperInterval(Duration.ofSeconds(10)).instanceId("mgr-1").build();
        threads = Executors.newCachedThreadPool();
    }

    @AfterEach
    void tearDown() {
        threads.shutdownNow();
        manager.close();
    }

    private static boolean isOpen(List<String> argv) {
        return argv.size() == 5 && argv.get(0).equals("/bin/sh") && argv.get(2).contains(".sandboxkit-shell-");
    }

    private static boolean isCommand(List<String> argv) {
        return argv.size() == 7 && argv.get(0).equals("/bin/sh") && argv.get(4).equals(STATE_DIR);
    }

    private ExecResult runCommand(String script) {
        int now = inside.incrementAndGet();
        maxInside.accumulateAndGet(now, Math::max);
        try {
            scripts.add(script);
            entered.countDown();
            CountDownLatch b = block;
            if (b != null) {
                b.await(30, TimeUnit.SECONDS);
            } else {
                Thread.sleep(5);
            }
            return FakeDriver.result(0, "ran " + script, "");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return FakeDriver.result(130, "", "");
        } finally {
            inside.decrementAndGet();
        }
    }

    private List<FakeExec> sessionExecs() {
        return fake.execs().stream().filter(x -> isCommand(x.command())).toList();
    }

    @Test
    void eachCommandIsOneExecWithTheSpecEnvTheScriptAndItsOwnEnvNames() {
        Sandbox sandbox = manager.acquire("s", SPEC);
        try (ShellSession shell = sandbox.shell()) {
            assertThat(shell.exec("cd src").stdout()).isEqualTo("ran cd src");
            shell.exec(ExecRequest.of("echo", "a b").withEnv("TOKEN", "t").withTimeout(Duration.ofSeconds(7)));
        }
        assertThat(scripts).containsExactly("cd src", "'echo' 'a b'");
        FakeExec last = sessionExecs().get(1);
        assertThat(last.request().env()).containsEntry("SPEC_VAR", "v").containsEntry("TOKEN", "t");
        assertThat(last.command().get(6)).as("names of the command's own env, never saved").isEqualTo("TOKEN");
        assertThat(last.request().timeout()).isEqualTo(Duration.ofSeconds(7));
        assertThat(last.request().workingDir()).isNull();
        FakeExec close = fake.execs().get(fake.execs().size() - 1);
        assertThat(close.command()).containsExactly("/bin/sh", "-c", "rm -rf \"$1\"", "sh", STATE_DIR);
    }

    @Test
    void aSandboxThatCannotCreateTheStateSaysWhy() {
        openAnswer = "";
        Sandbox sandbox = manager.acquire("s", SPEC);
        assertThatThrownBy(sandbox::shell).isInstanceOf(SandboxExecException.class)
                .hasMessageContaining("could not create").hasMessageContaining("session s");
    }

    @Test
    void aWorkingDirOrANonIdentifierEnvNameIsRefused() {
        try (ShellSession shell = manager.acquire("s", SPEC).shell()) {
            assertThatThrownBy(() -> shell.exec(ExecRequest.of("pwd").withWorkingDir("sub")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cd");
            assertThatThrownBy(() -> shell.exec(ExecRequest.of("pwd").withEnv("A-B", "x")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("A-B");
        }
        assertThat(scripts).isEmpty();
    }

    @Test
    void aRunningCommandIsActivityAndAReapEndsTheSession() throws Exception {
        Sandbox sandbox = manager.acquire("s", SPEC);
        ShellSession shell = sandbox.shell();
        block = new CountDownLatch(1);
        Future<ExecResult> running = threads.submit(() -> shell.exec("sleep 3600"));
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();

        scheduler.advance(TTL.multipliedBy(2));
        assertThat(sandbox.info().state()).as("not reaped while a shell command runs").isEqualTo(SessionState.ACTIVE);

        block.countDown();
        assertThat(running.get(10, TimeUnit.SECONDS).exitCode()).isZero();
        scheduler.advance(TTL.plusSeconds(20));

        assertThat(sandbox.info().state()).isEqualTo(SessionState.SUSPENDED);
        assertThat(shell.isOpen()).isFalse();
        assertThatThrownBy(() -> shell.exec("pwd")).isInstanceOf(ShellSessionEndedException.class)
                .hasMessageContaining("Sandbox.shell()");
        int execsBefore = fake.execs().size();
        shell.close();
        assertThat(fake.execs()).as("the state died with the sandbox: nothing to remove").hasSize(execsBefore);
        try (ShellSession fresh = sandbox.shell()) {
            assertThat(fresh.isOpen()).isTrue();
        }
        assertThat(sandbox.info().state()).as("opening a session resumed the sandbox").isEqualTo(SessionState.ACTIVE);
    }

    @Test
    void destroyEndsTheSession() {
        Sandbox sandbox = manager.acquire("s", SPEC);
        ShellSession shell = sandbox.shell();
        sandbox.destroy();
        assertThat(shell.isOpen()).isFalse();
        assertThatThrownBy(() -> shell.exec("pwd")).isInstanceOf(ShellSessionEndedException.class);
        shell.close();
    }

    @Test
    void closeEndsTheSessionAndIsIdempotent() {
        ShellSession shell = manager.acquire("s", SPEC).shell();
        shell.close();
        shell.close();
        assertThat(fake.execs().stream().filter(x -> x.command().get(2).startsWith("rm -rf"))).hasSize(1);
        assertThat(shell.isOpen()).isFalse();
        assertThatThrownBy(() -> shell.exec("pwd")).isInstanceOf(ShellSessionEndedException.class);
    }

    @Test
    void commandsOfOneSessionRunOneAtATime() throws Exception {
        ShellSession shell = manager.acquire("s", SPEC).shell();
        List<Future<ExecResult>> all = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 6; i++) {
            all.add(threads.submit(() -> shell.exec("x")));
        }
        for (Future<ExecResult> f : all) {
            f.get(10, TimeUnit.SECONDS);
        }
        assertThat(scripts).hasSize(6);
        assertThat(maxInside.get()).isEqualTo(1);
    }
}
