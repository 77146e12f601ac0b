package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.SandboxUnsupportedException;
import dev.sandboxkit.Terminal;
import dev.sandboxkit.TerminalSize;
import dev.sandboxkit.spi.ComputeCapability;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@link ComputeDriverTck}'s terminals group ({@link dev.sandboxkit.Terminal}, tty execs). */
abstract class TerminalConformance extends KitSupport {
    /** How long a terminal test waits for output to appear or end. */
    private static final int TRANSCRIPT_SECONDS = 30;

    private final TerminalSize size = TerminalSize.of(100, 30);

    TerminalConformance(DriverKit kit) {
        super(kit);
    }

    @Test
    @DisplayName("an exec with a tty runs on a terminal; the output arrives merged on stdout")
    void ttyExec() {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.TTY);
        Sandbox sandbox = acquire();

        // Not `tty`: gVisor cannot name the terminal (ttyname fails) although it is one.
        String probe = "[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo terminal";
        ExecResult tty = sandbox.exec(ExecRequest.shell(probe).withTty(size));
        ExecResult stty = sandbox.exec(ExecRequest.of("stty", "size").withTty(size));
        ExecResult merged = sandbox.exec(ExecRequest.shell("echo out; echo err >&2; exit 3").withTty(size));
        ExecResult plain = sandbox.exec(ExecRequest.shell(probe));

