package dev.sandboxkit.mcp;

import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.mcp.internal.Sessions;
import dev.sandboxkit.spi.ConfigValues;
import dev.sandboxkit.spi.SandboxDriverProvider;
import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.store.jdbc.JdbcSessionStore;
import dev.sandboxkit.tools.SandboxTool;
import dev.sandboxkit.tools.SandboxTools;
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
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The {@code sandbox-mcp} command line: every option, its environment variable and its default, and the run
 * itself (manager, tool set, server, orderly shutdown by {@link ServerShutdown}). The library's settings are one
 * {@link SandboxConfig}, built in layers by {@link #config}; the server's own options (transport, store, HTTP) are
 * its fields.
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
                "The library's settings (the key in parentheses after each option, and any other through --set) come "
                        + "in layers, each above the one before: the library's defaults, the server's (where an option "
                        + "names one), -Dsandboxkit.KEY=VALUE system properties of this JVM, the environment, the "
                        + "command line.",
                "Durations: 30s, 10m, 1h30m, 500ms or ISO-8601 (PT30M). Sizes: 512MB, 512m, 16MiB, 1g or bytes.",
                "Exit codes: 0 after the client went away or a signal, 1 if the sandbox backend failed at start, "
                        + "2 for a bad configuration."})
final class ServerCommand implements Callable<Integer> {
    /** Environment variable prefix of every option. */
    static final String ENV_PREFIX = "SANDBOX_MCP_";
    /** The environment's {@code --set}, merged key by key beneath the command line's. */
    static final String SET_VARIABLE = ENV_PREFIX + "SET";

    /**
     * The flags that set a library setting, and its key: each value goes through {@link SandboxConfig#set}, as
     * {@code --set KEY=VALUE} would. Any other setting is reachable through {@code --set}.
     */
    static final Map<String, String> FLAGS = flags();

    private static Map<String, String> flags() {
        Map<String, String> f = new LinkedHashMap<>();
        f.put("--driver", "driver");
        f.put("--image", "spec.image");
        f.put("--pull", "spec.pull-policy");
        f.put("--network", "spec.network");
        f.put("--egress", "spec.egress");
        f.put("--memory", "spec.memory");
        f.put("--cpus", "spec.cpus");
        f.put("--idle-ttl", "idle-timeout");
        f.put("--warm-pool", "warm-pool.size");
        f.put("--read-only", "tools.read-only");
        f.put("--tools", "tools.allowed");
        f.put("--workspace-root", "workspace-root");
        f.put("--fleet", "fleet");
        f.put("--lease", "lease-duration");
        f.put("--orphan-grace", "orphan-grace");
        return Collections.unmodifiableMap(f);
    }

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
    // The library's settings (see FLAGS): no default here, so that the library's reaches the server.

    @Option(names = "--driver", paramLabel = "NAME",
            description = "The sandbox driver (driver; default: the available one, this jar ships docker). The Docker "
                    + "engine is DOCKER_HOST, else the local socket.")
    String driver;

    @Option(names = "--image", paramLabel = "IMAGE",
            description = "The image every sandbox runs (spec.image; default " + ServerDefaults.IMAGE + "). Its "
                    + "entrypoint is not used: any image with sleep and sh works.")
    String image;

    @Option(names = "--pull", paramLabel = "if-missing|always|never",
            description = "When the image may be pulled (spec.pull-policy; default: the library's, "
                    + "${bundle:default.spec.pull-policy}).")
    String pull;

    @Option(names = "--network", paramLabel = "MODE",
            description = "The sandboxes' network: none, bridge, or a network name (spec.network; default: the "
                    + "library's, ${bundle:default.spec.network}).")
    String network;

    @Option(names = "--egress", paramLabel = "HOSTS",
            description = "Hosts the sandboxes may reach over HTTP(S) through the host-side egress proxy while they "
                    + "stay on network none, comma-separated: pypi.org,*.pythonhosted.org,github.com:443 "
                    + "(spec.egress; default: no proxy). The model is told which.")
    String egress;

