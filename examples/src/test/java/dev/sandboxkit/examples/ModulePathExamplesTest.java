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
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Runs the resume-after-TTL demo in a child JVM with sandboxkit on the module path: sandbox-api, the Docker driver
 * and every other modular jar of the examples' runtime classpath are named modules, the example itself runs from the
 * class path (as an application that is not yet modular would). Only {@code dev.sandboxkit} is a root module: the
 * Docker driver must come in through service binding (sandbox-api's {@code uses}, the driver's {@code provides}),
 * and its own {@code requires} must resolve. A broken descriptor fails the demo or the assertions here.
 */
@Tag("slow")
class ModulePathExamplesTest {

    @Test
    void resumeDemoRunsWithSandboxkitOnTheModulePath() throws IOException, InterruptedException {
        String output = runOnModulePath("sandboxkit.examples.runtimeClasspath", "dev.sandboxkit",
                "dev.sandboxkit.examples.ResumeAfterTtlDemo", "-Dttl=PT1S");
        assertThat(output)
                .contains("root dev.sandboxkit ")
                .contains("dev.sandboxkit binds dev.sandboxkit.docker ")
                .contains("manager up: driver=docker")
                .contains("resumed in fresh container");
    }

    /**
     * Every other published module with a descriptor (the JDBC store, the tools, Micrometer and MCP) as a root
     * module, used through its exported API by {@link ModularSmoke}: their {@code requires} must resolve, the store
     * must read its migrations through its {@code opens}, and the driver must still bind as a service.
     */
    @Test
    void everyModularArtifactWorksOnTheModulePath() throws IOException, InterruptedException {
        String output = runOnModulePath("sandboxkit.examples.testClasspath",
                "dev.sandboxkit.store.jdbc,dev.sandboxkit.tools,dev.sandboxkit.micrometer,dev.sandboxkit.mcp",
                "dev.sandboxkit.examples.ModularSmoke");
        assertThat(output)
                .contains("root dev.sandboxkit.store.jdbc ")
                .contains("root dev.sandboxkit.mcp ")
                .contains("dev.sandboxkit binds dev.sandboxkit.docker ")
                .contains("module dev.sandboxkit.store.jdbc: schema v")
                .contains("session stored: true")
                .contains("module dev.sandboxkit.tools: run_command -> ")
                .contains("module dev.sandboxkit.micrometer: execs timed ")
                .contains("module dev.sandboxkit.mcp: tools/call answered")
                .contains("modular smoke ok");
    }

    private static boolean isResolutionTrace(String line) {
        return line.startsWith("root ") || line.contains(" requires ") || line.contains(" binds ");
    }

    /** Runs {@code mainClass} from the class path in a child JVM, the given classpath file's entries as module path. */
    private static String runOnModulePath(String classpathProperty, String rootModules, String mainClass,
                                          String... properties) throws IOException, InterruptedException {
        String file = System.getProperty(classpathProperty);
        assertThat(file).as("set by the examples' pom").isNotBlank();
        List<String> modulePath = new ArrayList<>();
        List<String> classPath = new ArrayList<>();
        classPath.add(Path.of("target", "classes").toAbsolutePath().toString());
        classPath.add(Path.of("target", "test-classes").toAbsolutePath().toString());
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
        List<String> command = new ArrayList<>(List.of(java.toString(),
                "--module-path", String.join(File.pathSeparator, modulePath),
                "--add-modules", rootModules,
                "--show-module-resolution",
                "-cp", String.join(File.pathSeparator, classPath),
                "-Dimage=" + System.getProperty("sandboxkit.test.image", "sandboxkit-test:latest")));
        command.addAll(List.of(properties));
        command.add(mainClass);
        Path log = Files.createTempFile("module-path-demo", ".log");
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            boolean done = process.waitFor(120, TimeUnit.SECONDS);
            if (!done) {
                process.destroyForcibly();
            }
            String output = Files.readString(log, StandardCharsets.UTF_8);
            // The resolution trace runs to hundreds of lines and would push the failure's cause out of a CI log.
            String withoutTrace = output.lines().filter(line -> !isResolutionTrace(line))
                    .collect(Collectors.joining(System.lineSeparator()));
            assertThat(done).as("%s finished in time; output without the module resolution trace:%n%s",
                    mainClass, withoutTrace).isTrue();
            assertThat(process.exitValue()).as("%s exit code; output without the module resolution trace:%n%s",
                    mainClass, withoutTrace).isZero();
            return output;
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
