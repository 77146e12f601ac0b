package dev.sandboxkit.docker.internal.files;

import com.sun.jna.Native;
import dev.sandboxkit.SandboxSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Workdir handling when the JVM is not root: no chown, the sandbox runs as the JVM's uid, and deletion
 * repairs directories the sandbox made unreadable, at any depth (past PATH_MAX and the walk's window). Runs the scenario directly when the JVM is not root,
 * otherwise in a child JVM as nobody (setpriv).
 */
class NonRootWorkspaceTest {

    @Test
    void deletesAHostileWorkdirWithoutRoot(@TempDir Path tmp) throws Exception {
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        Path base = Files.createDirectory(tmp.resolve("base"));
        if (uid != 0) {
            NonRootWorkspaceScenario.main(new String[] {base.toString()});
            return;
        }
        // As root: copy what the scenario needs where nobody can read it, and run it as nobody.
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path cp = Files.createDirectory(tmp.resolve("cp"));
        List<String> entries = new java.util.ArrayList<>();
        for (Class<?> c : List.of(HostWorkspaces.class, NonRootWorkspaceScenario.class, SandboxSpec.class, Native.class,
                LoggerFactory.class)) {
            Path source = location(c);
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
                "-Djna.tmpdir=" + base, "-cp", String.join(":", entries), NonRootWorkspaceScenario.class.getName(),
                base.toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(out).as("scenario output").contains("OK");
        assertThat(p.exitValue()).isZero();
        assertThat(base.resolve("outside/keep.txt")).hasContent("precious");
    }

    private static Path location(Class<?> c) throws URISyntaxException {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    private static void copy(Path source, Path target) throws IOException {
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
