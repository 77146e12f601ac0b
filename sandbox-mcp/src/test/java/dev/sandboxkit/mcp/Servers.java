package dev.sandboxkit.mcp;

import dev.sandboxkit.spi.SandboxLabels;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Starts the packaged jar ({@code -Dsandbox-mcp.jar}, set by the build) as real server processes, connects the SDK's
 * own clients to them, and looks at the engine through the docker CLI. Every server gets the fleet of its
 * {@link Installation}, unique to the test run, so its containers can be counted exactly.
 */
final class Servers {
    /** Cold JVM start, H2 open and manager start take several seconds on a busy two-core machine. */
    static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(60);
    static final Path LOGS = Path.of("target", "it-logs");
    private static final Pattern LISTENING = Pattern.compile("listening on (http://\\S+)/mcp");

    private Servers() {
    }

    static Path jar() {
        String jar = System.getProperty("sandbox-mcp.jar");
        assertThat(jar).as("system property sandbox-mcp.jar (set by the failsafe configuration)").isNotBlank();
        Path p = Path.of(jar);
        assertThat(p).as("the runnable jar; run the tests with mvn verify, after package").isRegularFile();
        return p;
    }

    static String image() {
        return System.getProperty("sandboxkit.test.image", "sandboxkit-test:latest");
    }

    /** A server's durable state: fleet, workspace root and H2 store, shared by the servers of one scenario. */
    record Installation(String fleet, Path root, Path store) {
        static Installation create(Path base, String name) {
            String fleet = "it-" + name + "-" + UUID.randomUUID().toString().substring(0, 8);
            return new Installation(fleet, base.resolve(name).resolve("workspaces"), base.resolve(name).resolve("sessions"));
        }

