package dev.sandboxkit.testkit;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.ShellSession;
import dev.sandboxkit.ShellSessionEndedException;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.DriverCapability;
import dev.sandboxkit.spi.DriverShell;
import dev.sandboxkit.spi.SandboxDescriptor;
import dev.sandboxkit.spi.SandboxDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The engine's side of shell sessions (activity, end of session, serialisation), with a fake driver and manual time. */
class ShellSessionEngineTest {
    private static final Duration TTL = Duration.ofMinutes(30);
    private static final SandboxSpec SPEC = SandboxSpec.builder().image("img:1").env("SPEC_VAR", "v").build();

    private ManualClock clock;
    private ManualScheduler scheduler;
    private FakeDriver fake;
    private ShellDriver driver;
    private SandboxManager manager;
    private ExecutorService threads;

    @BeforeEach
    void setUp() {
        clock = new ManualClock();
        scheduler = new ManualScheduler(clock);
        fake = new FakeDriver(clock);
        driver = new ShellDriver(fake);
        manager = SandboxManager.builder().driver(driver).clock(clock).scheduler(scheduler)
                .idleTimeout(TTL).reaperInterval(Duration.ofSeconds(10)).instanceId("mgr-1").build();
        threads = Executors.newCachedThreadPool();
    }

    @AfterEach
    void tearDown() {
        threads.shutdownNow();
        manager.close();
    }

    @Test
    void aDriverWithoutShellsSaysSo() {
        SandboxManager plain = SandboxManager.builder().driver(new FakeDriver(clock)).clock(clock).scheduler(scheduler)
                .instanceId("mgr-2").build();
        try {
            Sandbox sandbox = plain.acquire("s", SPEC);
            assertThatThrownBy(sandbox::shell).isInstanceOf(SandboxConfigurationException.class)
                    .hasMessageContaining("does not support shell sessions");
        } finally {
            plain.close();
        }
    }

    @Test
    void theShellGetsTheSpecEnvAndTheScript() {
        Sandbox sandbox = manager.acquire("s", SPEC);
        try (ShellSession shell = sandbox.shell()) {
            shell.exec("cd src");
            shell.exec(ExecRequest.of("echo", "a b").withEnv("TOKEN", "t"));
        }
        FakeShell opened = driver.shells.get(0);
        assertThat(opened.env).containsEntry("SPEC_VAR", "v");
        assertThat(opened.scripts).containsExactly("cd src", "'echo' 'a b'");
        assertThat(opened.lastOptions.env()).as("only the command's own env, not the spec's").containsOnlyKeys("TOKEN");
        assertThat(opened.closed).isTrue();
    }

    @Test
    void aRunningCommandIsActivityAndAReapEndsTheSession() throws Exception {
        Sandbox sandbox = manager.acquire("s", SPEC);
        ShellSession shell = sandbox.shell();
        FakeShell opened = driver.shells.get(0);
        opened.block = new CountDownLatch(1);
        Future<ExecResult> running = threads.submit(() -> shell.exec("sleep 3600"));
        opened.entered.await(10, TimeUnit.SECONDS);

        scheduler.advance(TTL.multipliedBy(2));
        assertThat(sandbox.info().state()).as("not reaped while a shell command runs").isEqualTo(SessionState.ACTIVE);

        opened.block.countDown();
        assertThat(running.get(10, TimeUnit.SECONDS).exitCode()).isZero();
        scheduler.advance(TTL.plusSeconds(20));

        assertThat(sandbox.info().state()).isEqualTo(SessionState.SUSPENDED);
        assertThat(shell.isOpen()).isFalse();
        assertThatThrownBy(() -> shell.exec("pwd")).isInstanceOf(ShellSessionEndedException.class);
        try (ShellSession fresh = sandbox.shell()) {
            assertThat(fresh.isOpen()).isTrue();
            assertThat(driver.shells).hasSize(2);
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
    }

    @Test
    void closeEndsTheSessionAndIsIdempotent() {
        ShellSession shell = manager.acquire("s", SPEC).shell();
        shell.close();
        shell.close();
        assertThat(driver.shells.get(0).closeCount.get()).isEqualTo(1);
        assertThatThrownBy(() -> shell.exec("pwd")).isInstanceOf(ShellSessionEndedException.class);
    }

    @Test
    void commandsOfOneSessionRunOneAtATime() throws Exception {
        ShellSession shell = manager.acquire("s", SPEC).shell();
        FakeShell opened = driver.shells.get(0);
        List<Future<ExecResult>> all = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 6; i++) {
            all.add(threads.submit(() -> shell.exec("x")));
        }
        for (Future<ExecResult> f : all) {
            f.get(10, TimeUnit.SECONDS);
        }
        assertThat(opened.maxConcurrent.get()).isEqualTo(1);
    }