    @Option(names = "--memory", paramLabel = "SIZE",
            description = "Memory limit per sandbox, swap included; 0 for none (spec.memory; default: the "
                    + "library's, ${bundle:default.spec.memory}).")
    String memory;

    @Option(names = "--cpus", paramLabel = "N",
            description = "CPU limit per sandbox in cores, for example 1.5; 0 for none (spec.cpus; default: the "
                    + "library's, ${bundle:default.spec.cpus}).")
    String cpus;

    @Option(names = "--idle-ttl", paramLabel = "DURATION",
            description = "A sandbox idle this long is stopped; its files stay and the next call resumes it "
                    + "transparently (idle-timeout; default: the library's, ${bundle:default.idle-timeout}).")
    String idleTtl;

    @Option(names = "--warm-pool", paramLabel = "N",
            description = "Sandboxes kept started for new sessions, so that a first call does not wait for a "
                    + "container start (warm-pool.size; default: the library's, ${bundle:default.warm-pool.size}).")
    String warmPool;

    @Option(names = "--read-only",
            description = "Offer only read_file, list_files and search_files: the model cannot change the workspace "
                    + "or run commands (tools.read-only).")
    Boolean readOnly;

    @Option(names = "--tools", paramLabel = "TOOL", split = ",",
            description = "Offer only these tools (comma-separated): run_command, read_file, write_file, edit_file, "
                    + "list_files, search_files (tools.allowed; default: all).")
    List<String> toolNames;

    @Option(names = "--no-resources", defaultValue = "false",
            description = "Do not offer the workspace files as MCP resources (sandbox://workspace/<path>).")
    boolean noResources;

    @Option(names = "--set", paramLabel = "KEY=VALUE",
            description = "Any setting of the library by its key, repeatable: --set spec.runtime=runsc --set "
                    + "tools.output-limit=64KB (the keys and their values: --show-config). Above the "
                    + "-Dsandboxkit.* system properties and the environment; a flag and --set of its key may not "
                    + "be given together. Environment: SANDBOX_MCP_SET, one KEY=VALUE a line or on one line "
                    + "separated by commas (a part without = continues the value before: "
                    + "tools.allowed=read_file,list_files).")
    List<String> settings;

    // ---------------------------------------------------------------- state

    @Option(names = "--workspace-root", paramLabel = "DIR",
            description = "Where each session's durable workdir lives on this host (workspace-root; default "
                    + ServerDefaults.WORKSPACE_ROOT + ").")
    String workspaceRoot;

    @Option(names = "--store", paramLabel = "h2|h2:FILE|memory", defaultValue = ServerDefaults.STORE,
            description = "Where session metadata lives: h2 (an H2 file, " + ServerDefaults.H2_FILE + "; default), "
                    + "h2:FILE, or memory (forgotten on exit). With an H2 file a restarted server resumes old "
                    + "sessions, and several servers can share it.")
    String store;

    @Option(names = "--fleet", paramLabel = "NAME",
            description = "The fleet label of the containers; servers sharing a store must share a fleet (fleet; "
                    + "default: derived from the store file, unique per process for memory).")
    String fleet;

    @Option(names = "--lease", paramLabel = "DURATION",
            description = "How long this server's hold on its sessions lasts unrenewed: after a crash (kill -9) a "
                    + "restarted server takes them over once it has passed (lease-duration; default: the library's, "
                    + "${bundle:default.lease-duration}).")
    String lease;

    @Option(names = "--orphan-grace", paramLabel = "DURATION",
            description = "How old a container or workdir of this store that no live server accounts for must be "
                    + "before the sweep removes it; also how often the sweep looks for the unkeyed sessions of a "
                    + "server that died (orphan-grace; default: the library's, ${bundle:default.orphan-grace}).")
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

