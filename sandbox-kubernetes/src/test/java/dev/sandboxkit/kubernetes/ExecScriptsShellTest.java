package dev.sandboxkit.kubernetes;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The exec wrapper and the kill script, run for real on this machine under dash ({@code /bin/sh}) and
 * under busybox ash with a busybox-only PATH (skipped, with a reason, where busybox is not installed).
 * The process's stdin is a pipe that the test never closes, like the exec websocket's stdin: the
 * wrapper alone must give the command its EOF. This is where the scripts' behaviour is verified; the
 * mock-server tests only check that the driver sends them.
 */
@EnabledOnOs(OS.LINUX)
class ExecScriptsShellTest {
    private static final List<String> BUSYBOX_APPLETS = List.of("sh", "cat", "head", "env", "tr", "grep", "wc",
            "sleep", "printf", "pwd", "setsid", "kill", "echo", "true", "ls");

    @TempDir
    Path dir;
    /** busybox applet links, outside the per-test temp dir (JUnit warns about deleting links). */
    private static Path busyboxBin;

    record Run(int exit, String stdout, String stderr) {
    }

    /** Where the shell and its tools come from: the system's, or busybox's only. */
    private List<String> shell(String kind) throws IOException {
        if (kind.equals("dash")) {
            return List.of("/bin/sh");
        }
        Path busybox = Path.of("/usr/bin/busybox");
        if (!Files.isExecutable(busybox)) {
            busybox = Path.of("/bin/busybox");
        }
        Assumptions.assumeTrue(Files.isExecutable(busybox), "busybox is not installed (apt-get install busybox-static)");
        synchronized (ExecScriptsShellTest.class) {
            if (busyboxBin == null) {
                busyboxBin = Files.createTempDirectory("sandboxkit-busybox");
                for (String applet : BUSYBOX_APPLETS) {
                    Files.createSymbolicLink(busyboxBin.resolve(applet), busybox);
                }
            }
        }
        return List.of(busyboxBin.resolve("sh").toString());
    }

    @AfterAll
    static void removeBusyboxLinks() throws IOException {
        if (busyboxBin != null) {
            for (String applet : BUSYBOX_APPLETS) {
                Files.deleteIfExists(busyboxBin.resolve(applet));
            }
            Files.deleteIfExists(busyboxBin);
        }
    }

