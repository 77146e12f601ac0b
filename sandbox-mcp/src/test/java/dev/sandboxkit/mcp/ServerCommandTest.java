package dev.sandboxkit.mcp;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The command line: help, environment defaults, and configurations refused before anything starts. */
class ServerCommandTest {

    /** Runs the command; returns its exit code and what it printed on stdout (the protocol stream) and stderr. */
    static Result run(Map<String, String> env, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream oldErr = System.err;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            int code = SandboxMcpMain.run(args, InputStream.nullInputStream(), out, env);
            return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(oldErr);
        }
    }

    record Result(int code, String out, String err) {
    }

    @Test
    void helpDescribesEveryOptionAndItsEnvironmentVariable() {
        Result r = run(Map.of(), "--help");
        assertThat(r.code()).isZero();
        CommandLine cmd = SandboxMcpMain.commandLine(InputStream.nullInputStream(), new ByteArrayOutputStream(), Map.of());
        for (CommandLine.Model.OptionSpec o : cmd.getCommandSpec().options()) {
            assertThat(r.out()).as("help mentions " + o.longestName()).contains(o.longestName());
            if (!o.usageHelp() && !o.versionHelp()) {
                assertThat(o.description()).as(o.longestName()).isNotEmpty();
            }
        }
        assertThat(r.out()).contains("SANDBOX_MCP_").contains("--session-key").contains("X-Sandbox-Session");
        assertThat(ServerCommand.EnvDefaults.variable("--idle-ttl")).isEqualTo("SANDBOX_MCP_IDLE_TTL");
    }

    @Test
    void versionPrints() {
        Result r = run(Map.of(), "--version");
        assertThat(r.code()).isZero();
        assertThat(r.out()).startsWith("sandbox-mcp ").doesNotContain("unknown");
    }

    @Test
    void environmentVariablesAreDefaultsAndTheCommandLineWins() {
        Map<String, String> env = Map.of("SANDBOX_MCP_IMAGE", "from-env:1", "SANDBOX_MCP_READ_ONLY", "true",
                "SANDBOX_MCP_TOOLS", "read_file,list_files", "SANDBOX_MCP_IDLE_TTL", "5m");
        CommandLine cmd = SandboxMcpMain.commandLine(InputStream.nullInputStream(), new ByteArrayOutputStream(), env);
        cmd.parseArgs("--idle-ttl", "7m");
        ServerCommand c = cmd.getCommand();
        assertThat(c.image).isEqualTo("from-env:1");
        assertThat(c.readOnly).isTrue();
        assertThat(c.toolNames).containsExactly("read_file", "list_files");
        assertThat(c.idleTtl).isEqualTo("7m");
        assertThat(c.transport).isEqualTo(ServerCommand.Transport.stdio);
        assertThat(c.httpHost).isEqualTo("127.0.0.1");
        assertThat(c.maxSessions).isEqualTo(16);
    }

    @Test
    void aNonLoopbackBindNeedsTheFlagAndAToken() {
        Map<String, String> env = Map.of();
        Result noFlag = run(env, "--store", "memory", "--transport", "http", "--http-host", "0.0.0.0",
                "--token", "0123456789abcdef0123");
        assertThat(noFlag.code()).isEqualTo(2);
        assertThat(noFlag.err()).contains("not a loopback address").contains("--allow-non-loopback");
        Result noToken = run(env, "--store", "memory", "--transport", "http", "--http-host", "0.0.0.0",
                "--allow-non-loopback");
        assertThat(noToken.code()).isEqualTo(2);
        assertThat(noToken.err()).contains("bearer token");
        Result shortToken = run(env, "--store", "memory", "--transport", "http", "--token", "short");
        assertThat(shortToken.code()).isEqualTo(2);
        assertThat(shortToken.err()).contains("at least 16");
    }

    @Test
    void badValuesAreUsageErrors() {
        assertThat(run(Map.of(), "--store", "memory", "--tools", "run_command,rm_rf").err())
                .contains("no tool named 'rm_rf'");
        assertThat(run(Map.of(), "--store", "memory", "--idle-ttl", "soon").code()).isEqualTo(2);
        assertThat(run(Map.of(), "--store", "postgres").err()).contains("--store must be");
        assertThat(run(Map.of(), "--store", "memory", "--pull", "sometimes").code()).isEqualTo(2);
        assertThat(run(Map.of(), "--store", "memory", "--transport", "http", "--session-key", "k").err())
                .contains("--session-key is a stdio option");
        assertThat(run(Map.of(), "--store", "memory", "--token", "0123456789abcdef0123").err())
                .contains("--token is an http option");
        assertThat(run(Map.of(), "--store", "memory", "--session-key", "bad\u0001key").code()).isEqualTo(2);
        Result r = run(Map.of(), "--no-such-flag");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.out()).as("nothing on the protocol stream").isEmpty();
    }
}