    @Option(names = "--show-config",
            description = "Print the library's settings this server would run with, each with where its value comes "
                    + "from, and exit; nothing is started.")
    boolean showConfig;

    private final InputStream stdin;
    private final OutputStream stdout;
    private final Map<String, String> env;

    ServerCommand(InputStream stdin, OutputStream stdout, Map<String, String> env) {
        this.stdin = stdin;
        this.stdout = stdout;
        this.env = Map.copyOf(env);
    }

    /** Runs the server until the client goes away (stdio) or a signal arrives. */
    @Override
    public Integer call() throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", logLevel.trim().toLowerCase(Locale.ROOT));
        Logger log = LoggerFactory.getLogger(SandboxMcpMain.class);
        if (showConfig) {
            try {
                printConfig(configure());
            } catch (IllegalArgumentException | SandboxConfigurationException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
            }
            return 0;
        }
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
        ServerShutdown shutdown = new ServerShutdown(log, manager, setup.store());
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
        SandboxConfig c = setup.config();
        log.info("sandbox-mcp {} {}: driver {}, image {}, workspaces {}, store {}, fleet {}, idle TTL {}, tools {}{}",
                SandboxMcpServer.version(), server.url() != null ? "listening on " + server.url() + " ("
                        + (setup.token() != null ? "bearer token required" : "no token") + ", at most "
                        + maxSessions + " sessions)" : "on stdio (" + (sessionKey != null ? "session key set"
                        : "no session key: the workspace is deleted when the client goes away") + ")",
                manager.driverName(), c.getImage(), c.getWorkspaceRoot(), setup.storeName(), c.getFleet(),
                c.get("idle-timeout"), c.getToolsAllowed().isEmpty() ? "all" : String.join(",", c.getToolsAllowed()),
                c.isToolsReadOnly() ? " (read-only)" : "");
        log.debug("Settings other than the library's defaults: {}", c.changes());
        server.awaitClosed();
        shutdown.run();
        return 0;
    }

    /** Everything derived from the options, checked, before anything starts. */
    record Setup(SandboxConfig config, SandboxManager.Builder managerBuilder,
                 Function<SandboxManager, SandboxTools.Builder> toolsBuilder,
                 Function<SandboxTools, SandboxMcpServer.Builder> serverBuilder, SessionStore store, String storeName,
                 String token) {
    }

    Setup setup() throws IOException {
        Duration keepAlive = positiveDuration(httpKeepAlive, "--http-keep-alive");
        Duration pingTimeout = httpPingTimeout == null ? null
                : positiveDuration(httpPingTimeout, "--http-ping-timeout");
        Duration sessionTimeout = positiveDuration(httpSessionTimeout, "--http-session-timeout");
        long maxBytes = ConfigValues.size("--max-message-size", maxMessageSize);
        if (maxBytes > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("--max-message-size must be below 2 GiB, got " + maxMessageSize);
        }
        if (maxSessions < 1) {
            throw new IllegalArgumentException("--max-sessions must be at least 1");
        }
        String bearer = token;
        if (tokenFile != null) {
            if (bearer != null) {
                throw new IllegalArgumentException("give --token or --token-file, not both");
            }
            List<String> lines = Files.readAllLines(path(tokenFile), StandardCharsets.UTF_8);
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

        SandboxConfig config = config();
        Path storeFile = storeFile();

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
        SandboxManager.Builder mb = SandboxManager.builder(config);
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
        return new Setup(config, mb, m -> SandboxTools.builder(m).config(config), sb, sessionStore,
                storeFile == null ? "memory" : "H2 " + storeFile, bearer);
    }

    /** {@code --store}: the H2 file, or {@code null} for {@code memory}. */
    private Path storeFile() {
        String st = store.trim();
        if (st.equals("memory")) {
            return null;
        }
        if (st.equals("h2") || st.startsWith("h2:")) {
            return path(st.equals("h2") ? ServerDefaults.H2_FILE : st.substring(3));
        }
        throw new IllegalArgumentException("--store must be h2, h2:FILE or memory, got: " + store);
    }

    /**
     * The library's settings, in layers, each above the one before: the library's defaults; the server's
     * ({@link ServerDefaults}) where no layer names the key; the {@code -Dsandboxkit.*} system properties; the
     * environment ({@code SANDBOX_MCP_*} of the flags in {@link #FLAGS}, {@code SANDBOX_MCP_SET}); the command line
     * (those flags, {@code --set}). Every value goes through {@link SandboxConfig#set}: one syntax, one validation,
     * whose message names the key; this adds where it came from.
     *
     * @return the settings, checked as far as they can be before anything starts
     */
    SandboxConfig config() {
        return configure().config();
    }

    /** The settings, and where each value that is not the library's default came from. */
    record Configured(SandboxConfig config, Map<String, String> origin) {
    }

    private Configured configure() {
        SandboxConfig config;
        try {
            config = SandboxConfig.fromSystemProperties();
        } catch (SandboxConfigurationException e) {
            throw new SandboxConfigurationException("-D" + e.getMessage(), e); // the message starts with the key
        }
        Map<String, String> origin = new HashMap<>(); // key -> where its value was given
        for (String property : System.getProperties().stringPropertyNames()) {
            if (property.startsWith(SandboxConfig.PREFIX)) {
                origin.put(key(property), "-D" + property);
            }
        }
        for (boolean commandLine : new boolean[]{false, true}) {
            Map<String, String> layer = new HashMap<>();
            for (Setting s : layer(commandLine)) {
                String key = key(s.key());
                String before = layer.put(key, s.where());
                if (before != null && !(before.equals(s.where()) && isSet(before))) {
                    throw new SandboxConfigurationException(before + " and " + s.where() + " both set "
                            + SandboxConfig.PREFIX + key + "; give one");
                }
                try {
                    config.set(s.key(), s.value());
                } catch (SandboxConfigurationException e) {
                    throw new SandboxConfigurationException(s.where() + ": " + e.getMessage(), e);
                }
                origin.put(key, s.where());
            }
        }
        for (String key : ServerDefaults.apply(config, origin.keySet(), storeFile())) { // the fleet: from the store
            origin.put(key, "server default");
        }
        for (SandboxConfig.Key k : SandboxConfig.keys()) {
            String value = k.type().equals("path") ? config.get(k.name()) : null;
            if (value != null && value.startsWith("~")) {
                config.set(k.name(), path(value).toString());
            }
        }
        config.spec(); // the default spec's own checks, before anything starts
        for (String name : config.getToolsAllowed()) { // so are the tools' names, which the tool set checks
            if (SandboxTool.byName(name).isEmpty()) {
                throw new SandboxConfigurationException(origin.get("tools.allowed") + ": " + SandboxConfig.PREFIX
                        + "tools.allowed: no tool named '" + name + "'; the tools are "
                        + Arrays.stream(SandboxTool.values()).map(SandboxTool::toolName).collect(Collectors.joining(", ")));
            }
        }
        return new Configured(config, origin);
    }

    /** {@code --show-config}: every key (the drivers' too), its value, and where the value comes from. */
    private void printConfig(Configured c) {
        Map<String, String> values = new LinkedHashMap<>();
        for (SandboxConfig.Key k : SandboxConfig.keys()) {
            if (!k.name().endsWith(".*")) {
                values.put(k.name(), c.config().get(k.name()));
            }
        }
        // The settings of each driver on the class path, at their defaults unless set.
        ServiceLoader.load(SandboxDriverProvider.class, ServerCommand.class.getClassLoader()).stream()
                .map(ServiceLoader.Provider::get).sorted(Comparator.comparing(SandboxDriverProvider::name))
                .forEach(p -> p.settingKeys().forEach(k -> values.put(k.name(), k.defaultValue())));
        values.putAll(c.config().changes()); // map entries and driver settings
        PrintWriter out = spec.commandLine().getOut();
        values.forEach((key, value) -> out.printf("%s=%s%s%n", key, value == null ? "" : value,
                c.origin().containsKey(key) ? "    # " + c.origin().get(key) : ""));
        out.flush();
    }

    /** One setting as given: where ({@code --idle-ttl}, {@code SANDBOX_MCP_SET}, ...), its key, its value. */
    private record Setting(String where, String key, String value) {
    }

    /** One layer's settings: the flags of {@link #FLAGS}, then {@code --set}. */
    private List<Setting> layer(boolean commandLine) {
        CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
        List<Setting> out = new ArrayList<>();
        FLAGS.forEach((flag, key) -> {
            CommandLine.Model.OptionSpec option = spec.findOption(flag);
            Object value = option.getValue();
            boolean given = parsed == null || parsed.hasMatchedOption(option);
            if (value != null && given == commandLine) {
                String text = value instanceof List<?> list ? list.stream().map(String::valueOf)
                        .collect(Collectors.joining(",")) : value.toString();
                out.add(new Setting(commandLine ? flag : EnvDefaults.variable(flag), key, text));
            }
        });
        List<String> pairs = commandLine ? settings == null ? List.of() : settings : envSettings();
        String where = commandLine ? "--set" : SET_VARIABLE;
        for (String pair : pairs) {
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new SandboxConfigurationException(where + ": expected KEY=VALUE, got '" + pair + "'");
            }
            out.add(new Setting(where, pair.substring(0, eq).trim(), pair.substring(eq + 1)));
        }
        return out;
    }

    /**
     * {@code SANDBOX_MCP_SET}: one {@code KEY=VALUE} a line; or, on one line, separated by commas, where a part
     * without {@code =} belongs to the value before ({@code tools.allowed=read_file,list_files}).
     */
    private List<String> envSettings() {
        String text = env.get(SET_VARIABLE);
        List<String> out = new ArrayList<>();
        if (text == null) {
            return out;
        }
        for (String part : text.split(text.contains("\n") ? "\r?\n" : ",")) {
            if (part.isBlank()) {
                continue;
            }
            if (!part.contains("=") && !out.isEmpty() && !text.contains("\n")) {
                out.set(out.size() - 1, out.get(out.size() - 1) + "," + part.trim());
            } else {
                out.add(part.trim());
            }
        }
        return out;
    }

    private static boolean isSet(String where) {
        return where.equals("--set") || where.equals(SET_VARIABLE);
    }

    /** A key as the library knows it: without the prefix, the older spelling of workspace-root mapped. */
    private static String key(String text) {
        String k = text.trim();
        k = k.startsWith(SandboxConfig.PREFIX) ? k.substring(SandboxConfig.PREFIX.length()) : k;
        return k.equals("workspaceRoot") ? "workspace-root" : k;
    }

    private static Duration positiveDuration(String text, String option) {
        Duration d = ConfigValues.duration(option, text);
        if (d.isZero() || d.isNegative()) {
            throw new IllegalArgumentException(option + " must be positive, got " + text);
        }
        return d;
    }

    /** A path; a leading {@code ~} is the user's home. */
    static Path path(String text) {
        String t = text.trim();
        if (t.equals("~") || t.startsWith("~/")) {
            return Path.of(System.getProperty("user.home") + t.substring(1)).toAbsolutePath().normalize();
        }
        return Path.of(t).toAbsolutePath().normalize();
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
            // --set's variable is merged key by key (see layer); --show-config is a command, not a setting.
            if (argSpec instanceof CommandLine.Model.OptionSpec option
                    && !List.of("--set", "--show-config").contains(option.longestName())) {
                String value = env.get(variable(option.longestName()));
                return value == null || value.isBlank() ? null : value;
            }
            return null;
        }
    }
}
