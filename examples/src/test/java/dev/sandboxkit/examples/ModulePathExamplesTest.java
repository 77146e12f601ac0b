package dev.sandboxkit.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Runs the resume-after-TTL demo in a child JVM with sandboxkit on the module path: sandbox-api, the Docker driver
 * and every other modular jar of the examples' runtime classpath are named modules, the example itself runs from the
 * class path (as an application that is not yet modular would). Only {@code dev.sandboxkit} is a root module: the
 * Docker driver must come in through service binding (sandbox-api's {@code uses}, the driver's {@code provides}),
 * and its own {@code requires} must resolve. A broken descriptor fails the demo or the assertions here.
 */
class ModulePathExamplesTest {

    @Test
    void resumeDemoRunsWithSandboxkitOnTheModulePath() throws IOException, InterruptedException {
        String file = System.getProperty("sandboxkit.examples.runtimeClasspath");
        assertThat(file).as("set by the examples' pom").isNotBlank();
        List<String> modulePath = new ArrayList<>();
        List<String> classPath = new ArrayList<>();
        classPath.add(Path.of("target", "classes").toAbsolutePath().toString());
        for (String entry : Files.readString(Path.of(file), StandardCharsets.UTF_8).trim().split(File.pathSeparator)) {
            Path p = Path.of(entry);
            // In a reactor build before `package`, sandboxkit modules are directories: a directory is a module only
            // with a descriptor (an exploded module); the others (the automatic-module adapters) stay on the class path.
            if (Files.isDirectory(p) && !Files.exists(p.resolve("module-info.class"))) {
                classPath.add(entry);
            } else {
                modulePath.add(entry);
            }
        }
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = List.of(java.toString(),
                "--module-path", String.join(File.pathSeparator, modulePath),
                "--add-modules", "dev.sandboxkit",
                "--show-module-resolution",
                "-cp", String.join(File.pathSeparator, classPath),
                "-Dimage=" + System.getProperty("sandboxkit.test.image", "sandboxkit-test:latest"),
                "-Dttl=PT1S",
                "dev.sandboxkit.examples.ResumeAfterTtlDemo");
        Path log = Files.createTempFile("module-path-demo", ".log");
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            boolean done = process.waitFor(120, TimeUnit.SECONDS);
            if (!done) {
                process.destroyForcibly();
            }
            String output = Files.readString(log, StandardCharsets.UTF_8);
            assertThat(done).as("demo finished in time; output:%n%s", output).isTrue();
            assertThat(process.exitValue()).as("demo exit code; output:%n%s", output).isZero();
            assertThat(output)
                    .contains("root dev.sandboxkit ")
                    .contains("dev.sandboxkit binds dev.sandboxkit.docker ")
                    .contains("manager up: driver=docker")
                    .contains("resumed in fresh container");
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
