package dev.sandboxkit.mcp;

import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.WarmPool;
import dev.sandboxkit.mcp.internal.Sessions;
import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.store.jdbc.JdbcSessionStore;
import dev.sandboxkit.tools.SandboxTool;
import dev.sandboxkit.tools.SandboxTools;
import dev.sandboxkit.tools.SessionResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The {@code sandbox-mcp} command line: every option, its environment variable and its default, and the run
 * itself (manager, tool set, server, orderly shutdown).
 */
@Command(name = "sandbox-mcp", mixinStandardHelpOptions = true, sortOptions = false,
        versionProvider = ServerCommand.Version.class, usageHelpAutoWidth = true,
        description = {
                "An MCP server that gives any MCP client sandboxed tools (run_command, read_file, write_file, "
                        + "edit_file, list_files, search_files) in a Docker container per session, with a durable "
                        + "/workspace that survives idle reaps, reconnects and server restarts.",
                "",
                "Logs go to stderr; on stdio, stdout carries only the protocol."},
        footer = {
                "",
                "Every option can also be set with an environment variable: SANDBOX_MCP_ and the option's name in upper "
                        + "case, '-' as '_' (--idle-ttl 10m is SANDBOX_MCP_IDLE_TTL=10m; a flag is =true). The command "
                        + "line wins. Prefer SANDBOX_MCP_TOKEN to --token: arguments are visible to other users.",
                "Durations: 30s, 10m, 1h30m, 500ms or ISO-8601 (PT30M). Sizes: 512m, 16MiB, 1g or bytes.",
                "Exit codes: 0 after the client went away or a signal, 1 if the sandbox backend failed at start, "
                        + "2 for a bad configuration."})
final class ServerCommand implements Callable<Integer> {
    /** Environment variable prefix of every option. */
    static final String ENV_PREFIX = "SANDBOX_MCP_";

    enum Transport { stdio, http }

    @Spec
    CommandSpec spec;

    // ---------------------------------------------------------------- transport and sessions

    @Option(names = "--transport", paramLabel = "stdio|http", defaultValue = "stdio",
            description = "How clients connect: stdio (the client starts this process; default) or http "
                    + "(Streamable HTTP at /mcp).")
    Transport transport;

    @Option(names = "--session-key", paramLabel = "KEY",
            description = "stdio: the workspace to (re)attach to, for example a conversation or project id. The same "
                    + "key gets the same files back after the client reconnects or the server restarts. Without a key "
                    + "the session's workspace is deleted when the client goes away. Over HTTP each client sends "
                    + "the header X-Sandbox-Session instead.")
    String sessionKey;

    @Option(names = "--max-sessions", paramLabel = "N", defaultValue = "16",
            description = "http: the most MCP sessions open at once; past it a new client gets HTTP 503 with a clear "
                    + "JSON-RPC error (default 16).")
    int maxSessions;

    // ---------------------------------------------------------------- sandboxes

    @Option(names = "--driver", paramLabel = "NAME",
            description = "The sandbox driver (default: the available one; this jar ships docker). The Docker "
                    + "engine is DOCKER_HOST, else the local socket.")
    String driver;

    @Option(names = "--image", paramLabel = "IMAGE", defaultValue = "python:3.12-slim",
            description = "The image every sandbox runs (default python:3.12-slim). Its entrypoint is not used: any "
                    + "image with sleep and sh works.")
    String image;

    @Option(names = "--pull", paramLabel = "if-missing|always|never", defaultValue = "if-missing",
            converter = PullConverter.class,
            description = "When the image may be pulled (default if-missing).")
    PullPolicy pull;

    @Option(names = "--network", paramLabel = "MODE", defaultValue = "none",
            description = "The sandboxes' network: none (default), bridge, or a network name.")
    String network;

    @Option(names = "--memory", paramLabel = "SIZE", defaultValue = "512m",
            description = "Memory limit per sandbox, swap included (default 512m; 0 for none).")
    String memory;

    @Option(names = "--cpus", paramLabel = "N", defaultValue = "0",
            description = "CPU limit per sandbox in cores, for example 1.5 (default 0: none).")
    double cpus;

    @Option(names = "--idle-ttl", paramLabel = "DURATION", defaultValue = "30m",
            description = "A sandbox idle this long is stopped; its files stay and the next call resumes it "
                    + "transparently (default 30m).")
    String idleTtl;

