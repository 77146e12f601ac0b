package dev.sandboxkit.internal;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.Terminal;
import dev.sandboxkit.TerminalSize;
import dev.sandboxkit.spi.ComputeCapability;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.TerminalConnection;
import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A terminal's exec slot: once {@code close()} returns, the terminal no longer holds off the reaper, even when
 * the reader of its output saw the end first and is still releasing the slot (a race Podman's quick end of
 * output exposed in the conformance kit).
 */
class TerminalSlotTest {
    private static final Duration TTL = Duration.ofMinutes(30);

    private final ManualClock time = new ManualClock();
    private final ManualScheduler scheduler = new ManualScheduler(time);
    private final GatedClock clock = new GatedClock(time);
    private final EndOnClose connection = new EndOnClose(clock.reached);
    private SandboxManager manager;

    @AfterEach
    void tearDown() {
        clock.gate.countDown();
        if (manager != null) {
            manager.close();
        }
    }

    @Test
    void closeReturnsOnlyOnceTheSlotIsReleased() throws Exception {
        manager = SandboxManager.builder().driver(withTerminals(new FakeDriver(time), connection)).clock(clock)
                .scheduler(scheduler).idleTimeout(TTL).reaperInterval(Duration.ofSeconds(10)).build();
        Sandbox sandbox = manager.acquire("s", SandboxSpec.builder().image("img:1").build());
        Terminal terminal = sandbox.terminal(ExecRequest.shell("sh").withTty(TerminalSize.of(80, 24)));

        Thread reader = new Thread(() -> {
            try (InputStream out = terminal.output()) {
                out.transferTo(OutputStream.nullOutputStream());
            } catch (Exception ignored) {
                // the end of output is all this thread is for
            }
        }, "terminal-reader");
        clock.slowThread = reader;
        reader.start();
        assertThat(clock.reached.getCount()).as("the output has not ended yet").isOne();

        // close() ends the output and lets the reader release the slot first, slowly; close() must wait for it.
        Thread opener = new Thread(() -> {
            try {
                clock.reached.await();
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            clock.gate.countDown();
        }, "gate-opener");
        opener.start();
        terminal.close();
        assertThat(clock.reached.getCount()).as("the reader was releasing the slot").isZero();

        scheduler.advance(TTL.plus(Duration.ofSeconds(10)));
        assertThat(sandbox.info().state()).isEqualTo(SessionState.SUSPENDED);
        reader.join(10_000);
        opener.join(10_000);
    }

    /** The fake driver, plus terminals that all share one connection. */
    private static SandboxDriver withTerminals(FakeDriver fake, TerminalConnection connection) {
        return (SandboxDriver) Proxy.newProxyInstance(SandboxDriver.class.getClassLoader(),
                new Class<?>[]{SandboxDriver.class}, (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "openTerminal":
                            return connection;
                        case "computeCapabilities":
                            Set<ComputeCapability> caps = EnumSet.noneOf(ComputeCapability.class);
                            caps.addAll(fake.computeCapabilities());
                            caps.add(ComputeCapability.TTY);
                            return caps;
                        default:
                            try {
                                return method.invoke(fake, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                    }
                });
    }

    /** A terminal whose output ends when it is closed; closing returns once the reader is releasing the slot. */
    private static final class EndOnClose implements TerminalConnection {
        private final CountDownLatch closed = new CountDownLatch(1);
        private final CountDownLatch readerReleasing;

        EndOnClose(CountDownLatch readerReleasing) {
            this.readerReleasing = readerReleasing;
        }

        @Override
        public OutputStream input() {
            return new ByteArrayOutputStream();
        }

        @Override
        public InputStream output() {
            return new InputStream() {
                @Override
                public int read() {
                    try {
                        closed.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return -1;
                }
            };
        }

        @Override
        public void resize(TerminalSize size) {
        }

        @Override
        public Optional<ExecResult> waitFor(Duration timeout) {
            return Optional.empty();
        }

        @Override
        public void close() {
            closed.countDown();
            try {
                readerReleasing.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The manual clock, but the first read on one thread waits for a gate: a slow release of the slot. */
    private static final class GatedClock extends Clock {
        private final ManualClock time;
        final CountDownLatch reached = new CountDownLatch(1);
        final CountDownLatch gate = new CountDownLatch(1);
        volatile Thread slowThread;

        GatedClock(ManualClock time) {
            this.time = time;
        }

        @Override
        public Instant instant() {
            if (Thread.currentThread() == slowThread && reached.getCount() > 0) {
                reached.countDown();
                try {
                    gate.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return time.instant();
        }

        @Override
        public ZoneId getZone() {
            return time.getZone();
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }
}
