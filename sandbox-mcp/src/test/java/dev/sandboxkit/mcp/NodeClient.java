package dev.sandboxkit.mcp;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.fail;

/**
 * The official TypeScript MCP SDK ({@code @modelcontextprotocol/sdk}, pinned by {@code src/test/node/package-lock.json})
 * as a second client: installed with {@code npm ci} into {@code target/ts-client} (from npm's cache when
 * {@code scripts/setup-env.sh} filled it), then run as {@code node mcp-client.mjs <config>} once per scenario.
 * Without Node.js or npm the tests fail on CI ({@code CI=true}) and are skipped elsewhere.
 */
final class NodeClient {
    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();
    private static final Path SOURCES = Path.of("src", "test", "node");
    private static final Path DIR = Path.of("target", "ts-client");
    private static final List<String> FILES = List.of("package.json", "package-lock.json", "mcp-client.mjs");

    private NodeClient() {
    }

    /** Makes sure node and the pinned SDK are there; returns the client's directory. */
    static synchronized Path install() {
        for (String tool : List.of("node", "npm")) {
            if (!runs(tool, "--version")) {
                String message = tool + " is not installed: the TypeScript SDK tests need Node.js 18+ and npm "
                        + "(scripts/setup-env.sh installs them)";
                if (ci()) {
                    fail(message + ". Not skipped: this is CI (CI=true).");
                }
                Assumptions.abort(message + "; skipped because this is not CI.");
            }
        }
        try {
            Files.createDirectories(DIR);
            for (String f : FILES) {
                Files.copy(SOURCES.resolve(f), DIR.resolve(f), StandardCopyOption.REPLACE_EXISTING);
            }
            String lock = sha256(Files.readAllBytes(DIR.resolve("package-lock.json")));
            Path marker = DIR.resolve("node_modules").resolve(".installed-from");
            if (Files.isRegularFile(marker) && Files.readString(marker).equals(lock)) {
                return DIR;
            }
            Path log = Servers.log("npm-ci");
            Process p = new ProcessBuilder("npm", "ci", "--prefer-offline", "--no-audit", "--no-fund",
                    "--loglevel=error").directory(DIR.toFile()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
            if (!p.waitFor(5, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                fail("npm ci did not finish within 5 minutes:\n" + Servers.read(log));
            }
            if (p.exitValue() != 0) {
                fail("npm ci failed (run scripts/setup-env.sh to fill npm's cache):\n" + Servers.read(log));
            }
            Files.writeString(marker, lock);
            return DIR;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * Runs one scenario of {@code mcp-client.mjs} and returns the JSON object it printed.
     *
     * @param config  the scenario (see the script)
     * @param logName where the script's own stderr goes
     * @param timeout how long the whole scenario may take
     */
    @SuppressWarnings("unchecked")
    static Map<String, Object> run(Map<String, Object> config, String logName, Duration timeout) {
        Path dir = install();
        Path log = Servers.log(logName);
        Path stdout = Servers.log(logName + ".stdout");
        try {
            Process p = new ProcessBuilder("node", "mcp-client.mjs", JSON.writeValueAsString(config))
                    .directory(dir.toFile()).redirectOutput(stdout.toFile()).redirectError(log.toFile()).start();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                fail("the TypeScript client did not finish within " + timeout + "; its log:\n" + Servers.read(log));
            }
            String out = Servers.read(stdout).trim();
            if (p.exitValue() != 0 || out.isEmpty()) {
                fail("the TypeScript client exited with " + p.exitValue() + "; its log:\n" + Servers.read(log));
            }
            return JSON.readValue(out, Map.class);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static boolean runs(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** As the testkit decides it: the system property {@code sandboxkit.ci}, else the environment's {@code CI}. */
    private static boolean ci() {
        String value = System.getProperty("sandboxkit.ci", System.getenv("CI"));
        return value != null && (value.equalsIgnoreCase("true") || value.equals("1"));
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