    @Option(names = "--warm-pool", paramLabel = "N", defaultValue = "0",
            description = "Sandboxes kept started for new sessions, so that a first call does not wait for a "
                    + "container start (default 0).")
    int warmPool;

    @Option(names = "--read-only", defaultValue = "false",
            description = "Offer only read_file, list_files and search_files: the model cannot change the workspace "
                    + "or run commands.")
    boolean readOnly;

    @Option(names = "--tools", paramLabel = "TOOL", split = ",",
            description = "Offer only these tools (comma-separated): run_command, read_file, write_file, edit_file, "
                    + "list_files, search_files (default: all).")
    List<String> toolNames;

    @Option(names = "--no-resources", defaultValue = "false",
            description = "Do not offer the workspace files as MCP resources (sandbox://workspace/<path>).")
    boolean noResources;

    // ---------------------------------------------------------------- state

    @Option(names = "--workspace-root", paramLabel = "DIR", defaultValue = "~/.sandboxkit/mcp/workspaces",
            description = "Where each session's durable workdir lives on this host (default "
                    + "~/.sandboxkit/mcp/workspaces).")
    String workspaceRoot;

    @Option(names = "--store", paramLabel = "h2|h2:FILE|memory", defaultValue = "h2",
            description = "Where session metadata lives: h2 (an H2 file, ~/.sandboxkit/mcp/sessions; default), "
                    + "h2:FILE, or memory (forgotten on exit). With an H2 file a restarted server resumes old "
                    + "sessions, and several servers can share it.")
    String store;

    @Option(names = "--fleet", paramLabel = "NAME",
            description = "The fleet label of the containers; servers sharing a store must share a fleet (default: "
                    + "derived from the store file, unique per process for memory).")
    String fleet;

    @Option(names = "--lease", paramLabel = "DURATION", defaultValue = "30s",
            description = "How long this server's hold on its sessions lasts unrenewed: after a crash (kill -9) a "
                    + "restarted server takes them over once it has passed (default 30s).")
    String lease;

    @Option(names = "--orphan-grace", paramLabel = "DURATION",
            description = "How old a container or workdir of this store that no live server accounts for must be "
                    + "before the sweep removes it; also how often the sweep looks for the unkeyed sessions of a "
                    + "server that died (default: the library's, 10m).")
    String orphanGrace;

    // ---------------------------------------------------------------- HTTP

    @Option(names = "--http-host", paramLabel = "ADDRESS", defaultValue = "127.0.0.1",
            description = "http: the address to bind (default 127.0.0.1). Any non-loopback address needs "
                    + "--allow-non-loopback and a token.")
    String httpHost;

    @Option(names = "--http-port", paramLabel = "PORT", defaultValue = "8765",
            description = "http: the port (default 8765; 0 for any free one, logged at start).")
    int httpPort;

    @Option(names = "--allow-non-loopback", defaultValue = "false",
            description = "http: allow binding any non-loopback address (needs --token).")
    boolean allowNonLoopback;

    @Option(names = "--token", paramLabel = "TOKEN",
            description = "http: clients must send Authorization: Bearer TOKEN (at least 16 characters; else 401). "
                    + "Prefer the environment variable SANDBOX_MCP_TOKEN or --token-file.")
    String token;

    @Option(names = "--token-file", paramLabel = "FILE",
            description = "http: read the token from this file (its first line).")
    String tokenFile;

    @Option(names = "--allowed-origin", paramLabel = "ORIGIN", split = ",",
            description = "http: browser origins allowed to call the server, exact (https://app.example) or any "
                    + "port (http://localhost:*); repeatable. Requests without Origin are always allowed. Default: "
                    + "loopback origins only.")
    List<String> allowedOrigins;

    @Option(names = "--http-keep-alive", paramLabel = "DURATION", defaultValue = "30s",
            description = "http: ping interval of open event streams; a dead client's session ends soon after "
                    + "(default 30s).")
    String httpKeepAlive;

    @Option(names = "--http-ping-timeout", paramLabel = "DURATION",
            description = "http: how long a keep-alive ping waits for the client's answer before its event stream is "
                    + "let go (default: twice --http-keep-alive, at least 30s); a later answer is accepted quietly.")
    String httpPingTimeout;

    @Option(names = "--http-session-timeout", paramLabel = "DURATION", defaultValue = "10m",
            description = "http: a session with no open stream and no request for this long is closed (default 10m).")
    String httpSessionTimeout;

