package dev.sandboxkit.docker;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ExecResult.Termination;
import dev.sandboxkit.TerminalSize;
import dev.sandboxkit.docker.internal.channel.ChannelProbe;
import dev.sandboxkit.spi.TerminalConnection;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.sandboxkit.docker.DockerTestSupport.spec;
import static dev.sandboxkit.docker.DockerTestSupport.start;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Terminals on the real engine through the SPI, for what the conformance kit does not cover: the route past the
 * command channel, images without a shell (no size wrapper), a removal under a reader, and both directions busy
 * at once on one connection.
 */
@Tag("slow")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DockerTerminalTest extends DriverOnDocker {
    private static final TerminalSize SIZE = TerminalSize.of(90, 25);
    private String shared;

    @Override
    String tempPrefix() {
        return "sbx-tty-";
    }

    @BeforeAll
    void startShared() {
        shared = start(driver, instanceId, "t-shared", spec().build());
    }

    @Test
    @DisplayName("a tty exec is a plain exec even under ExecMode.CHANNEL, and the channel still serves the rest")
    void ttyExecBypassesTheChannel() {
        String id = start(driver, instanceId, "t-channel", spec().execMode(ExecMode.CHANNEL).build());
        long plainBefore = ChannelProbe.plainExecs(driver.channels());
        long channelBefore = ChannelProbe.channelExecs(driver.channels());

        ExecResult tty = driver.exec(id, ExecRequest.of("tty").withTty(SIZE));
        ExecResult piped = driver.exec(id, ExecRequest.of("tty"));

        assertThat(tty.stdout()).matches("/dev/pts/[0-9]+\r\n");
        assertThat(piped.exitCode()).isNotZero();
        assertThat(ChannelProbe.plainExecs(driver.channels()) - plainBefore).isEqualTo(1);
        assertThat(ChannelProbe.channelExecs(driver.channels()) - channelBefore).isEqualTo(1);
    }

    @Test
    @DisplayName("an image without /bin/sh: the size is set by the engine's resize, a missing program exits 127")
    void imageWithoutShell() throws Exception {
        String image = noShellImage("sandboxkit-test-noshell-tty");
        String id = start(driver, instanceId, "t-noshell", spec().image(image).build());

        ExecResult tty = driver.exec(id, ExecRequest.of("/bin/busybox", "tty").withTty(SIZE));
        String shown;
        ExecResult status;
        try (TerminalConnection t = driver.openTerminal(id, ExecRequest.of("/bin/busybox", "tty").withTty(SIZE))) {
            shown = readAll(t.output());
            status = t.waitFor(Duration.ofSeconds(30)).orElseThrow();
        }
        String missing;
        ExecResult missingStatus;
        try (TerminalConnection t = driver.openTerminal(id, ExecRequest.of("/bin/no-such").withTty(SIZE))) {
            missing = readAll(t.output());
            missingStatus = t.waitFor(Duration.ofSeconds(30)).orElseThrow();
        }

        assertThat(tty.exitCode()).as(tty.stdout()).isZero();
        assertThat(tty.stdout()).matches("/dev/pts/[0-9]+\r\n");
        assertThat(shown).matches("/dev/pts/[0-9]+\r\n");
        assertThat(status.exitCode()).isZero();
        assertThat(missing).contains("/bin/no-such");
        assertThat(missingStatus.exitCode()).isEqualTo(127);
    }

    @Test
    @DisplayName("removing the container under a blocked reader ends its read with -1 and the status says KILLED")
    void removalEndsTheReader() throws Exception {
        String id = start(driver, instanceId, "t-remove", spec().build());
        try (TerminalConnection t = driver.openTerminal(id, ExecRequest.shell("echo ready; sleep 1000").withTty(SIZE))) {
            InputStream out = t.output();
            assertThat(readLine(out)).isEqualTo("ready\r\n");
            Future<String> rest = threads.submit(() -> readAll(out));

            driver.remove(id);

            assertThat(rest.get(30, TimeUnit.SECONDS)).isEmpty();
            assertThat(t.waitFor(Duration.ofSeconds(30)).orElseThrow().termination()).isEqualTo(Termination.KILLED);
        }
    }

    @Test
    @DisplayName("one thread writes 200 KB while another reads the echo: neither direction holds up the other")
    void bothDirectionsAtOnce() throws Exception {
        String line = "x".repeat(99) + "\n";
        int lines = 2000;
        try (TerminalConnection t = driver.openTerminal(shared, ExecRequest.shell("stty -echo; echo ready; "
                + "while read l; do echo \"${#l}\"; done").withTty(SIZE))) {
            InputStream out = t.output();
            assertThat(readLine(out)).isEqualTo("ready\r\n");
            Future<Integer> echoed = threads.submit(() -> {
                int seen = 0;
                StringBuilder pending = new StringBuilder();
                byte[] buffer = new byte[8192];
                while (seen < lines) {
                    int n = out.read(buffer);
                    if (n < 0) {
                        break;
                    }
                    pending.append(new String(buffer, 0, n, StandardCharsets.US_ASCII));
                    int at;
                    while ((at = pending.indexOf("99\r\n")) >= 0) {
                        seen++;
                        pending.delete(0, at + 4);
                    }
                }
                return seen;
            });

            byte[] bytes = line.getBytes(StandardCharsets.US_ASCII);
            for (int i = 0; i < lines; i++) {
                t.input().write(bytes);
            }

            assertThat(echoed.get(60, TimeUnit.SECONDS)).isEqualTo(lines);
        }
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) >= 0) {
            line.write(b);
            if (b == '\n') {
                break;
            }
        }
        return line.toString(StandardCharsets.UTF_8);
    }

    private static String readAll(InputStream in) throws IOException {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
}
