package dev.sandboxkit.store.jdbc;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** A forked JVM running a main class of the test classpath, with its output collected line by line. */
final class Fork implements AutoCloseable {
    private final Process process;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final String name;

    private Fork(String name, Process process) {
        this.name = name;
        this.process = process;
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // process gone
            }
        }, "fork-output-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code java -cp <this test classpath> mainClass args...}; stderr is merged into the output. */
    static Fork start(Class<?> mainClass, String... args) throws IOException {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xshare:auto");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-cp");
        command.add(classpath);
        command.add(mainClass.getName());
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().put("SANDBOXKIT_FORKED", "true");
        return new Fork(mainClass.getSimpleName() + " " + String.join(" ", args), pb.start());
    }

    /** Waits for an output line starting with {@code prefix}; fails with the output so far if it does not come. */
    String awaitLine(String prefix, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            for (String line : lines) {
                if (line.startsWith(prefix)) {
                    return line;
                }
            }
            if (!process.isAlive() && lines.stream().noneMatch(l -> l.startsWith(prefix))) {
                Thread.sleep(50); // let the reader drain
                for (String line : lines) {
                    if (line.startsWith(prefix)) {
                        return line;
                    }
                }
                throw new AssertionError("forked " + name + " exited with " + process.exitValue() + " before printing '"
                        + prefix + "'; output:\n" + output());
            }
            Thread.sleep(20);
        }
        throw new AssertionError("forked " + name + " did not print '" + prefix + "' within " + timeout + "; output:\n"
                + output());
    }

    /** Waits for a normal exit with status 0. */
    void awaitSuccess(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("forked " + name + " still running after " + timeout + "; output:\n" + output());
        }
        if (process.exitValue() != 0) {
            throw new AssertionError("forked " + name + " exited with " + process.exitValue() + "; output:\n" + output());
        }
    }

    /** kill -9, and wait until the process is gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    long pid() {
        return process.pid();
    }

    String output() {
        return String.join("\n", lines);
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
