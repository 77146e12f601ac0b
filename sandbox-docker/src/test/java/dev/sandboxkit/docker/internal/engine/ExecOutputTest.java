package dev.sandboxkit.docker.internal.engine;

import dev.sandboxkit.ExecStream;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The demultiplexer on its own: frame boundaries, caps, the held start-failure frame. */
class ExecOutputTest {

    @Test
    void demultiplexesWhateverTheReadBoundaries() {
        byte[] big = new byte[70_000];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) (i * 31);
        }
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        frame(stream, 1, "hello ".getBytes(StandardCharsets.UTF_8));
        frame(stream, 2, "err".getBytes(StandardCharsets.UTF_8));
        frame(stream, 1, new byte[0]);
        frame(stream, 1, big);
        frame(stream, 3, "engine".getBytes(StandardCharsets.UTF_8));
        byte[] all = stream.toByteArray();

        for (int chunk : new int[] {1, 2, 3, 7, 8, 9, 13, 4096, all.length}) {
            ByteArrayOutputStream seenOut = new ByteArrayOutputStream();
            ByteArrayOutputStream seenErr = new ByteArrayOutputStream();
            ExecOutput out = new ExecOutput(100_000, 100_000, (s, b, o, l) ->
                    (s == ExecStream.STDOUT ? seenOut : seenErr).write(b, o, l));
            for (int i = 0; i < all.length; i += chunk) {
                out.consume(ByteBuffer.wrap(all, i, Math.min(chunk, all.length - i)).slice());
            }
            assertThat(out.finish(0, false)).isZero();
            byte[] expectedOut = concat("hello ".getBytes(StandardCharsets.UTF_8), big);
            assertThat(out.stdout()).as("chunk %d", chunk).isEqualTo(expectedOut);
            assertThat(seenOut.toByteArray()).as("chunk %d", chunk).isEqualTo(expectedOut);
            assertThat(new String(out.stderr(), StandardCharsets.UTF_8)).isEqualTo("errengine");
            assertThat(seenErr.toString(StandardCharsets.UTF_8)).isEqualTo("errengine");
            assertThat(out.stdoutTruncated()).isFalse();
        }
    }

    @Test
    void keepsOnlyTheCapButTheListenerSeesEverything() {
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        frame(stream, 1, new byte[3000]);
        frame(stream, 2, "abcdef".getBytes(StandardCharsets.UTF_8));
        long[] seen = new long[1];
        ExecOutput out = new ExecOutput(1000, 4, (s, b, o, l) -> seen[0] += l);
        out.consume(ByteBuffer.wrap(stream.toByteArray()));

        assertThat(out.stdout()).hasSize(1000);
        assertThat(out.stdoutTruncated()).isTrue();
        assertThat(new String(out.stderr(), StandardCharsets.UTF_8)).isEqualTo("abcd");
        assertThat(out.stderrTruncated()).isTrue();
        assertThat(seen[0]).isEqualTo(3006);
    }

    @Test
    void turnsRuncsStartFailureIntoStderrAndAShellExitCode() {
        String message = "OCI runtime exec failed: exec failed: unable to start container process: exec: \"nope\": "
                + "executable file not found in $PATH: unknown\r\n";
        List<ExecStream> streams = new ArrayList<>();
        ExecOutput out = new ExecOutput(1000, 1000, (s, b, o, l) -> streams.add(s));
        out.consume(ByteBuffer.wrap(frame(1, message)));

        assertThat(streams).isEmpty(); // held until the exit code is known
        assertThat(out.finish(126, true)).isEqualTo(127);
        assertThat(out.stdout()).isEmpty();
        assertThat(new String(out.stderr(), StandardCharsets.UTF_8)).isEqualTo(message);
        assertThat(streams).containsExactly(ExecStream.STDERR);
    }

    @Test
    void holdsTheEnginesOwnErrorLinesOfAnExecThatRacedItsContainersRemoval() {
        for (String message : List.of("cannot exec in a stopped state: unknown\r\n", "container is not running\r\n",
                "message length 6554753 exceed maximum message size of 4194304: unknown\r\n")) {
            List<ExecStream> streams = new ArrayList<>();
            ExecOutput out = new ExecOutput(1000, 1000, (s, b, o, l) -> streams.add(s));
            out.consume(ByteBuffer.wrap(frame(1, message)));

            assertThat(streams).as(message).isEmpty();
            assertThat(out.heldStartFailure()).isEqualTo(message);
            assertThat(out.finish(126, true)).isEqualTo(126);
            assertThat(new String(out.stderr(), StandardCharsets.UTF_8)).isEqualTo(message);
            assertThat(out.stdout()).isEmpty();
        }
        // Ordinary lines, with or without CRLF, stream at once.
        for (String line : List.of("hello\r\n", "it is not running\n", "two\r\nlines: unknown\r\n")) {
            List<ExecStream> streams = new ArrayList<>();
            ExecOutput out = new ExecOutput(1000, 1000, (s, b, o, l) -> streams.add(s));
            out.consume(ByteBuffer.wrap(frame(1, line)));
            assertThat(streams).as(line).containsExactly(ExecStream.STDOUT);
            assertThat(out.heldStartFailure()).isNull();
        }
    }

    @Test
    void tellsCommandFailuresFromAContainerGoingAway() {
        assertThat(EngineErrors.commandFailure("OCI runtime exec failed: exec failed: unable to start container process: "
                + "exec: \"nope\": executable file not found in $PATH: unknown")).isTrue();
        assertThat(EngineErrors.commandFailure("exec /bin/echo: argument list too long")).isTrue();
        assertThat(EngineErrors.commandFailure("message length 6554753 exceed maximum message size of 4194304: unknown"))
                .isTrue();
        for (String dying : List.of("cannot exec in a stopped state: unknown", "container is not running",
                "OCI runtime exec failed: exec failed: unable to start container process: error executing setns "
                        + "process: exit status 1: unknown",
                "OCI runtime exec failed: exec failed: unable to start container process: read init-p: connection "
                        + "reset by peer: unknown",
                "Container 0c11 is not running: Removal In Progress",
                // runc, when the container's init died between the engine's check and the exec (seen in CI)
                "OCI runtime exec failed: exec failed: unable to create new parent process: namespace path: lstat "
                        + "/proc/9099/ns/ipc: no such file or directory: unknown")) {
            assertThat(EngineErrors.commandFailure(dying)).as(dying).isFalse();
            assertThat(EngineErrors.removal(dying)).as(dying).isTrue();
        }
    }

    @Test
    void aProgramPrintingTheSameWordsKeepsItsStdout() {
        String text = "OCI runtime exec failed: just a program\n";
        ExecOutput started = new ExecOutput(1000, 1000, null);
        started.consume(ByteBuffer.wrap(frame(1, text)));
        assertThat(started.finish(126, false)).isEqualTo(126);
        assertThat(new String(started.stdout(), StandardCharsets.UTF_8)).isEqualTo(text);

        List<String> order = new ArrayList<>();
        ExecOutput more = new ExecOutput(1000, 1000, (s, b, o, l) -> order.add(s + ":" + new String(b, o, l,
                StandardCharsets.UTF_8)));
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        frame(stream, 1, text.getBytes(StandardCharsets.UTF_8));
        frame(stream, 2, "next".getBytes(StandardCharsets.UTF_8));
        more.consume(ByteBuffer.wrap(stream.toByteArray()));
        assertThat(order).containsExactly("STDOUT:" + text, "STDERR:next");
    }

    /** Frames as Podman 4.3's Docker API sent them (captured on its socket with runc 1.1). */
    private static final String PODMAN_NOT_FOUND = "Error: runc: exec failed: unable to start container process: exec: "
            + "\"nosuch\": executable file not found in $PATH: OCI runtime attempted to invoke a command that was not found\n";
    private static final String PODMAN_ATTACH = "Error: read unixpacket @->/proc/self/fd/14/attach: read: connection "
            + "reset by peer\n";

    @Test
    void podmanStartFailureBecomesOneStderrLineWithTheShellsExitCode() {
        List<String> seen = new ArrayList<>();
        ExecOutput out = new ExecOutput(1000, 1000, (s, b, o, l) -> seen.add(s + ":" + new String(b, o, l,
                StandardCharsets.UTF_8)));
        out.podman(true);
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        frame(stream, 2, PODMAN_NOT_FOUND.getBytes(StandardCharsets.UTF_8));
        frame(stream, 2, PODMAN_ATTACH.getBytes(StandardCharsets.UTF_8));
        out.consume(ByteBuffer.wrap(stream.toByteArray()));

        assertThat(seen).as("held until the exit code is known").isEmpty();
        assertThat(out.heldStartFailure()).isEqualTo(PODMAN_NOT_FOUND);
        assertThat(out.finish(127, true)).isEqualTo(127);
        String line = PODMAN_NOT_FOUND.substring("Error: ".length());
        assertThat(new String(out.stderr(), StandardCharsets.UTF_8)).isEqualTo(line);
        assertThat(seen).containsExactly("STDERR:" + line);
        assertThat(out.stdout()).isEmpty();
    }

    @Test
    void podmanWorkingDirFailureIs126AsOnDocker() {
        // Podman maps runc's chdir failure to 127; a shell (and sandboxkit on Docker) says 126.
        String chdir = "Error: runc: exec failed: unable to start container process: chdir to cwd (\"/nonexist\") set "
                + "in config.json failed: no such file or directory: OCI runtime attempted to invoke a command that was "
                + "not found\n";
        ExecOutput out = new ExecOutput(1000, 1000, null);
        out.podman(true);
        out.consume(ByteBuffer.wrap(frame(2, chdir)));
        assertThat(out.finish(127, true)).isEqualTo(126);
    }

    @Test
    void podmanStderrThatIsNotAStartFailureFlowsAtOnceAndInOrder() {
        List<String> seen = new ArrayList<>();
        ExecOutput out = new ExecOutput(1000, 1000, (s, b, o, l) -> seen.add(s + ":" + new String(b, o, l,
                StandardCharsets.UTF_8)));
        out.podman(true);
        out.consume(ByteBuffer.wrap(frame(2, "warning: something\n")));
        assertThat(seen).containsExactly("STDERR:warning: something\n");

        // A program that prints Podman's words and exits 127 keeps its output: it did start.
        List<String> order = new ArrayList<>();
        ExecOutput lookalike = new ExecOutput(1000, 1000, (s, b, o, l) -> order.add(s + ":" + new String(b, o, l,
                StandardCharsets.UTF_8)));
        lookalike.podman(true);
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        frame(stream, 2, PODMAN_NOT_FOUND.getBytes(StandardCharsets.UTF_8));
        frame(stream, 2, PODMAN_ATTACH.getBytes(StandardCharsets.UTF_8));
        frame(stream, 1, "out".getBytes(StandardCharsets.UTF_8));
        lookalike.consume(ByteBuffer.wrap(stream.toByteArray()));
        assertThat(lookalike.finish(127, false)).isEqualTo(127);
        assertThat(order).containsExactly("STDERR:" + PODMAN_NOT_FOUND, "STDERR:" + PODMAN_ATTACH, "STDOUT:out");
    }

    @Test
    void podmanIsRecognisedByItsVersionComponents() throws Exception {
        assertThat(EngineClient.isPodman(EngineClient.JSON.readTree(
                "{\"Components\":[{\"Name\":\"Podman Engine\",\"Version\":\"4.3.1\"},{\"Name\":\"Conmon\"}]}")))
                .isTrue();
        assertThat(EngineClient.isPodman(EngineClient.JSON.readTree(
                "{\"Components\":[{\"Name\":\"Engine\",\"Version\":\"20.10.24\"},{\"Name\":\"containerd\"}]}")))
                .isFalse();
        assertThat(EngineClient.isPodman(EngineClient.JSON.readTree("{\"Version\":\"20.10.24\"}"))).isFalse();
        assertThat(EngineErrors.removal("can only create exec sessions on running containers: container state "
                + "improper")).isTrue();
    }

    @Test
    void mapsStartFailureMessagesToShellExitCodes() {
        assertThat(EngineErrors.startFailureExitCode("exec: \"x\": executable file not found in $PATH")).isEqualTo(127);
        assertThat(EngineErrors.startFailureExitCode("exec: \"/x\": stat /x: no such file or directory")).isEqualTo(127);
        assertThat(EngineErrors.startFailureExitCode("exec: \"/etc\": permission denied")).isEqualTo(126);
        assertThat(EngineErrors.startFailureExitCode("exec: \"/w/file.txt/x\": stat /w/file.txt/x: not a directory"))
                .isEqualTo(127);
        assertThat(EngineErrors.startFailureExitCode("exec: \"/w/locked/x\": stat /w/locked/x: permission denied"))
                .isEqualTo(126);
        assertThat(EngineErrors.startFailureExitCode("chdir to cwd (\"/w\") set in config.json failed: no such file or directory"))
                .isEqualTo(126);
    }

    @Test
    void mapsGVisorStartFailureMessagesToShellExitCodes() {
        // Messages as runsc 20220425 writes them (checked with docker exec under --runtime=runsc).
        String prefix = "OCI runtime exec failed: executing processes for container: executing command \"x\" in sandbox: ";
        assertThat(EngineErrors.startFailureExitCode(prefix + "failed to load /no/such: no such file or directory: unknown"))
                .isEqualTo(127);
        assertThat(EngineErrors.startFailureExitCode(prefix + "error finding executable \"nosuch\" in PATH [/bin]: "
                + "no such file or directory: unknown")).isEqualTo(127);
        assertThat(EngineErrors.startFailureExitCode(prefix + "failed to load /tmp/f/x: not a directory: unknown"))
                .isEqualTo(127);
        assertThat(EngineErrors.startFailureExitCode(prefix + "failed to load /tmp/f: permission denied: unknown"))
                .isEqualTo(126);
        assertThat(EngineErrors.startFailureExitCode(prefix + "failed to find initial working directory \"/nonexist\": "
                + "no such file or directory: unknown")).isEqualTo(126);
        for (String m : List.of("failed to load /tmp/f: permission denied", "error finding executable \"n\" in PATH",
                "failed to find initial working directory \"/w\": no such file or directory")) {
            assertThat(EngineErrors.commandFailure(prefix + m)).as(m).isTrue();
        }
    }

    @Test
    void aThrowingListenerSurfacesAsListenerFailure() {
        ExecOutput out = new ExecOutput(10, 10, (s, b, o, l) -> {
            throw new IllegalStateException("boom");
        });
        assertThatThrownBy(() -> out.consume(ByteBuffer.wrap(frame(2, "x"))))
                .isInstanceOf(ExecOutput.ListenerFailure.class).hasRootCauseMessage("boom");
    }

    private static byte[] frame(int type, String payload) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        frame(out, type, payload.getBytes(StandardCharsets.UTF_8));
        return out.toByteArray();
    }

    private static void frame(ByteArrayOutputStream out, int type, byte[] payload) {
        int n = payload.length;
        out.write(type);
        out.write(0);
        out.write(0);
        out.write(0);
        out.write(n >>> 24);
        out.write(n >>> 16);
        out.write(n >>> 8);
        out.write(n);
        out.writeBytes(payload);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] r = new byte[a.length + b.length];
        System.arraycopy(a, 0, r, 0, a.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }
}
