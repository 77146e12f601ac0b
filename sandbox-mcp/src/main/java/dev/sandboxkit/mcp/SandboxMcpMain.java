package dev.sandboxkit.mcp;

import picocli.CommandLine;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The {@code sandbox-mcp} command: {@code java -jar sandbox-mcp-VERSION-all.jar [options]}. Run with
 * {@code --help} for the options; every one can also be set with a {@code SANDBOX_MCP_*} environment variable. The
 * library's settings ({@link dev.sandboxkit.SandboxConfig}) come from {@code -Dsandboxkit.*} system properties, the
 * environment and the command line ({@code --set KEY=VALUE}), in that order; {@code --show-config} prints them.
 *
 * <p>Before anything else runs, {@code System.out} is pointed at stderr and logging is sent there: on stdio the
 * real stdout carries the protocol, and one stray line from any library would break the client.
 */
public final class SandboxMcpMain {
    private SandboxMcpMain() {
    }

    /**
     * Runs the server until the client goes away (stdio) or the process is signalled, then exits.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        OutputStream protocol = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 64 * 1024);
        System.setOut(System.err);
        System.exit(run(args, System.in, protocol, System.getenv()));
    }

    /**
     * Parses the command line and runs the server on the given streams.
     *
     * @param args     the command line
     * @param stdin    the protocol's input (stdio)
     * @param protocol the protocol's output (stdio), and where {@code --help} and {@code --version} print
     * @param env      the environment, for {@code SANDBOX_MCP_*} defaults and {@code SANDBOX_MCP_SET}
     * @return the exit code: 0 after a normal end, 1 if the backend failed at start, 2 for a bad configuration
     */
    static int run(String[] args, InputStream stdin, OutputStream protocol, Map<String, String> env) {
        logToStderr();
        CommandLine cmd = commandLine(stdin, protocol, env);
        cmd.setOut(new PrintWriter(new PrintStream(protocol, true, StandardCharsets.UTF_8), true));
        cmd.setErr(new PrintWriter(new PrintStream(System.err, true, StandardCharsets.UTF_8), true));
        return cmd.execute(args);
    }

    /** The command line parser, with the environment's defaults. */
    static CommandLine commandLine(InputStream stdin, OutputStream protocol, Map<String, String> env) {
        CommandLine cmd = new CommandLine(new ServerCommand(stdin, protocol, env));
        cmd.setDefaultValueProvider(new ServerCommand.EnvDefaults(env));
        cmd.setResourceBundle(ServerDefaults.libraryDefaults()); // the library's defaults in the help
        cmd.setCaseInsensitiveEnumValuesAllowed(true);
        // A configuration error says what is wrong, not the whole usage.
        cmd.setParameterExceptionHandler((e, args) -> {
            e.getCommandLine().getErr().println("sandbox-mcp: " + e.getMessage());
            e.getCommandLine().getErr().println("Run sandbox-mcp --help for the options.");
            return 2;
        });
        cmd.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            System.err.println("sandbox-mcp failed: " + e);
            e.printStackTrace(System.err);
            return 1;
        });
        return cmd;
    }

    /** slf4j-simple settings, unless the JVM was given others; read when the first logger is made. */
    private static void logToStderr() {
        setIfAbsent("org.slf4j.simpleLogger.logFile", "System.err");
        setIfAbsent("org.slf4j.simpleLogger.showDateTime", "true");
        setIfAbsent("org.slf4j.simpleLogger.dateTimeFormat", "yyyy-MM-dd'T'HH:mm:ss.SSSZ");
        setIfAbsent("org.slf4j.simpleLogger.showThreadName", "false");
        setIfAbsent("org.slf4j.simpleLogger.showShortLogName", "true");
        setIfAbsent("org.slf4j.simpleLogger.levelInBrackets", "true");
        // Libraries: warnings only (the SDK logs every client's initialize at INFO).
        setIfAbsent("org.slf4j.simpleLogger.log.io.modelcontextprotocol", "warn");
        setIfAbsent("org.slf4j.simpleLogger.log.org.eclipse.jetty", "warn");
        setIfAbsent("org.slf4j.simpleLogger.log.com.github.dockerjava", "warn");
        setIfAbsent("org.slf4j.simpleLogger.log.reactor", "warn");
        setIfAbsent("org.slf4j.simpleLogger.log.org.h2", "warn");
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }
}
