package dev.sandboxkit.mcp;

import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.mcp.ServerCommandTest.Result;
import dev.sandboxkit.testkit.ConfigSamples;
import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.testkit.IsolatedSandboxkitProperties;
import dev.sandboxkit.tools.SandboxTools;
import dev.sandboxkit.tools.ToolDefinition;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static dev.sandboxkit.mcp.ServerCommandTest.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The parity of the server's door with the library's configuration ({@link SandboxConfig}): no default of its own
 * beyond {@link ServerDefaults}, every key reachable, every flag the same as {@code --set} of its key, the library's
 * validation, and the {@code -Dsandboxkit.*} layer beneath the flags.
 */
// The build passes -Dsandboxkit.test.image to the tests: each test starts without any sandboxkit.* property.
@ExtendWith(IsolatedSandboxkitProperties.class)
class ServerConfigTest {
    @TempDir
    Path root;

    private static ServerCommand parse(Map<String, String> env, String... args) {
        CommandLine cmd = SandboxMcpMain.commandLine(InputStream.nullInputStream(), new ByteArrayOutputStream(), env);
        cmd.parseArgs(args);
        return cmd.getCommand();
    }

    private static SandboxConfig config(Map<String, String> env, String... args) {
        return parse(env, args).config();
    }

    private static String[] args(List<String> first, String... then) {
        List<String> all = new ArrayList<>(first);
        all.addAll(List.of(then));
        return all.toArray(String[]::new);
    }

    @Test
    @DisplayName("(a) no flags: the library's defaults, except the documented server defaults")
    void noFlagsIsTheLibrarysDefaultsExceptTheServers() {
        Map<String, String> expected = new HashMap<>();
        for (ServerDefaults.Default d : ServerDefaults.ALL) {
            expected.put(d.key(), d.key().equals("workspace-root") ? ServerCommand.path(d.value()).toString() : d.value());
        }
        expected.put("fleet", ServerDefaults.fleet(ServerCommand.path(ServerDefaults.H2_FILE)));
        assertThat(config(Map.of()).changes()).isEqualTo(expected);
        assertThat(config(Map.of(), "--store", "memory").getFleet()).as("a memory store is a fleet of its own")
                .startsWith("mcp-").isNotEqualTo(config(Map.of(), "--store", "memory").getFleet());

        // A flag that re-typed a library default would not show as a change, until the library's default changed.
        CommandLine cmd = SandboxMcpMain.commandLine(InputStream.nullInputStream(), new ByteArrayOutputStream(), Map.of());
        cmd.parseArgs();
        ServerCommand.FLAGS.forEach((flag, key) -> {
            CommandLine.Model.OptionSpec o = cmd.getCommandSpec().findOption(flag);
            assertThat(o).as(flag).isNotNull();
            assertThat(o.defaultValue()).as(flag + " has no default of its own").isNull();
            assertThat((Object) o.getValue()).as(flag).isNull();
            assertThat(SandboxConfig.keys()).as(flag + " maps onto a key").anyMatch(k -> k.name().equals(key));
        });
        for (ServerDefaults.Default d : ServerDefaults.ALL) {
            assertThat(SandboxConfig.keys()).as(d.key()).anyMatch(k -> k.name().equals(d.key()));
            assertThat(d.reason()).isNotBlank();
        }
    }