    @Option(names = "--max-message-size", paramLabel = "SIZE", defaultValue = "16m",
            description = "The largest message accepted (a stdio line, an HTTP body; default 16m). Larger ones get a "
                    + "JSON-RPC error (HTTP 413), and the server carries on.")
    String maxMessageSize;

    @Option(names = "--log-level", paramLabel = "LEVEL", defaultValue = "info",
            description = "Log level on stderr: error, warn, info (default), debug, trace.")
    String logLevel;

    private final InputStream stdin;
    private final OutputStream stdout;

    ServerCommand(InputStream stdin, OutputStream stdout) {
        this.stdin = stdin;
        this.stdout = stdout;
    }

    /** Runs the server until the client goes away (stdio) or a signal arrives. */
    @Override
    public Integer call() throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", logLevel.trim().toLowerCase(Locale.ROOT));
        Logger log = LoggerFactory.getLogger(SandboxMcpMain.class);
        Setup setup;
        try {
            setup = setup();
        } catch (IllegalArgumentException | SandboxConfigurationException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
        } catch (SandboxException e) {
            log.error("sandbox-mcp cannot start: {}", e.getMessage()); // the store cannot be opened
            return 1;
        }
        SandboxManager manager;
        try {
            manager = setup.managerBuilder().build();
        } catch (SandboxConfigurationException e) {
            closeQuietly(setup.store());
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
        } catch (SandboxException e) {
            closeQuietly(setup.store());
            log.error("sandbox-mcp cannot start: {}", e.getMessage());
            return 1;
        }
        Shutdown shutdown = new Shutdown(log, manager, setup.store());
        SandboxMcpServer server;
        try {
            SandboxTools tools = setup.toolsBuilder().apply(manager).build();
            server = setup.serverBuilder().apply(tools).start();
        } catch (SandboxConfigurationException | IllegalArgumentException e) {
            shutdown.run();
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
        }
        shutdown.server = server;
        // A signal ends the server in order (see Signals); the hook covers any other exit, without H2's guarantee.
        if (!Signals.onTermination(shutdown)) {
            log.debug("No signal handlers: SIGTERM shuts down from a JVM shutdown hook");
        }
        Runtime.getRuntime().addShutdownHook(new Thread(shutdown, "sandbox-mcp-shutdown"));
        log.info("sandbox-mcp {} {}: driver {}, image {}, workspaces {}, store {}, fleet {}, idle TTL {}, tools {}{}",
                SandboxMcpServer.version(), server.url() != null ? "listening on " + server.url() + " ("
                        + (setup.token() != null ? "bearer token required" : "no token") + ", at most "
                        + maxSessions + " sessions)" : "on stdio (" + (sessionKey != null ? "session key set"
                        : "no session key: the workspace is deleted when the client goes away") + ")",
                manager.driverName(), image, setup.root(), setup.storeName(), setup.fleet(), setup.idle(),
                setup.toolList(), readOnly ? " (read-only)" : "");
        server.awaitClosed();
        shutdown.run();
        return 0;
    }

    /** Everything derived from the options, checked, before anything starts. */
    record Setup(SandboxManager.Builder managerBuilder, Function<SandboxManager, SandboxTools.Builder> toolsBuilder,
                 Function<SandboxTools, SandboxMcpServer.Builder> serverBuilder, SessionStore store, String storeName,
                 Path root, String fleet, Duration idle, String toolList, String token) {
    }

    Setup setup() throws IOException {
        Duration idle = positive(Values.duration(idleTtl), "--idle-ttl");
        Duration leaseDuration = positive(Values.duration(lease), "--lease");
        Duration keepAlive = positive(Values.duration(httpKeepAlive), "--http-keep-alive");
        Duration pingTimeout = httpPingTimeout == null ? null
                : positive(Values.duration(httpPingTimeout), "--http-ping-timeout");
        Duration sessionTimeout = positive(Values.duration(httpSessionTimeout), "--http-session-timeout");
        long maxBytes = Values.size(maxMessageSize);
        if (maxBytes > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("--max-message-size must be below 2 GiB, got " + maxMessageSize);
        }
        if (warmPool < 0 || maxSessions < 1) {
            throw new IllegalArgumentException("--warm-pool must be at least 0 and --max-sessions at least 1");
        }
        String bearer = token;
        if (tokenFile != null) {
            if (bearer != null) {
                throw new IllegalArgumentException("give --token or --token-file, not both");
            }
            List<String> lines = Files.readAllLines(Values.path(tokenFile), StandardCharsets.UTF_8);
            bearer = lines.isEmpty() ? "" : lines.get(0).trim();
        }
        if (transport == Transport.stdio && bearer != null && spec.commandLine().getParseResult() != null
                && (spec.commandLine().getParseResult().hasMatchedOption("--token")
                || spec.commandLine().getParseResult().hasMatchedOption("--token-file"))) {
            throw new IllegalArgumentException("--token is an http option; stdio needs none (only the client that "
                    + "started the process can talk to it)");
        }
        // Checked here too, before anything starts: the server builder only sees them after the manager is up.
        if (transport == Transport.http) {
            SandboxMcpServer.Builder.checkBind(httpHost, allowNonLoopback, bearer != null);
            if (bearer != null) {
                SandboxMcpServer.Builder.checkToken(bearer);
            }
        } else if (sessionKey != null) {
            Sessions.checkKey(sessionKey);
        }
        if (transport == Transport.http && sessionKey != null) {
            throw new IllegalArgumentException("--session-key is a stdio option; over http each client sends the "
                    + SandboxMcpServer.SESSION_HEADER + " header");
        }

        SandboxSpec.Builder specBuilder = SandboxSpec.builder().image(image).pullPolicy(pull).network(network)
                .memoryBytes(Values.size(memory));
        if (cpus < 0) {
            throw new IllegalArgumentException("--cpus must be at least 0, got " + cpus);
        }
        if (cpus > 0) {
            specBuilder.cpus(cpus);
        }
        SandboxSpec sandboxSpec = specBuilder.build();

        List<SandboxTool> allowed = new ArrayList<>();
        if (toolNames != null) {
            for (String name : toolNames) {
                String n = name.trim();
                allowed.add(SandboxTool.byName(n).orElseThrow(() -> new IllegalArgumentException("--tools: no tool "
                        + "named '" + n + "'; the tools are " + Arrays.stream(SandboxTool.values())
                        .map(SandboxTool::toolName).collect(Collectors.joining(", ")))));
            }
        }

        Path root = Values.path(workspaceRoot);
        Path storeFile = null;
        String storeName;
        String derivedFleet;
        String st = store.trim();
        if (st.equals("memory")) {
            storeName = "memory";
            // A store of its own: no other server may sweep this one's containers, nor it theirs.
            derivedFleet = "mcp-" + UUID.randomUUID().toString().substring(0, 8);
        } else if (st.equals("h2") || st.startsWith("h2:")) {
            storeFile = Values.path(st.equals("h2") ? "~/.sandboxkit/mcp/sessions" : st.substring(3));
            storeName = "H2 " + storeFile;
            // Servers sharing a store share a fleet, and only they do.
            derivedFleet = "mcp-" + sha256(storeFile.toString()).substring(0, 12);
        } else {
            throw new IllegalArgumentException("--store must be h2, h2:FILE or memory, got: " + store);
        }
        String fleetName = fleet != null ? fleet : derivedFleet;

        SandboxManager.Builder mb = SandboxManager.builder().workspaceRoot(root).idleTimeout(idle)
                .leaseDuration(leaseDuration).fleet(fleetName);
        if (orphanGrace != null) {
            mb.orphanGrace(positive(Values.duration(orphanGrace), "--orphan-grace"));
        }
        if (driver != null && !driver.isBlank()) {
            mb.driver(driver.trim());
        }
        if (warmPool > 0) {
            mb.warmPool(WarmPool.of(sandboxSpec, warmPool));
        }

        SandboxTool[] toolArray = allowed.toArray(new SandboxTool[0]);
        Function<SandboxManager, SandboxTools.Builder> tb = m -> {
            // mcp-k.<key> for keyed sessions, mcp-s.<MCP session id> for the others (see Sessions).
            SandboxTools.Builder b = SandboxTools.builder(m).spec(sandboxSpec).resolver(SessionResolver.prefixed("mcp-"));
            if (toolArray.length > 0) {
                b.tools(toolArray);
            }
            if (readOnly) {
                b.readOnly();
            }
            return b;
        };
        String finalBearer = bearer;
        Function<SandboxTools, SandboxMcpServer.Builder> sb = t -> {
            SandboxMcpServer.Builder b = SandboxMcpServer.builder(t).maxMessageBytes((int) maxBytes);
            if (noResources) {
                b.noResources();
            }
            if (transport == Transport.stdio) {
                b.stdio(stdin, stdout);
                if (sessionKey != null) {
                    b.sessionKey(sessionKey);
                }
            } else {
                b.http(httpHost, httpPort).maxSessions(maxSessions).httpKeepAlive(keepAlive)
                        .httpSessionTimeout(sessionTimeout);
                if (pingTimeout != null) {
                    b.httpPingTimeout(pingTimeout);
                }
                if (finalBearer != null) {
                    b.bearerToken(finalBearer);
                }
                if (allowNonLoopback) {
                    b.allowNonLoopback();
                }
                if (allowedOrigins != null) {
                    b.allowedOrigins(allowedOrigins.stream().map(String::trim).filter(o -> !o.isEmpty())
                            .toArray(String[]::new));
                }
            }
            return b;
        };
        String toolList = toolArray.length == 0 ? "all" : allowed.stream().map(SandboxTool::toolName)
                .collect(Collectors.joining(","));
        SessionStore sessionStore = null;
        if (storeFile != null) {
            // Opened last: nothing above may fail with the database open. H2's auto-server (several servers on one
            // file) would otherwise listen on every interface.
            if (System.getProperty("h2.bindAddress") == null) {
                System.setProperty("h2.bindAddress", "127.0.0.1");
            }
            sessionStore = JdbcSessionStore.h2(storeFile);
            mb.store(sessionStore);
        }
        return new Setup(mb, tb, sb, sessionStore, storeName, root, fleetName, idle, toolList, bearer);
    }

    private static Duration positive(Duration d, String option) {
        if (d.isZero() || d.isNegative()) {
            throw new IllegalArgumentException(option + " must be positive, got " + d);
        }
        return d;
    }

    private static String sha256(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }

    private static void closeQuietly(SessionStore store) {
        if (store != null) {
            try {
                store.close();
            } catch (RuntimeException ignored) {
                // startup failed already; that is what gets reported
            }
        }
    }

    /**
     * The orderly end, run once by whoever gets there first (the main thread after the client went away, or the
     * shutdown hook on a signal); the other waits for it: close the MCP sessions (their sandboxes are released or
     * destroyed), then the manager (it suspends what is left), then the store.
     */
    static final class Shutdown implements Runnable {
        private final Logger log;
        private final SandboxManager manager;
        private final SessionStore store;
        private final AtomicBoolean started = new AtomicBoolean();
        private final CountDownLatch done = new CountDownLatch(1);
        volatile SandboxMcpServer server;

        Shutdown(Logger log, SandboxManager manager, SessionStore store) {
            this.log = log;
            this.manager = manager;
            this.store = store;
        }

        @Override
        public void run() {
            if (!started.compareAndSet(false, true)) {
                try {
                    done.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return;
            }
            try {
                step("closing the MCP sessions", () -> {
                    if (server != null) {
                        server.close();
                    }
                });
                step("closing the sandbox manager", manager::close);
                step("closing the session store", () -> {
                    if (store != null) {
                        store.close();
                    }
                });
                log.info("sandbox-mcp stopped");
            } finally {
                done.countDown();
            }
        }

        private void step(String what, Runnable action) {
            try {
                action.run();
            } catch (RuntimeException e) {
                log.warn("Shutdown: {} failed: {}", what, e.toString());
            }
        }
    }

    /** {@code --pull}: {@code if-missing}, {@code always}, {@code never}, any case. */
    static final class PullConverter implements CommandLine.ITypeConverter<PullPolicy> {
        @Override
        public PullPolicy convert(String value) {
            try {
                return PullPolicy.valueOf(value.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException("--pull must be if-missing, always or never, got: "
                        + value);
            }
        }
    }

    /** {@code --version}. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[]{"sandbox-mcp " + SandboxMcpServer.version()};
        }
    }

    /** Defaults from {@code SANDBOX_MCP_*} environment variables. */
    static final class EnvDefaults implements CommandLine.IDefaultValueProvider {
        private final Map<String, String> env;

        EnvDefaults(Map<String, String> env) {
            this.env = Map.copyOf(env);
        }

        static String variable(String longName) {
            return ENV_PREFIX + longName.replaceFirst("^--", "").toUpperCase(Locale.ROOT).replace('-', '_');
        }

        @Override
        public String defaultValue(CommandLine.Model.ArgSpec argSpec) {
            if (argSpec instanceof CommandLine.Model.OptionSpec option) {
                String value = env.get(variable(option.longestName()));
                return value == null || value.isBlank() ? null : value;
            }
            return null;
        }
    }
}
