package dev.sandboxkit.docker.internal.files;

import com.sun.jna.Native;
import dev.sandboxkit.SandboxSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The files API when the JVM is not root (no chown; the sandbox's own modes apply to the JVM). Runs the
 * scenario directly when the JVM is not root, otherwise in a child JVM as nobody (setpriv). No Docker needed.
 */
class NonRootFilesTest {

    @Test
    void filesApiWithoutRoot(@TempDir Path tmp) throws Exception {
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        Path base = Files.createDirectory(tmp.resolve("base"));
        if (uid != 0) {
            NonRootFilesScenario.main(new String[] {base.toString()});
            return;
        }
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path cp = Files.createDirectory(tmp.resolve("cp"));
        List<String> entries = new ArrayList<>();
        for (Class<?> c : List.of(HostWorkspaces.class, NonRootFilesScenario.class, SandboxSpec.class, Native.class,
                LoggerFactory.class)) {
            Path source = Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
            Path target = cp.resolve(entries.size() + "-" + source.getFileName());
            copy(source, target);
            entries.add(target.toString());
        }
        try (Stream<Path> all = Files.walk(cp)) {
            for (Path p : all.toList()) {
                Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(Files.isDirectory(p) ? "rwxr-xr-x" : "rw-r--r--"));
            }
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", java,
                "-Djna.tmpdir=" + base, "-cp", String.join(":", entries), NonRootFilesScenario.class.getName(),
                base.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(out).as("scenario output").contains("OK");
        assertThat(p.exitValue()).isZero();
        assertThat(base.resolve("outside/keep.txt")).hasContent("precious");
    }

    private static void copy(Path source, Path target) throws Exception {
        if (!Files.isDirectory(source)) {
            Files.copy(source, target, StandardCopyOption.REPLACE_EXISTING);
            return;
        }
        try (Stream<Path> all = Files.walk(source)) {
            for (Path p : all.toList()) {
                Path t = target.resolve(source.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(p, t, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }
}