        assertThat(tty.stdout()).isEqualTo("terminal\r\n");
        assertThat(stty.stdout()).isEqualTo("30 100\r\n");
        assertThat(merged.exitCode()).isEqualTo(3);
        assertThat(merged.stdout()).isEqualTo("out\r\nerr\r\n");
        assertThat(merged.stderr()).isEmpty();
        assertThat(plain.stdout()).as("without a tty").isEmpty();
    }

    @Test
    @DisplayName("an exec with a tty gets its stdin bytes typed at the terminal")
    void ttyExecStdin() {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.TTY);
        Sandbox sandbox = acquire();

        ExecResult r = sandbox.exec(ExecRequest.shell("read l; echo \"got $l\"").withStdin("hello\n")
                .withTty(size).withTimeout(Duration.ofSeconds(30)));

        assertThat(r.exitCode()).isZero();
        assertThat(r.stdout()).contains("got hello\r\n");
    }

    @Test
    @DisplayName("a shell reading lines round-trips what is typed; Ctrl-D ends it with its exit code")
    void interactiveSession() throws Exception {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.TTY);
        Sandbox sandbox = acquire();
        try (Terminal t = sandbox.terminal(ExecRequest.shell("while read l; do echo \"got $l\"; done; exit 7")
                .withTty(size)); Transcript out = new Transcript(t)) {
            type(t, "one\r");
            out.await("got one\r\n");
            type(t, "two words\n");
            out.await("got two words\r\n");
            type(t, "\u0004");

            assertThat(out.awaitEnd()).startsWith("one\r\ngot one\r\n");
            ExecResult status = t.waitFor(Duration.ofSeconds(30)).orElseThrow();
            assertThat(status.exitCode()).isEqualTo(7);
            assertThat(status.termination()).isEqualTo(ExecResult.Termination.EXITED);
        }
    }

    @Test
    @DisplayName("stty size reports the requested size and follows a resize")
    void resize() throws Exception {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.TTY);
        Sandbox sandbox = acquire();
        try (Terminal t = sandbox.terminal(ExecRequest.shell(
                "stty size; while read l; do stty size; [ \"$l\" = q ] && exit 0; done").withTty(size));
             Transcript out = new Transcript(t)) {
            out.await("30 100\r\n");

            t.resize(TerminalSize.of(132, 43));
            // Podman's conmon applies a resize a moment after the call returns (Terminal#resize): ask again.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TRANSCRIPT_SECONDS);
            do {
                type(t, "\r");
            } while (!out.shows("43 132\r\n", 200) && System.nanoTime() < deadline);
            type(t, "q\r");

            out.await("43 132\r\n");
            assertThat(t.size()).isEqualTo(TerminalSize.of(132, 43));
            assertThat(t.waitFor(Duration.ofSeconds(30)).orElseThrow().exitCode()).isZero();
        }
    }

    @Test
    @DisplayName("Ctrl-C on the input interrupts the program in the foreground")
    void ctrlC() throws Exception {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.TTY);
        Sandbox sandbox = acquire();
        try (Terminal t = sandbox.terminal(ExecRequest.shell("echo ready; exec sleep 100").withTty(size));
             Transcript out = new Transcript(t)) {
            out.await("ready\r\n");
            assertThat(t.waitFor(Duration.ZERO)).as("still running").isEmpty();

            type(t, "\u0003");

            out.awaitEnd();
            ExecResult status = t.waitFor(Duration.ofSeconds(30)).orElseThrow();
            assertThat(status.exitCode()).as("killed by SIGINT").isEqualTo(130);
            assertThat(status.termination()).isEqualTo(ExecResult.Termination.EXITED);
        }
    }

    @Test
    @DisplayName("closing a terminal kills what runs on it and ends its output")
    void closeKills() throws Exception {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.TTY);
        Sandbox sandbox = acquire();
        Terminal t = sandbox.terminal(ExecRequest.shell("sleep 4242 & echo ready; wait").withTty(size));
        try (Transcript out = new Transcript(t)) {
            out.await("ready\r\n");

            t.close();

            out.awaitEnd();
            assertThat(t.waitFor(Duration.ofSeconds(30)).orElseThrow().termination())
                    .isEqualTo(ExecResult.Termination.KILLED);
        }
        assertEventually(() -> sh(sandbox, "ps -o args").stdout(), ps -> !ps.contains("sleep 4242"));
        t.close(); // idempotent
    }

    @Test
    @DisplayName("a program that cannot start shows why on the terminal and exits 127")
    void missingProgram() throws Exception {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.TTY);
        Sandbox sandbox = acquire();
        try (Terminal t = sandbox.terminal(ExecRequest.of("no-such-program").withTty(size));
             Transcript out = new Transcript(t)) {
            assertThat(out.awaitEnd()).contains("no-such-program");
            assertThat(t.waitFor(Duration.ofSeconds(30)).orElseThrow().exitCode()).isEqualTo(127);
        }
    }

    @Test
    @DisplayName("the request's timeout kills the program and the status says TIMED_OUT")
    void timeout() throws Exception {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.TTY);
        Sandbox sandbox = acquire();
        try (Terminal t = sandbox.terminal(ExecRequest.of("sleep", "100").withTty(size)
                .withTimeout(Duration.ofSeconds(1)))) {
            ExecResult status = t.waitFor(Duration.ofSeconds(60)).orElseThrow();

            assertThat(status.termination()).isEqualTo(ExecResult.Termination.TIMED_OUT);
        }
    }

    @Test
    @DisplayName("a terminal racing a destroy ends with the end of its output and KILLED, not a hang")
    void destroyEndsIt() throws Exception {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.TTY);
        Sandbox sandbox = acquire();
        assertEndedBy(sandbox, sandbox::destroy);
    }

    @Test
    @DisplayName("the idle reaper waits for a running terminal and reaps once it is closed")
    void holdsOffTheReaper() throws Exception {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.TTY);
        Sandbox sandbox = acquire();
        Terminal t = sandbox.terminal(ExecRequest.shell("echo ready; read l").withTty(size));
        try (Transcript out = new Transcript(t)) {
            out.await("ready\r\n");

            scheduler.advance(TTL.plus(REAPER_INTERVAL));
            assertThat(sandbox.info().state()).isEqualTo(SessionState.ACTIVE);

            t.close();
            scheduler.advance(TTL.plus(REAPER_INTERVAL));
            assertThat(sandbox.info().state()).isEqualTo(SessionState.SUSPENDED);
            out.awaitEnd();
        }
    }

    @Test
    @DisplayName("closing the manager ends its terminals")
    void managerCloseEndsIt() throws Exception {
        requireCapability(ComputeCapability.REAL_PROCESSES, ComputeCapability.TTY);
        try {
            assertEndedBy(acquire(), manager::close);
        } finally {
            manager = newManager(); // for the clean-up
        }
    }

    /** Runs {@code end} under a running terminal: its output must end, and its status say KILLED. */
    private void assertEndedBy(Sandbox sandbox, Runnable end) throws Exception {
        try (Terminal t = sandbox.terminal(ExecRequest.shell("echo ready; sleep 1000").withTty(size));
             Transcript out = new Transcript(t)) {
            out.await("ready\r\n");

            end.run();

            out.awaitEnd();
            assertThat(t.waitFor(Duration.ofSeconds(30)).orElseThrow().termination())
                    .isEqualTo(ExecResult.Termination.KILLED);
        }
    }

    @Test
    @DisplayName("without the TTY capability a terminal or a tty exec is refused as unsupported")
    void unsupported() {
        assumeTrue(!capabilities.contains(ComputeCapability.TTY), "the driver declares TTY");
        Sandbox sandbox = acquire();

        assertThatThrownBy(() -> sandbox.terminal(ExecRequest.of("sh").withTty(size)))
                .isInstanceOf(SandboxUnsupportedException.class);
        assertThatThrownBy(() -> sandbox.exec(ExecRequest.of("tty").withTty(size)))
                .isInstanceOf(SandboxUnsupportedException.class);
    }

    @Test
    @DisplayName("a terminal needs a size")
    void needsASize() {
        Sandbox sandbox = acquire();

        assertThatThrownBy(() -> sandbox.terminal(ExecRequest.of("sh")))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private static void type(Terminal t, String keys) throws IOException {
        t.input().write(keys.getBytes(StandardCharsets.UTF_8));
    }

    /** Polls until the value satisfies the condition, for up to 30 s. */
    private static <T> void assertEventually(java.util.function.Supplier<T> value,
                                             java.util.function.Predicate<T> condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        T last = value.get();
        while (!condition.test(last) && System.nanoTime() < deadline) {
            sleep(100);
            last = value.get();
        }
        assertThat(condition.test(last)).as("condition never held; last value: %s", last).isTrue();
    }

    /**
     * Everything a terminal displays, read on a thread of the test's own (the library starts none): tests wait
     * for text to appear, or for the end of the output, each for at most {@value #TRANSCRIPT_SECONDS} s.
     */
    private static final class Transcript implements AutoCloseable {
        private final StringBuffer text = new StringBuffer();
        private final java.util.concurrent.CountDownLatch end = new java.util.concurrent.CountDownLatch(1);
        private final Thread reader;

        Transcript(Terminal terminal) {
            reader = new Thread(() -> {
                byte[] buffer = new byte[4096];
                try {
                    int n;
                    while ((n = terminal.output().read(buffer)) >= 0) {
                        text.append(new String(buffer, 0, n, StandardCharsets.UTF_8));
                    }
                } catch (IOException e) {
                    text.append("<read failed: ").append(e).append('>');
                } finally {
                    end.countDown();
                }
            }, "tck-terminal-reader");
            reader.setDaemon(true);
            reader.start();
        }

        void await(String expected) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TRANSCRIPT_SECONDS);
            while (text.indexOf(expected) < 0 && System.nanoTime() < deadline && end.getCount() > 0) {
                sleep(10);
            }
            assertThat(text.toString()).as("terminal output").contains(expected);
        }

        /** Whether the text appears within the given milliseconds. */
        boolean shows(String expected, long millis) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
            while (text.indexOf(expected) < 0 && System.nanoTime() < deadline && end.getCount() > 0) {
                sleep(10);
            }
            return text.indexOf(expected) >= 0;
        }

        String awaitEnd() throws InterruptedException {
            assertThat(end.await(TRANSCRIPT_SECONDS, TimeUnit.SECONDS))
                    .as("the output ended; so far: %s", text).isTrue();
            return text.toString();
        }

        @Override
        public void close() throws InterruptedException {
            reader.interrupt();
            reader.join(TimeUnit.SECONDS.toMillis(TRANSCRIPT_SECONDS));
        }
    }
}