    /** FakeDriver plus shells that record what they are asked to run. */
    private static final class ShellDriver implements SandboxDriver {
        private final FakeDriver delegate;
        final List<FakeShell> shells = new CopyOnWriteArrayList<>();

        ShellDriver(FakeDriver delegate) {
            this.delegate = delegate;
        }

        @Override
        public DriverShell openShell(String sandboxId, Map<String, String> env) {
            if (!delegate.liveSandboxes().contains(sandboxId)) {
                throw new dev.sandboxkit.SandboxNotFoundException(sandboxId);
            }
            FakeShell shell = new FakeShell(sandboxId, env);
            shells.add(shell);
            return shell;
        }

        @Override
        public String name() {
            return "fake-shell";
        }

        @Override
        public Set<DriverCapability> capabilities() {
            EnumSet<DriverCapability> caps = EnumSet.noneOf(DriverCapability.class);
            caps.addAll(delegate.capabilities());
            caps.add(DriverCapability.SHELL_SESSIONS);
            return caps;
        }

        @Override
        public void ping() {
            delegate.ping();
        }

        @Override
        public String createWorkspace(String sessionId, SandboxSpec spec) {
            return delegate.createWorkspace(sessionId, spec);
        }

        @Override
        public void deleteWorkspace(String workspace) {
            delegate.deleteWorkspace(workspace);
        }

        @Override
        public String create(CreateRequest request) {
            return delegate.create(request);
        }

        @Override
        public ExecResult exec(String sandboxId, ExecRequest request) {
            return delegate.exec(sandboxId, request);
        }

        @Override
        public void remove(String sandboxId) {
            delegate.remove(sandboxId);
        }

        @Override
        public List<SandboxDescriptor> list(Map<String, String> labels) {
            return delegate.list(labels);
        }

        @Override
        public void close() {
            delegate.close();
        }
    }

    private static final class FakeShell implements DriverShell {
        final String sandboxId;
        final Map<String, String> env;
        final List<String> scripts = new CopyOnWriteArrayList<>();
        final CountDownLatch entered = new CountDownLatch(1);
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger maxConcurrent = new AtomicInteger();
        final AtomicInteger closeCount = new AtomicInteger();
        volatile CountDownLatch block;
        volatile ExecRequest lastOptions;
        volatile boolean closed;

        FakeShell(String sandboxId, Map<String, String> env) {
            this.sandboxId = sandboxId;
            this.env = Map.copyOf(env);
        }

        @Override
        public String sandboxId() {
            return sandboxId;
        }

        @Override
        public ExecResult run(String script, ExecRequest options) {
            int now = inside.incrementAndGet();
            maxConcurrent.accumulateAndGet(now, Math::max);
            try {
                scripts.add(script);
                lastOptions = options;
                entered.countDown();
                CountDownLatch b = block;
                if (b != null) {
                    b.await(30, TimeUnit.SECONDS);
                } else {
                    Thread.sleep(5);
                }
                return FakeDriver.result(0, "", "");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            } finally {
                inside.decrementAndGet();
            }
        }

        @Override
        public void close() {
            closed = true;
            closeCount.incrementAndGet();
        }
    }
}