        /**
         * The command line of a server of this installation.
         *
         * @param server a name for the process, found again by {@link #serverProcess(String)}
         * @param extra  more options
         */
        List<String> command(String server, String... extra) {
            List<String> c = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    // C1 only and a small heap: these servers start often, on two shared cores.
                    "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx512m", "-Dsandbox-mcp.it.server=" + server,
                    "-jar", jar().toString(),
                    "--image", image(), "--pull", "never",
                    "--fleet", fleet, "--workspace-root", root.toString(), "--store", "h2:" + store));
            c.addAll(Arrays.asList(extra));
            return c;
        }

        /**
         * The workdirs on disk: one directory per session that still has its files. The Docker driver's own staging
         * directory for atomic writes ({@code .sandboxkit-staging}) is not one, but must hold nothing between calls.
         */
        List<String> workdirs() {
            List<String> all = list(root);
            assertThat(list(root.resolve(".sandboxkit-staging"))).as("files left in the staging directory").isEmpty();
            return all.stream().filter(n -> !n.equals(".sandboxkit-staging")).collect(Collectors.toList());
        }

        private static List<String> list(Path dir) {
            if (!Files.isDirectory(dir)) {
                return List.of();
            }
            try (Stream<Path> s = Files.list(dir)) {
                return s.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    // ------------------------------------------------------------------ stdio

    /** An SDK client that starts a server process over stdio (the way an MCP client does), initialized. */
    static McpSyncClient stdioClient(List<String> command, String logName) {
        ServerParameters params = ServerParameters.builder(command.get(0)).args(command.subList(1, command.size()))
                .build();
        StdioClientTransport transport = new StdioClientTransport(params, McpJsonDefaults.getMapper());
        Path log = log(logName);
        transport.setStdErrorHandler(line -> append(log, line));
        McpSyncClient client = McpClient.sync(transport).requestTimeout(CLIENT_TIMEOUT)
                .initializationTimeout(CLIENT_TIMEOUT).build();
        client.initialize();
        return client;
    }

    /** The live server process started with {@link Installation#command(String, String...)} under this name. */
    static ProcessHandle serverProcess(String server) {
        String marker = "-Dsandbox-mcp.it.server=" + server;
        List<ProcessHandle> found = ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)
                .filter(p -> p.info().arguments().map(a -> Arrays.asList(a).contains(marker)).orElse(false))
                .toList();
        assertThat(found).as("server processes named " + server).hasSize(1);
        return found.get(0);
    }

    // ------------------------------------------------------------------ HTTP

    /** A server process on Streamable HTTP (port chosen by the server, read from its log). */
    static final class HttpServer implements AutoCloseable {
        final Process process;
        final Path log;
        final Path stdout;
        final String baseUrl;

        private HttpServer(Process process, Path log, Path stdout, String baseUrl) {
            this.process = process;
            this.log = log;
            this.stdout = stdout;
            this.baseUrl = baseUrl;
        }

        static HttpServer start(List<String> command, String logName, Map<String, String> env) {
            Path log = Servers.log(logName);
            Path stdout = Servers.log(logName + ".stdout");
            List<String> c = new ArrayList<>(command);
            c.addAll(List.of("--transport", "http", "--http-port", "0"));
            Process p;
            try {
                ProcessBuilder pb = new ProcessBuilder(c);
                pb.environment().putAll(env);
                p = pb.redirectErrorStream(false)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(stdout.toFile()))
                        .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                        .redirectInput(ProcessBuilder.Redirect.PIPE).start();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            long deadline = System.nanoTime() + CLIENT_TIMEOUT.toNanos();
            while (System.nanoTime() < deadline) {
                Matcher m = LISTENING.matcher(read(log));
                if (m.find()) {
                    return new HttpServer(p, log, stdout, m.group(1));
                }
                if (!p.isAlive()) {
                    fail("the HTTP server exited with " + p.exitValue() + " before listening:\n" + read(log));
                }
                sleep(100);
            }
            p.destroyForcibly();
            throw new AssertionError("the HTTP server did not listen within " + CLIENT_TIMEOUT + ":\n" + read(log));
        }

        /** An initialized SDK client, sending these headers with every request. */
        McpSyncClient client(Map<String, String> headers) {
            HttpRequest.Builder base = HttpRequest.newBuilder();
            headers.forEach(base::header);
            McpSyncClient client = McpClient.sync(HttpClientStreamableHttpTransport.builder(baseUrl)
                            .endpoint("/mcp").requestBuilder(base).connectTimeout(Duration.ofSeconds(10)).build())
                    .requestTimeout(CLIENT_TIMEOUT).initializationTimeout(CLIENT_TIMEOUT).build();
            client.initialize();
            return client;
        }

        /** SIGTERM, then waits: the server shuts down in order (sessions, manager, store). */
        void stop() {
            process.destroy();
            awaitExit(process.toHandle(), Duration.ofSeconds(40));
        }

        String logText() {
            return read(log);
        }

        @Override
        public void close() {
            if (process.isAlive()) {
                stop();
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    static void awaitExit(ProcessHandle p, Duration timeout) {
        try {
            p.onExit().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            p.destroyForcibly();
            throw new AssertionError("server process " + p.pid() + " did not exit within " + timeout, e);
        }
    }

    static String text(McpSchema.CallToolResult r) {
        return r.content().stream().filter(c -> c instanceof McpSchema.TextContent)
                .map(c -> ((McpSchema.TextContent) c).text()).collect(Collectors.joining("\n"));
    }

    static McpSchema.CallToolResult call(McpSyncClient client, String tool, Map<String, Object> args) {
        return client.callTool(new McpSchema.CallToolRequest(tool, args, null));
    }

    /** Runs a command through the run_command tool and checks it was not an error result. */
    static String run(McpSyncClient client, String command) {
        McpSchema.CallToolResult r = call(client, "run_command", Map.of("command", command));
        assertThat(r.isError()).as("run_command %s: %s", command, text(r)).isNotEqualTo(Boolean.TRUE);
        return text(r);
    }

    /** The containers of a fleet (and session), running or not. */
    static List<String> containers(String fleet, String session) {
        List<String> cmd = new ArrayList<>(List.of(docker(), "ps", "-a", "-q", "--filter",
                "label=" + SandboxLabels.FLEET + "=" + fleet));
        if (session != null) {
            cmd.addAll(List.of("--filter", "label=" + SandboxLabels.SESSION + "=" + session));
        }
        return Arrays.stream(exec(cmd).split("\\s+")).filter(s -> !s.isBlank()).toList();
    }

    static void awaitNoContainers(String fleet, String session, Duration timeout) {
        await(timeout, () -> containers(fleet, session).isEmpty(),
                () -> "containers of fleet " + fleet + (session == null ? "" : " session " + session) + " still there: "
                        + containers(fleet, session));
    }

    static void await(Duration timeout, BooleanSupplier condition, java.util.function.Supplier<String> failure) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail(failure.get() + " (waited " + timeout + ")");
            }
            sleep(200);
        }
    }

    static String docker() {
        return Files.isExecutable(Path.of("/usr/bin/docker")) ? "/usr/bin/docker" : "docker";
    }

    static String exec(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                fail(String.join(" ", command) + " failed: " + out);
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Fails unless the image exists locally: the tests never pull. */
    static void requireImage() {
        List<String> cmd = List.of(docker(), "image", "inspect", "--format", "{{.Id}}", image());
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(60, TimeUnit.SECONDS);
            assertThat(p.exitValue()).as("the test image %s must exist locally (scripts/build-test-images.sh): %s",
                    image(), out).isZero();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Stops every server process this JVM started that is still alive (a failed test's): SIGTERM, then SIGKILL. */
    static void killLeftovers() {
        List<ProcessHandle> left = ProcessHandle.current().descendants()
                .filter(p -> p.info().command().map(c -> c.endsWith("java")).orElse(false)).toList();
        left.forEach(ProcessHandle::destroy);
        for (ProcessHandle p : left) {
            try {
                p.onExit().get(20, TimeUnit.SECONDS);
            } catch (Exception e) {
                p.destroyForcibly();
            }
        }
    }

    /**
     * Fails if containers of the fleet are still there after a grace period, removing them first so that a failed
     * run leaves nothing behind on the engine.
     */
    static void assertNoContainersLeft(String fleet) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        List<String> left = containers(fleet, null);
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            sleep(250);
            left = containers(fleet, null);
        }
        if (!left.isEmpty()) {
            List<String> rm = new ArrayList<>(List.of(docker(), "rm", "-f"));
            rm.addAll(left);
            exec(rm);
            fail("containers of fleet " + fleet + " left behind (now removed): " + left);
        }
    }

    static Path log(String name) {
        try {
            Files.createDirectories(LOGS);
            Path p = LOGS.resolve(name + ".log");
            Files.deleteIfExists(p);
            Files.createFile(p);
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void append(Path log, String line) {
        try {
            Files.writeString(log, line + "\n", StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String read(Path log) {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    static Optional<String> exitCodeLine(String runCommandText) {
        return runCommandText.lines().filter(l -> l.startsWith("Exit code:")).findFirst();
    }
}