    @Test
    @DisplayName("(a) the help shows the library's defaults, not copies")
    void helpShowsTheLibrarysDefaults() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CommandLine cmd = SandboxMcpMain.commandLine(InputStream.nullInputStream(), out, Map.of());
        cmd.setOut(new java.io.PrintWriter(new PrintStream(out, true, StandardCharsets.UTF_8), true));
        assertThat(cmd.execute("--help")).isZero();
        // Without blanks: the help wraps lines at blanks and after dots.
        String help = out.toString(StandardCharsets.UTF_8).replaceAll("\\s+", "");
        SandboxConfig defaults = new SandboxConfig();
        assertThat(help).doesNotContain("${")
                .contains("(idle-timeout;default:thelibrary's," + defaults.get("idle-timeout") + ")")
                .contains("(spec.memory;default:thelibrary's," + defaults.get("spec.memory") + ")")
                .contains("(lease-duration;default:thelibrary's," + defaults.get("lease-duration") + ")")
                .contains("(spec.image;default" + ServerDefaults.IMAGE + ")");
        ServerCommand.FLAGS.forEach((flag, key) -> assertThat(help).as(flag).contains(flag).contains(key));
    }

    @Test
    @DisplayName("(b) every key of the library is reachable with --set, and each flag is --set of its key")
    void everyKeyIsReachableAndEachFlagIsItsKey() {
        int checked = 0;
        for (SandboxConfig.Key k : SandboxConfig.keys()) {
            String key = k.name().endsWith(".*") ? k.name().replace("*", "SAMPLE") : k.name();
            String sample = ConfigSamples.sample(k);
            String direct = new SandboxConfig().set(key, sample).get(key);
            // The server checks the spec as it reads it: a sample that needs another setting gets it too.
            List<String> with = new ArrayList<>();
            StringBuilder withVariable = new StringBuilder();
            ConfigSamples.companions(k).forEach((ck, cv) -> {
                with.addAll(List.of("--set", ck + "=" + cv));
                withVariable.append(ck).append('=').append(cv).append('\n');
            });
            assertThat(config(Map.of(), args(with, "--set", key + "=" + sample)).get(key)).as("--set " + key)
                    .isEqualTo(direct).isNotNull();
            assertThat(config(Map.of(), args(with, "--set", SandboxConfig.PREFIX + key + "=" + sample)).get(key))
                    .as(key).isEqualTo(direct);
            assertThat(config(Map.of(ServerCommand.SET_VARIABLE, withVariable + key + "=" + sample)).get(key))
                    .as(ServerCommand.SET_VARIABLE + " " + key).isEqualTo(direct);
            checked++;
        }
        assertThat(checked).isEqualTo(SandboxConfig.keys().size());
        assertThat(config(Map.of(), "--set", "docker.host=unix:///x.sock").getDriverSettings())
                .containsEntry("docker.host", "unix:///x.sock");

        ServerCommand.FLAGS.forEach((flag, key) -> {
            SandboxConfig.Key k = SandboxConfig.keys().stream().filter(x -> x.name().equals(key)).findFirst().orElseThrow();
            CommandLine.Model.OptionSpec o = parse(Map.of()).spec.findOption(flag);
            boolean takesValue = o.arity().max() > 0;
            String sample = takesValue ? ConfigSamples.sample(k) : "true";
            String viaSet = config(Map.of(), "--set", key + "=" + sample).get(key);
            List<String> args = new ArrayList<>(List.of(flag));
            if (takesValue) {
                args.add(sample);
            }
            assertThat(config(Map.of(), args.toArray(String[]::new)).get(key)).as(flag).isEqualTo(viaSet)
                    .isNotEqualTo(config(Map.of()).get(key));
            assertThat(config(Map.of(ServerCommand.EnvDefaults.variable(flag), sample)).get(key))
                    .as(ServerCommand.EnvDefaults.variable(flag)).isEqualTo(viaSet);
        });
    }

    @Test
    @DisplayName("the layers: the environment above -D, the command line above both; SANDBOX_MCP_SET as a list")
    void layers() {
        System.setProperty("sandboxkit.spec.memory", "1g");
        System.setProperty("sandboxkit.spec.image", "from-property:1");
        assertThat(config(Map.of()).get("spec.memory")).isEqualTo("1GB");
        assertThat(config(Map.of()).getImage()).as("-D is above the server's defaults").isEqualTo("from-property:1");
        assertThat(config(Map.of("SANDBOX_MCP_MEMORY", "2g")).get("spec.memory")).isEqualTo("2GB");
        assertThat(config(Map.of("SANDBOX_MCP_MEMORY", "2g"), "--set", "spec.memory=3g").get("spec.memory"))
                .isEqualTo("3GB");
        assertThat(config(Map.of(ServerCommand.SET_VARIABLE, "spec.memory=2g"), "--memory", "3g").get("spec.memory"))
                .isEqualTo("3GB");
        System.setProperty("sandboxkit.fleet", "default");
        assertThat(config(Map.of()).getFleet()).as("a fleet given is not derived").isEqualTo("default");

        SandboxConfig c = config(Map.of(ServerCommand.SET_VARIABLE,
                "tools.allowed=read_file,list_files,spec.runtime=runsc, tools.output-limit=64KB"),
                "--set", "spec.env.LANG=C.UTF-8", "--set", "tools.output-limit=1KB");
        assertThat(c.getToolsAllowed()).containsExactly("read_file", "list_files");
        assertThat(c.get("spec.runtime")).isEqualTo("runsc");
        assertThat(c.getToolsOutputLimit()).as("the command line's --set above the environment's").isEqualTo(1024);
        assertThat(c.getEnv()).containsEntry("LANG", "C.UTF-8");
        SandboxConfig lines = config(Map.of(ServerCommand.SET_VARIABLE, "spec.post-create=echo a,b\nspec.runtime=runsc\n"));
        assertThat(lines.get("spec.post-create")).isEqualTo("echo a,b");
        assertThat(lines.get("spec.runtime")).isEqualTo("runsc");
        assertThat(config(Map.of(), "--workspace-root", "~/ws").getWorkspaceRoot())
                .isEqualTo(Path.of(System.getProperty("user.home"), "ws"));
        assertThat(config(Map.of(), "--set", "workspace-root=~/ws").getWorkspaceRoot())
                .isEqualTo(Path.of(System.getProperty("user.home"), "ws"));
        assertThat(ServerCommand.path("rel")).isAbsolute();
    }

    @Test
    @DisplayName("(c) an invalid value is a usage error (exit 2) that names where it was given and the key")
    void invalidValuesNameTheFlagAndTheKey() {
        ServerCommand.FLAGS.forEach((flag, key) -> {
            SandboxConfig.Key k = SandboxConfig.keys().stream().filter(x -> x.name().equals(key)).findFirst().orElseThrow();
            if (k.type().equals("string") || k.type().equals("path") || k.type().equals("boolean")) {
                return; // any text is a driver's name, an image, a path; a flag without a value cannot be wrong
            }
            Result r = run(Map.of(), "--store", "memory", flag, "soon!");
            assertThat(r.code()).as(flag).isEqualTo(2);
            assertThat(r.err()).as(flag).contains("sandbox-mcp: " + flag + ": " + k.property() + ": ");
        });
        assertThat(run(Map.of(), "--store", "memory", "--tools", "run_command,rm_rf").err())
                .contains("--tools: sandboxkit.tools.allowed: no tool named 'rm_rf'");
        assertThat(run(Map.of(), "--store", "memory", "--pull", "sometimes").err())
                .contains("--pull: sandboxkit.spec.pull-policy: expected one of always, if-missing, never, got 'sometimes'");
        Result set = run(Map.of(), "--store", "memory", "--set", "idle-timeout=soon");
        assertThat(set.code()).isEqualTo(2);
        assertThat(set.err()).contains("--set: sandboxkit.idle-timeout: expected a duration");
        assertThat(run(Map.of(), "--store", "memory", "--set", "idle-timout=5m").err())
                .contains("--set: sandboxkit.idle-timout: no such setting; did you mean sandboxkit.idle-timeout?");
        assertThat(run(Map.of(), "--store", "memory", "--set", "idle-timeout").err())
                .contains("--set: expected KEY=VALUE, got 'idle-timeout'");
        assertThat(run(Map.of("SANDBOX_MCP_MEMORY", "lots"), "--store", "memory").err())
                .contains("SANDBOX_MCP_MEMORY: sandboxkit.spec.memory: expected a size");
        assertThat(run(Map.of(ServerCommand.SET_VARIABLE, "spec.cpus=-1"), "--store", "memory").err())
                .contains("SANDBOX_MCP_SET: sandboxkit.spec.cpus: expected a number");
        Result both = run(Map.of(), "--store", "memory", "--idle-ttl", "5m", "--set", "idle-timeout=7m");
        assertThat(both.code()).isEqualTo(2);
        assertThat(both.err()).contains("--idle-ttl and --set both set sandboxkit.idle-timeout; give one");
        System.setProperty("sandboxkit.spec.memory", "lots");
        Result property = run(Map.of(), "--store", "memory");
        assertThat(property.code()).isEqualTo(2);
        assertThat(property.err()).contains("-Dsandboxkit.spec.memory: expected a size");
    }

    @Test
    @DisplayName("(d) -Dsandboxkit.idle-timeout reaches the manager unless --idle-ttl is given; the tool set is the config's")
    void systemPropertiesReachTheManagerAndTheToolsTheirSettings() throws Exception {
        System.setProperty("sandboxkit.idle-timeout", "7m");
        try (SandboxManager m = manager("--store", "memory", "--workspace-root", root.toString())) {
            assertThat(m.idleTimeout()).isEqualTo(Duration.ofMinutes(7));
        }
        try (SandboxManager m = manager("--store", "memory", "--workspace-root", root.toString(), "--idle-ttl", "9m")) {
            assertThat(m.idleTimeout()).isEqualTo(Duration.ofMinutes(9));
        }
        ServerCommand.Setup setup = parse(Map.of(), "--store", "memory", "--workspace-root", root.toString(),
                "--read-only", "--image", "img:1").setup();
        try (SandboxManager m = setup.managerBuilder().driver(new FakeDriver()).build()) {
            SandboxTools tools = setup.toolsBuilder().apply(m).build();
            assertThat(tools.readOnly()).isTrue();
            assertThat(tools.definitions()).extracting(ToolDefinition::name)
                    .containsExactlyInAnyOrder("read_file", "list_files", "search_files");
            assertThat(tools.spec()).isEqualTo(setup.config().spec());
            assertThat(tools.spec().image()).isEqualTo("img:1");
            assertThat(tools.sessionId("c1")).as("the server's session prefix").isEqualTo("mcp-c1");
        }
    }

    private SandboxManager manager(String... args) throws Exception {
        return parse(Map.of(), args).setup().managerBuilder().driver(new FakeDriver()).build();
    }

    @Test
    @DisplayName("--show-config prints every setting (the driver's too), its value and where it comes from, and starts nothing")
    void showConfig() {
        System.setProperty("sandboxkit.orphan-grace", "2m");
        Result r = run(Map.of("SANDBOX_MCP_MEMORY", "1g"), "--show-config", "--idle-ttl", "9m", "--set",
                "spec.env.LANG=C.UTF-8", "--set", "docker.pullTimeout=5m", "--workspace-root", root.toString());
        assertThat(r.code()).isZero();
        // The driver's settings too: at their defaults, or as set.
        assertThat(r.out().lines()).contains("docker.workdirs=host", "docker.defaultUser=10001:10001",
                "docker.pullTimeout=5m    # --set");
        assertThat(r.out().lines()).contains("idle-timeout=9m    # --idle-ttl", "spec.memory=1GB    # SANDBOX_MCP_MEMORY",
                        "orphan-grace=2m    # -Dsandboxkit.orphan-grace", "spec.env.LANG=C.UTF-8    # --set",
                        "spec.image=" + ServerDefaults.IMAGE + "    # server default",
                        "lease-duration=" + new SandboxConfig().get("lease-duration"), "reaper-interval=")
                .anyMatch(l -> l.startsWith("fleet=mcp-") && l.endsWith("# server default"));
        for (SandboxConfig.Key k : SandboxConfig.keys()) {
            if (!k.name().endsWith(".*")) {
                assertThat(r.out()).contains(k.name() + "=");
            }
        }
        Result bad = run(Map.of(), "--show-config", "--memory", "lots");
        assertThat(bad.code()).isEqualTo(2);
        assertThat(bad.err()).contains("--memory: sandboxkit.spec.memory: expected a size");
    }

    @Test
    @DisplayName("--set without a key is refused")
    void aSetNeedsAKey() {
        assertThatThrownBy(() -> config(Map.of(), "--set", "=x")).hasMessage("--set: expected KEY=VALUE, got '=x'");
    }
}
