package dev.sandboxkit.readme;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Runs a main class of this module in a child JVM on a class path the pom wrote, as a user's launcher would. */
final class ChildJvm {
    /** The local test image (FROM scratch + static busybox); never pulled. */
    static final String IMAGE = System.getProperty("sandboxkit.test.image", "sandboxkit-test:latest");

    private ChildJvm() {
    }

    /** What a finished child did. */
    record Run(int exitCode, String output) {
    }

    /**
     * The arguments every run starts from: the test image, never pulled, a fleet of its own (so no other build's
     * sweep touches its containers), and a workspace root of its own.
     */
    static List<String> baseArgs(Path root) {
        return List.of("--sandboxkit.spec.image=" + IMAGE, "--sandboxkit.spec.pull-policy=never",
                "--sandboxkit.fleet=readme-" + UUID.randomUUID().toString().substring(0, 8),
                "--sandboxkit.workspace-root=" + root);
    }

    /**
     * Runs {@code mainClass} with this module's classes and the entries of the class path file named by a system
     * property the pom sets; standard output and error together.
     */
    static Run run(String classpathProperty, String mainClass, List<String> args) throws IOException, InterruptedException {
        String file = System.getProperty(classpathProperty);
        assertThat(file).as("set by the module's pom").isNotBlank();
        List<String> classPath = new ArrayList<>();
        classPath.add(Path.of("target", "classes").toAbsolutePath().toString());
        String entries = Files.readString(Path.of(file), StandardCharsets.UTF_8).trim();
        if (!entries.isEmpty()) {
            classPath.add(entries);
        }
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = new ArrayList<>(List.of(java.toString(), "-cp", String.join(File.pathSeparator, classPath),
                mainClass));
        command.addAll(args);
        Path log = Files.createTempFile("readme-app", ".log");
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            boolean done = process.waitFor(180, TimeUnit.SECONDS);
            if (!done) {
                process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
            String output = Files.readString(log, StandardCharsets.UTF_8);
            assertThat(done).as("%s finished in time; output:%n%s", mainClass, output).isTrue();
            return new Run(process.exitValue(), output);
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