    private Map<String, String> environment(String kind) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("PATH", kind.equals("dash") ? "/usr/local/bin:/usr/bin:/bin" : busyboxBin.toString());
        return env;
    }

    private Process start(String kind, List<String> argv) throws IOException {
        List<String> cmd = new ArrayList<>(shell(kind));
        cmd.addAll(argv.subList(1, argv.size())); // argv[0] is /bin/sh
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().clear();
        pb.environment().putAll(environment(kind));
        return pb.start();
    }

    /** Runs the wrapper like the driver does; stdin is written and then left open. */
    private Run wrap(String kind, String workdir, Map<String, String> env, byte[] stdin, String... command)
            throws Exception {
        List<String> argv = ExecScripts.wrap(workdir, "test-" + ThreadLocalRandom.current().nextLong(1L << 40),
                env.size(), stdin == null ? -1 : stdin.length, List.of(command));
        Process p = start(kind, argv);
        CompletableFuture<byte[]> out = drain(p.getInputStream());
        CompletableFuture<byte[]> err = drain(p.getErrorStream());
        OutputStream in = p.getOutputStream();
        byte[] header = ExecScripts.envHeader(env);
        in.write(header);
        if (stdin != null) {
            in.write(stdin);
        }
        in.flush(); // never closed before the process ends: the websocket has no half-close
        boolean done = p.waitFor(20, TimeUnit.SECONDS);
        if (!done) {
            p.destroyForcibly();
        }
        in.close();
        assertThat(done).as("wrapped command finished without stdin being closed").isTrue();
        return new Run(p.exitValue(), new String(out.get(), StandardCharsets.UTF_8),
                new String(err.get(), StandardCharsets.UTF_8));
    }

    private static CompletableFuture<byte[]> drain(InputStream s) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return s.readAllBytes();
            } catch (IOException e) {
                return new byte[0];
            }
        });
    }

    @ParameterizedTest
    @ValueSource(strings = {"dash", "busybox"})
    void envArrivesThroughStdinWithAwkwardValuesAndNames(String kind) throws Exception {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("TOKEN", "s3cr3t value");
        env.put("MULTI", "line1\nline2\\n not a newline \\\\ two backslashes\n");
        env.put("EQ", "a=b=c");
        env.put("EMPTY", "");
        env.put("my.dotted-name", "ok");
        env.put("QUOTES", "'\"$HOME`x`");

        Run r = wrap(kind, dir.toString(), env, null, "env");

        assertThat(r.exit()).isZero();
        assertThat(r.stdout()).contains("TOKEN=s3cr3t value\n", "EQ=a=b=c\n", "EMPTY=\n", "my.dotted-name=ok\n",
                "QUOTES='\"$HOME`x`\n", "MULTI=line1\nline2\\n not a newline \\\\ two backslashes\n\n");
        assertThat(r.stdout()).containsPattern("(?m)^SANDBOXKIT_EXEC_ID=test-\\d+$");
    }

    @ParameterizedTest
    @ValueSource(strings = {"dash", "busybox"})
    void workingDirectoryAndItsAbsence(String kind) throws Exception {
        Files.createDirectories(dir.resolve("sub/dir"));

        assertThat(wrap(kind, dir.resolve("sub/dir").toString(), Map.of(), null, "pwd").stdout())
                .isEqualTo(dir.resolve("sub/dir") + "\n");
        Run missing = wrap(kind, dir.resolve("nope").toString(), Map.of(), null, "pwd");
        assertThat(missing.exit()).isEqualTo(126);
        assertThat(missing.stderr()).contains("working directory").contains("nope");
    }

    @ParameterizedTest
    @ValueSource(strings = {"dash", "busybox"})
    void stdinGetsEofAfterExactlyItsBytes(String kind) throws Exception {
        byte[] all = new byte[256];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        byte[] large = new byte[1024 * 1024 + 7];
        java.util.Arrays.fill(large, (byte) 'x');

        assertThat(wrap(kind, dir.toString(), Map.of(), "hello\nwörld".getBytes(StandardCharsets.UTF_8), "cat").stdout())
                .isEqualTo("hello\nwörld");
        // the env lines are read first, without eating into the stdin bytes that follow them
        assertThat(wrap(kind, dir.toString(), Map.of("K", "v\nw"), "abc\ndef".getBytes(StandardCharsets.UTF_8),
                "sh", "-c", "printf '%s|' \"$K\"; cat").stdout()).isEqualTo("v\nw|abc\ndef");
        assertThat(wrap(kind, dir.toString(), Map.of(), large, "wc", "-c").stdout().trim())
                .isEqualTo(String.valueOf(large.length));
        assertThat(wrap(kind, dir.toString(), Map.of(), new byte[0], "cat").stdout()).isEmpty();
        assertThat(wrap(kind, dir.toString(), Map.of(), null, "cat").stdout()).as("no stdin is /dev/null").isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"dash", "busybox"})
    void binaryStdinIsPassedUnchanged(String kind) throws Exception {
        byte[] all = new byte[256];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        List<String> argv = ExecScripts.wrap(dir.toString(), "bin", 0, all.length, List.of("cat"));
        Process p = start(kind, argv);
        CompletableFuture<byte[]> out = drain(p.getInputStream());
        p.getOutputStream().write(all);
        p.getOutputStream().flush();
        assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
        p.getOutputStream().close();
        assertThat(out.get()).isEqualTo(all);
    }

    @ParameterizedTest
    @ValueSource(strings = {"dash", "busybox"})
    void aCommandThatIgnoresStdinStillEndsWithItsOwnExitCode(String kind) throws Exception {
        byte[] large = new byte[512 * 1024];

        Run r = wrap(kind, dir.toString(), Map.of(), large, "sh", "-c", "echo early; exit 4");

        assertThat(r.exit()).isEqualTo(4);
        assertThat(r.stdout()).isEqualTo("early\n");
    }

    @ParameterizedTest
    @ValueSource(strings = {"dash", "busybox"})
    void aCommandKilledByASignalGives137AndNothingMoreOnStderr(String kind) throws Exception {
        String script = "echo out; echo err >&2; kill -9 $$";

        Run withStdin = wrap(kind, dir.toString(), Map.of(), "in".getBytes(StandardCharsets.UTF_8), "sh", "-c", script);
        Run without = wrap(kind, dir.toString(), Map.of(), null, "sh", "-c", script);

        for (Run r : List.of(withStdin, without)) {
            assertThat(r.exit()).isEqualTo(137);
            assertThat(r.stdout()).isEqualTo("out\n");
            assertThat(r.stderr()).isEqualTo("err\n");
        }
        Run missing = wrap(kind, dir.toString(), Map.of(), "in".getBytes(StandardCharsets.UTF_8), "no-such-program");
        assertThat(missing.exit()).isEqualTo(127);
        assertThat(missing.stderr()).as("the shell's own message still shows").contains("no-such-program");
    }

    @ParameterizedTest
    @ValueSource(strings = {"dash", "busybox"})
    void missingOrNonExecutableProgramsGive127And126(String kind) throws Exception {
        Path notExecutable = Files.writeString(dir.resolve("plain.txt"), "not a program");

        assertThat(wrap(kind, dir.toString(), Map.of(), null, "no-such-program").exit()).isEqualTo(127);
        assertThat(wrap(kind, dir.toString(), Map.of(), null, "/no/such/program", "arg").exit()).isEqualTo(127);
        assertThat(wrap(kind, dir.toString(), Map.of("A", "1"), null, "no-such-program").exit()).isEqualTo(127);
        assertThat(wrap(kind, dir.toString(), Map.of(), "in".getBytes(StandardCharsets.UTF_8), "no-such-program").exit())
                .isEqualTo(127);
        assertThat(wrap(kind, dir.toString(), Map.of(), null, notExecutable.toString()).exit()).isEqualTo(126);
        assertThat(wrap(kind, dir.toString(), Map.of(), null, "sh", "-c", "exit 3").exit()).isEqualTo(3);
    }

    @ParameterizedTest
    @ValueSource(strings = {"dash", "busybox"})
    void killScriptKillsTheTaggedTreeIncludingEnvClearedAndSetsidChildren(String kind) throws Exception {
        long n = 100_000 + ThreadLocalRandom.current().nextInt(800_000);
        String a = String.valueOf(n);
        String b = String.valueOf(n + 1);
        String c = String.valueOf(n + 2);
        String execId = "kill-" + n;
        List<String> argv = ExecScripts.wrap(dir.toString(), execId, 0, 5, List.of("sh", "-c",
                "sleep " + a + " & setsid sh -c \"env -i sleep " + b + " & wait\" & sh -c \"env -i sleep " + c
                        + "\" & cat; wait"));
        Process wrapped = start(kind, argv);
        wrapped.getOutputStream().write("hello".getBytes(StandardCharsets.UTF_8));
        wrapped.getOutputStream().flush();
        Process bystander = start(kind, ExecScripts.wrap(dir.toString(), "other-" + n, 0, -1,
                List.of("sleep", String.valueOf(n + 3))));
        waitFor(() -> running(a) && running(b) && running(c) && running(String.valueOf(n + 3)));

        Process killer = start(kind, List.of(ExecScripts.kill(execId)));
        String report = new String(killer.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(killer.waitFor(20, TimeUnit.SECONDS)).isTrue();

        assertThat(report).startsWith("sandboxkit: killed ");
        assertThat(wrapped.waitFor(10, TimeUnit.SECONDS)).as("the wrapper ends once its tree is dead").isTrue();
        waitFor(() -> !running(a) && !running(b) && !running(c));
        assertThat(running(String.valueOf(n + 3))).as("another exec's process survives").isTrue();
        bystander.destroyForcibly();
        wrapped.getOutputStream().close();
    }

    private static boolean running(String sleepArg) {
        try (var procs = Files.list(Path.of("/proc"))) {
            return procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).anyMatch(p -> {
                try {
                    String cmdline = new String(Files.readAllBytes(p.resolve("cmdline")), StandardCharsets.UTF_8);
                    return cmdline.equals("sleep\0" + sleepArg + "\0") || cmdline.endsWith("sleep\0" + sleepArg + "\0");
                } catch (IOException e) {
                    return false;
                }
            });
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("condition within 10 s").isLessThan(deadline);
            Thread.sleep(50);
        }
    }
}
