package dev.sandboxkit;

import dev.sandboxkit.internal.EgressProxy;
import dev.sandboxkit.spi.ConfigValues;
import org.jspecify.annotations.Nullable;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * Every setting of sandboxkit in one bindable object, with its default written here once: the manager's options, the
 * default sandbox spec, the warm pool, the agent tools and the drivers' settings. Every entry point maps onto it the
 * same way: {@link SandboxManager#builder(SandboxConfig)} from code, {@link #fromSystemProperties()} for
 * {@code -Dsandboxkit.*}, the Spring Boot starter for {@code sandboxkit.*} properties, the MCP server for its flags
 * and {@code --set}. Each setting has a key (see {@link #keys()}); values are text in one syntax
 * ({@link ConfigValues}: {@code 30s}, {@code 512MB}, ...), and an invalid one fails with a
 * {@link SandboxConfigurationException} that names the key.
 *
 * <pre>{@code
 * SandboxConfig config = new SandboxConfig()
 *         .set("idle-timeout", "10m")
 *         .set("spec.image", "python:3.12-slim")
 *         .set("docker.host", "unix:///var/run/docker.sock");
 * try (SandboxManager manager = SandboxManager.builder(config).build()) {
 *     Sandbox sandbox = manager.acquire("chat-42", config.spec());
 * }
 * }</pre>
 *
 * <p>Keys are written without the {@value #PREFIX} prefix here and with it everywhere else (system properties, Boot
 * properties); {@link #set} accepts both. Map-valued settings take one key per entry ({@code spec.env.LANG},
 * {@code spec.labels.team}); a key whose first part names no section (for example {@code docker.host} or
 * {@code kubernetes.namespace}) is a driver setting, checked by the driver when the manager starts.
 *
 * <p>Not thread-safe: build it, then hand it over. {@link #copy()} makes an independent copy.
 */
public final class SandboxConfig {
    /** The prefix of every key outside this class: {@code sandboxkit.idle-timeout}. */
    public static final String PREFIX = "sandboxkit.";

    /** The spec's own defaults, read from {@link SandboxSpec.Builder}: written there once. */
    private static final SandboxSpec SPEC_DEFAULTS = SandboxSpec.builder().image("defaults").build();
    /** The egress proxy's own defaults, read from its settings: written there once. */
    private static final EgressProxy.Settings EGRESS_DEFAULTS = EgressProxy.Settings.DEFAULTS;
    private static final Set<String> SECTIONS = Set.of("spec", "warm-pool", "tools", "egress");

    // ------------------------------------------------------------------ manager
    private @Nullable String driver;
    private Path workspaceRoot = Path.of(System.getProperty("java.io.tmpdir"), "sandboxkit");
    private Duration idleTimeout = Duration.ofMinutes(30);
    private @Nullable Duration reaperInterval;
    private Duration leaseDuration = Duration.ofSeconds(30);
    private Duration reconcileInterval = Duration.ofSeconds(60);
    private Duration orphanGrace = Duration.ofMinutes(10);
    private String fleet = "default";
    private @Nullable String instanceId;
    private long maxFileSize = FileLimits.DEFAULT.maxFileBytes();
    private int maxFileEntries = FileLimits.DEFAULT.maxEntries();
    private @Nullable Duration archiveAfter;
    private final Map<String, String> driverSettings = new TreeMap<>();

    // ------------------------------------------------------------------ egress proxy
    private int egressMaxConnections = EGRESS_DEFAULTS.maxPerSession();
    private long egressMaxBytes = EGRESS_DEFAULTS.maxBytesPerSession();
    private Duration egressIdleTimeout = EGRESS_DEFAULTS.tunnelIdle();
    private Duration egressConnectTimeout = EGRESS_DEFAULTS.connectTimeout();

    // ------------------------------------------------------------------ spec
    private @Nullable String image;
    private final Map<String, String> env = new TreeMap<>();
    private @Nullable String user = SPEC_DEFAULTS.user();
    private String network = SPEC_DEFAULTS.network();
    private long memory = SPEC_DEFAULTS.memoryBytes();
    private double cpus = SPEC_DEFAULTS.cpus();
    private long pidsLimit = SPEC_DEFAULTS.pidsLimit();
    private long tmpSize = SPEC_DEFAULTS.tmpSizeBytes();
    private boolean dropAllCapabilities = SPEC_DEFAULTS.dropAllCapabilities();
    private final Set<String> addCapabilities = new LinkedHashSet<>(SPEC_DEFAULTS.addCapabilities());
    private boolean noNewPrivileges = SPEC_DEFAULTS.noNewPrivileges();
    private boolean readOnlyRootFilesystem = SPEC_DEFAULTS.readOnlyRootFilesystem();
    private boolean init = SPEC_DEFAULTS.init();
    private PullPolicy pullPolicy = SPEC_DEFAULTS.pullPolicy();
    private final Map<String, String> labels = new TreeMap<>();
    private boolean ephemeral = SPEC_DEFAULTS.ephemeral();
    private boolean managerScoped = SPEC_DEFAULTS.managerScoped();
    private @Nullable Duration maxLifetime = SPEC_DEFAULTS.maxLifetime();
    private @Nullable String postCreate;
    private Duration postCreateTimeout = Duration.ofMinutes(10);
    private @Nullable String httpProxy;
    private @Nullable String httpsProxy;
    private @Nullable String noProxy;
    private @Nullable String extraCaCertificates;
    private ExecMode execMode = SPEC_DEFAULTS.execMode();
    private @Nullable String runtime = SPEC_DEFAULTS.runtime();
    private @Nullable String template;
    private @Nullable List<String> egress;

    // ------------------------------------------------------------------ warm pool
    private int warmPoolSize;
    private @Nullable Integer warmPoolMaxSize;
    private WarmPool.Exhausted warmPoolWhenEmpty = WarmPool.Exhausted.COLD_START;
    private Duration warmPoolWaitTimeout = Duration.ofSeconds(10);

    // ------------------------------------------------------------------ tools
    private boolean toolsReadOnly;
    private final List<String> toolsAllowed = new ArrayList<>();
    private String toolsSessionPrefix = "conv-";
    private @Nullable String toolsDefaultConversation;
    private Duration toolsDefaultTimeout = Duration.ofMinutes(2);
    private Duration toolsMaxTimeout = Duration.ofMinutes(10);
    private long toolsOutputLimit = 20_000;
    private long toolsReadLimit = 100_000;
    private long toolsWriteLimit = 10_000_000;
    private int toolsListLimit = 500;
    private int toolsSearchLimit = 500;

    /** Every default. */
    public SandboxConfig() {
    }

    /**
     * A configuration from settings: {@code -Dsandboxkit.*}-style keys (with or without the prefix) to values.
     *
     * @param settings the keys and values; entries without the prefix are taken as keys too
     * @return the configuration: defaults, then these
     * @throws SandboxConfigurationException naming the first key that is unknown or invalid
     */
    public static SandboxConfig from(Map<String, String> settings) {
        SandboxConfig c = new SandboxConfig();
        settings.forEach(c::set);
        return c;
    }

    /**
     * The defaults, then every {@code sandboxkit.*} system property (the legacy {@code sandboxkit.workspaceRoot}
     * included).
     *
     * @return the configuration
     * @throws SandboxConfigurationException naming the first property that is unknown or invalid
     */
    public static SandboxConfig fromSystemProperties() {
        return fromProperties(System.getProperties());
    }

    /**
     * The defaults, then every {@code sandboxkit.*} entry of {@code properties}; other entries are ignored.
     *
     * @param properties for example a loaded {@code sandboxkit.properties} file
     * @return the configuration
     * @throws SandboxConfigurationException naming the first entry that is unknown or invalid
     */
    public static SandboxConfig fromProperties(Properties properties) {
        SandboxConfig c = new SandboxConfig();
        Map<String, String> ordered = new TreeMap<>();
        for (String name : properties.stringPropertyNames()) {
            if (name.startsWith(PREFIX)) {
                ordered.put(name, properties.getProperty(name));
            }
        }
        ordered.forEach(c::set);
        return c;
    }

    /**
     * Sets one setting from text.
     *
     * @param key   the key, with or without {@value #PREFIX}: {@code idle-timeout}, {@code spec.env.LANG},
     *              {@code docker.host}
     * @param value the value in {@link ConfigValues}' syntax; blank clears a setting that may be unset
     * @return this configuration
     * @throws SandboxConfigurationException naming the key, if it is unknown or the value invalid
     */
    public SandboxConfig set(String key, String value) {
        Objects.requireNonNull(value, "value");
        String k = normalize(key);
        Key known = Keys.BY_NAME.get(k);
        if (known != null) {
            known.setter.accept(this, value.trim());
            return this;
        }
        if (k.startsWith("spec.env.") && k.length() > "spec.env.".length()) {
            return putOrRemove(env, k.substring("spec.env.".length()), value);
        }
        if (k.startsWith("spec.labels.") && k.length() > "spec.labels.".length()) {
            return putOrRemove(labels, k.substring("spec.labels.".length()), value);
        }
        if (isDriverKey(k)) {
            return putOrRemove(driverSettings, k, value); // a driver's: it checks its own when it starts
        }
        throw new SandboxConfigurationException(PREFIX + k + ": no such setting" + Keys.nearest(k));
    }

    /**
     * The value of a setting as text, in the canonical form {@link #set} accepts back.
     *
     * @param key the key, with or without {@value #PREFIX}
     * @return the value, or {@code null} when it is unset (a default derived at start, or none)
     * @throws SandboxConfigurationException if there is no such key
     */
    public @Nullable String get(String key) {
        String k = normalize(key);
        Key known = Keys.BY_NAME.get(k);
        if (known != null) {
            return known.getter.apply(this);
        }
        if (k.startsWith("spec.env.")) {
            return env.get(k.substring("spec.env.".length()));
        }
        if (k.startsWith("spec.labels.")) {
            return labels.get(k.substring("spec.labels.".length()));
        }
        if (isDriverKey(k)) {
            return driverSettings.get(k);
        }
        throw new SandboxConfigurationException(PREFIX + k + ": no such setting" + Keys.nearest(k));
    }

    /**
     * Every setting whose value differs from the default, as {@code key -> text}: what {@link #from(Map)} needs to
     * rebuild this configuration. Map entries and driver settings are listed one key each.
     *
     * @return the changed settings, in key order
     */
    public Map<String, String> changes() {
        SandboxConfig defaults = new SandboxConfig();
        Map<String, String> out = new TreeMap<>();
        for (Key k : Keys.ALL) {
            String mine = k.getter.apply(this);
            if (!Objects.equals(mine, k.getter.apply(defaults))) {
                out.put(k.name, mine == null ? "" : mine);
            }
        }
        env.forEach((n, v) -> out.put("spec.env." + n, v));
        labels.forEach((n, v) -> out.put("spec.labels." + n, v));
        out.putAll(driverSettings);
        return out;
    }

    /**
     * An independent copy.
     *
     * @return the copy
     */
    public SandboxConfig copy() {
        return from(changes());
    }

    /**
     * The known keys (without {@value #PREFIX}), in order, with their defaults and descriptions: what the docs'
     * tables, the Boot starter's metadata and the MCP server's {@code --set} list are made from. Map-valued settings
     * appear as {@code spec.env.*}, {@code spec.labels.*}; driver settings are the drivers' own.
     *
     * @return the keys
     */
    public static List<Key> keys() {
        return Keys.ALL;
    }

    // ------------------------------------------------------------------ derived objects

    /**
     * The default sandbox spec these settings describe.
     *
     * @return the spec
     * @throws SandboxConfigurationException if {@code spec.image} is unset, or a spec setting is invalid (naming it)
     */
    public SandboxSpec spec() {
        if (image == null) {
            throw new SandboxConfigurationException(PREFIX + "spec.image: required (the image every sandbox runs, "
                    + "for example python:3.12-slim)");
        }
        SandboxSpec.Builder b = SandboxSpec.builder().image(image).env(env).user(user).network(network)
                .memoryBytes(memory).cpus(cpus).pidsLimit(pidsLimit).tmpSizeBytes(tmpSize)
                .dropAllCapabilities(dropAllCapabilities).noNewPrivileges(noNewPrivileges)
                .readOnlyRootFilesystem(readOnlyRootFilesystem).init(init).pullPolicy(pullPolicy)
                .ephemeral(ephemeral).managerScoped(managerScoped).maxLifetime(maxLifetime).execMode(execMode)
                .runtime(runtime);
        addCapabilities.forEach(b::addCapability);
        labels.forEach(b::label);
        if (postCreate != null) {
            b.postCreate(ExecRequest.shell(postCreate).withTimeout(postCreateTimeout));
        }
        if (httpProxy != null || httpsProxy != null) {
            b.proxy(new SandboxSpec.Proxy(httpProxy, httpsProxy, noProxy));
        } else if (noProxy != null) {
            throw new SandboxConfigurationException(PREFIX + "spec.no-proxy: needs " + PREFIX + "spec.http-proxy or "
                    + PREFIX + "spec.https-proxy");
        }
        if (extraCaCertificates != null) {
            b.extraCaCertificates(pem(extraCaCertificates));
        }
        if (egress != null) {
            b.egress(EgressPolicy.parse(egress)); // checked when set: cannot fail here
        }
        if (template != null) {
            try {
                b.template(template.startsWith("snapshot:")
                        ? WorkspaceTemplate.snapshot(new SnapshotId(template.substring("snapshot:".length())))
                        : WorkspaceTemplate.directory(Path.of(template)));
            } catch (IllegalArgumentException e) { // a malformed snapshot id, a relative or invalid path
                throw new SandboxConfigurationException(PREFIX + "spec.template: " + e.getMessage(), e);
            }
        }
        try {
            return b.build();
        } catch (IllegalArgumentException e) {
            throw new SandboxConfigurationException(PREFIX + specKey(String.valueOf(e.getMessage())) + ": "
                    + e.getMessage(), e);
        }
    }

    /** The key behind a complaint of the spec's builder, which starts with the name of the field it is about. */
    private static String specKey(String message) {
        for (String[] field : new String[][] {{"image", "image"}, {"user", "user"}, {"network", "network"},
                {"invalid env entry", "env.*"}, {"env ", "env.*"}, {"label", "labels.*"},
                {"extraCaCertificates", "extra-ca-certificates"}, {"a proxy", "http-proxy"}, {"runtime", "runtime"}, {"egress", "egress"}}) {
            if (message.startsWith(field[0])) {
                return "spec." + field[1];
            }
        }
        return "spec";
    }

    /**
     * The warm pool these settings describe, for {@code spec}.
     *
     * @param spec the spec its sandboxes are started from
     * @return the pool, or {@code null} when {@code warm-pool.size} is 0
     * @throws SandboxConfigurationException if {@code warm-pool.max-size} is below {@code warm-pool.size}
     */
    public @Nullable WarmPool warmPool(SandboxSpec spec) {
        if (warmPoolSize == 0) {
            return null;
        }
        int max = warmPoolMaxSize != null ? warmPoolMaxSize : warmPoolSize;
        if (max < warmPoolSize) {
            throw new SandboxConfigurationException(PREFIX + "warm-pool.max-size: must be at least " + PREFIX
                    + "warm-pool.size (" + warmPoolSize + "), got " + max);
        }
        return WarmPool.of(spec, warmPoolSize).maxSize(max).whenEmpty(warmPoolWhenEmpty, warmPoolWaitTimeout);
    }

    /**
     * The files API's limits.
     *
     * @return {@code max-file-size} and {@code max-file-entries}
     */
    public FileLimits fileLimits() {
        return new FileLimits(maxFileSize, maxFileEntries);
    }

    private static String pem(String value) {
        if (value.contains("-----BEGIN CERTIFICATE-----")) {
            return value;
        }
        try {
            return Files.readString(Path.of(value), StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            throw new SandboxConfigurationException(PREFIX + "spec.extra-ca-certificates: neither PEM text nor a "
                    + "readable PEM file: " + value, e);
        }
    }

    // ------------------------------------------------------------------ typed accessors (manager)

    /** @return {@code driver}: the driver's name, or {@code null} to detect it */
    public @Nullable String getDriver() {
        return driver;
    }

    /** @param driver {@code driver}: {@code docker}, {@code kubernetes}, another driver module's name, or {@code null} */
    public void setDriver(@Nullable String driver) {
        this.driver = blankToNull(driver);
    }

    /** @return {@code workspace-root}: the host directory of the per-session workdirs */
    public Path getWorkspaceRoot() {
        return workspaceRoot;
    }

    /** @param workspaceRoot {@code workspace-root} */
    public void setWorkspaceRoot(Path workspaceRoot) {
        this.workspaceRoot = Objects.requireNonNull(workspaceRoot, "workspaceRoot");
    }

    /** @return {@code idle-timeout}: how long a sandbox may be idle before its container is removed */
    public Duration getIdleTimeout() {
        return idleTimeout;
    }

    /** @param idleTimeout {@code idle-timeout}, positive */
    public void setIdleTimeout(Duration idleTimeout) {
        this.idleTimeout = positive("idle-timeout", idleTimeout);
    }

    /** @return {@code reaper-interval}, or {@code null} for a quarter of the idle timeout, at least 10 ms, at most 500 ms */
    public @Nullable Duration getReaperInterval() {
        return reaperInterval;
    }

    /** @param reaperInterval {@code reaper-interval}, positive, or {@code null} for the derived default */
    public void setReaperInterval(@Nullable Duration reaperInterval) {
        this.reaperInterval = reaperInterval == null ? null : positive("reaper-interval", reaperInterval);
    }

    /** @return {@code lease-duration}: how long a manager's hold on its sessions lasts without renewal */
    public Duration getLeaseDuration() {
        return leaseDuration;
    }

    /** @param leaseDuration {@code lease-duration}, positive */
    public void setLeaseDuration(Duration leaseDuration) {
        this.leaseDuration = positive("lease-duration", leaseDuration);
    }

    /** @return {@code reconcile-interval}: how often the orphan sweep runs */
    public Duration getReconcileInterval() {
        return reconcileInterval;
    }

    /** @param reconcileInterval {@code reconcile-interval}, positive */
    public void setReconcileInterval(Duration reconcileInterval) {
        this.reconcileInterval = positive("reconcile-interval", reconcileInterval);
    }

    /** @return {@code orphan-grace} (see {@link SandboxManager.Builder#orphanGrace(Duration)}) */
    public Duration getOrphanGrace() {
        return orphanGrace;
    }

    /** @param orphanGrace {@code orphan-grace}, positive */
    public void setOrphanGrace(Duration orphanGrace) {
        this.orphanGrace = positive("orphan-grace", orphanGrace);
    }

    /** @return {@code fleet} (see {@link SandboxManager.Builder#fleet(String)}) */
    public String getFleet() {
        return fleet;
    }

    /** @param fleet {@code fleet}: 1-63 characters from {@code [A-Za-z0-9._-]}, starting and ending alphanumeric */
    public void setFleet(String fleet) {
        this.fleet = name("fleet", fleet);
    }

    /** @return {@code instance-id}, or {@code null} for a random one */
    public @Nullable String getInstanceId() {
        return instanceId;
    }

    /** @param instanceId {@code instance-id}, or {@code null} for a random one; never share one */
    public void setInstanceId(@Nullable String instanceId) {
        this.instanceId = instanceId == null || instanceId.isBlank() ? null : name("instance-id", instanceId);
    }

    /** @return {@code max-file-size}: the files API's largest file, in bytes */
    public long getMaxFileSize() {
        return maxFileSize;
    }

    /** @param maxFileSize {@code max-file-size}, at least 1 */
    public void setMaxFileSize(long maxFileSize) {
        this.maxFileSize = atLeast("max-file-size", maxFileSize, 1);
    }

    /** @return {@code max-file-entries}: the most entries one files-API listing or archive may hold */
    public int getMaxFileEntries() {
        return maxFileEntries;
    }

    /** @param maxFileEntries {@code max-file-entries}, at least 1 */
    public void setMaxFileEntries(int maxFileEntries) {
        this.maxFileEntries = (int) atLeast("max-file-entries", maxFileEntries, 1);
    }

    /** @return {@code archive-after}, or {@code null}; used with an archive store given to the builder */
    public @Nullable Duration getArchiveAfter() {
        return archiveAfter;
    }

    /** @param archiveAfter {@code archive-after}, positive, or {@code null} */
    public void setArchiveAfter(@Nullable Duration archiveAfter) {
        this.archiveAfter = archiveAfter == null ? null : positive("archive-after", archiveAfter);
    }

    /** @return {@code egress.max-connections}: open egress connections allowed per session */
    public int getEgressMaxConnections() {
        return egressMaxConnections;
    }

    /** @param max {@code egress.max-connections}, at least 1 */
    public void setEgressMaxConnections(int max) {
        this.egressMaxConnections = (int) atLeast("egress.max-connections", max, 1);
    }

    /** @return {@code egress.max-bytes}: bytes one session may move through the egress proxy; 0 for no cap */
    public long getEgressMaxBytes() {
        return egressMaxBytes;
    }

    /** @param max {@code egress.max-bytes}, 0 for no cap */
    public void setEgressMaxBytes(long max) {
        this.egressMaxBytes = atLeast("egress.max-bytes", max, 0);
    }

    /** @return {@code egress.idle-timeout}: how long an egress connection may carry no byte before it is closed */
    public Duration getEgressIdleTimeout() {
        return egressIdleTimeout;
    }

    /** @param timeout {@code egress.idle-timeout}, positive */
    public void setEgressIdleTimeout(Duration timeout) {
        this.egressIdleTimeout = positive("egress.idle-timeout", timeout);
    }

    /** @return {@code egress.connect-timeout}: how long the proxy waits for an upstream to accept */
    public Duration getEgressConnectTimeout() {
        return egressConnectTimeout;
    }

    /** @param timeout {@code egress.connect-timeout}, positive */
    public void setEgressConnectTimeout(Duration timeout) {
        this.egressConnectTimeout = positive("egress.connect-timeout", timeout);
    }

    /**
     * The drivers' settings, by key ({@code docker.host}); each driver reads and checks its own.
     *
     * @return an unmodifiable view
     */
    public Map<String, String> getDriverSettings() {
        return Collections.unmodifiableMap(driverSettings);
    }

    // ------------------------------------------------------------------ typed accessors (spec, pool, tools)

    /** @return {@code spec.image}, or {@code null} when unset (required to build a spec) */
    public @Nullable String getImage() {
        return image;
    }

    /** @param image {@code spec.image} */
    public void setImage(@Nullable String image) {
        this.image = blankToNull(image);
    }

    /** @return {@code spec.env.*}: the environment of every command, an unmodifiable view */
    public Map<String, String> getEnv() {
        return Collections.unmodifiableMap(env);
    }

    /** @return {@code spec.labels.*}: extra container labels, an unmodifiable view */
    public Map<String, String> getLabels() {
        return Collections.unmodifiableMap(labels);
    }

    /** @return {@code warm-pool.size}: how many sandboxes of the default spec to keep started; 0 for no pool */
    public int getWarmPoolSize() {
        return warmPoolSize;
    }

    /** @param size {@code warm-pool.size}, at least 0 */
    public void setWarmPoolSize(int size) {
        this.warmPoolSize = (int) atLeast("warm-pool.size", size, 0);
    }

    /** @return {@code tools.session-prefix}: what the agent tools put before a conversation id to make a session id */
    public String getToolsSessionPrefix() {
        return toolsSessionPrefix;
    }

    /** @return {@code tools.default-conversation}, or {@code null} */
    public @Nullable String getToolsDefaultConversation() {
        return toolsDefaultConversation;
    }

    /** @return {@code tools.read-only}: offer only the tools that do not change the workspace */
    public boolean isToolsReadOnly() {
        return toolsReadOnly;
    }

    /** @return {@code tools.allowed}: the tools offered; empty for all */
    public List<String> getToolsAllowed() {
        return Collections.unmodifiableList(toolsAllowed);
    }

    /** @return {@code tools.default-timeout}: run_command's timeout when the model gives none */
    public Duration getToolsDefaultTimeout() {
        return toolsDefaultTimeout;
    }

    /** @return {@code tools.max-timeout}: the longest timeout the model may ask for */
    public Duration getToolsMaxTimeout() {
        return toolsMaxTimeout;
    }

    /** @return {@code tools.output-limit}: bytes of each output stream the model sees */
    public long getToolsOutputLimit() {
        return toolsOutputLimit;
    }

    /** @return {@code tools.read-limit}: bytes one read_file call returns at most */
    public long getToolsReadLimit() {
        return toolsReadLimit;
    }

    /** @return {@code tools.write-limit}: bytes one write_file or edit_file may write */
    public long getToolsWriteLimit() {
        return toolsWriteLimit;
    }

    /** @return {@code tools.list-limit}: entries one list_files call shows at most */
    public int getToolsListLimit() {
        return toolsListLimit;
    }

    /** @return {@code tools.search-limit}: matches one search_files call returns at most */
    public int getToolsSearchLimit() {
        return toolsSearchLimit;
    }

    // ------------------------------------------------------------------ checks

    private static List<String> egressRules(String text) {
        try {
            return EgressPolicy.parse(text).rules();
        } catch (SandboxConfigurationException e) {
            throw new SandboxConfigurationException(PREFIX + "spec.egress: " + e.getMessage(), e);
        }
    }

    private static Duration positive(String key, Duration d) {
        Objects.requireNonNull(d, key);
        if (d.isNegative() || d.isZero()) {
            throw new SandboxConfigurationException(PREFIX + key + ": must be positive, got " + ConfigValues.format(d));
        }
        return d;
    }

    private static long atLeast(String key, long n, long min) {
        if (n < min) {
            throw new SandboxConfigurationException(PREFIX + key + ": must be at least " + min + ", got " + n);
        }
        return n;
    }

    private static String name(String key, String value) {
        if (value == null || !value.matches("[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?")) {
            throw new SandboxConfigurationException(PREFIX + key + ": 1-63 characters from [A-Za-z0-9._-], starting "
                    + "and ending alphanumeric, got '" + value + "'");
        }
        return value;
    }

    private static @Nullable String blankToNull(@Nullable String s) {
        return s == null || s.isBlank() ? null : s.trim();
    }

    private SandboxConfig putOrRemove(Map<String, String> map, String name, String value) {
        if (value.isEmpty()) {
            map.remove(name);
        } else {
            map.put(name, value);
        }
        return this;
    }

    /** {@code docker.host}: two parts or more, the first naming no section. */
    private static boolean isDriverKey(String k) {
        int dot = k.indexOf('.');
        return dot > 0 && dot < k.length() - 1 && !k.endsWith(".") && !SECTIONS.contains(k.substring(0, dot));
    }

    private static String normalize(String key) {
        String k = Objects.requireNonNull(key, "key").trim();
        if (k.startsWith(PREFIX)) {
            k = k.substring(PREFIX.length());
        }
        if (k.equals("workspaceRoot")) {
            return "workspace-root"; // the system property's older spelling
        }
        return k;
    }

    // ------------------------------------------------------------------ the key table

    /** One setting: its key, what it means, and its default as text. */
    public static final class Key {
        private final String name;
        private final String type;
        private final @Nullable String defaultValue;
        private final String description;
        final Function<SandboxConfig, @Nullable String> getter;
        final BiConsumer<SandboxConfig, String> setter;

        Key(String name, String type, @Nullable String defaultValue, String description,
            Function<SandboxConfig, @Nullable String> getter, BiConsumer<SandboxConfig, String> setter) {
            this.name = name;
            this.type = type;
            this.defaultValue = defaultValue;
            this.description = description;
            this.getter = getter;
            this.setter = setter;
        }

        /**
         * The key, without {@value SandboxConfig#PREFIX}.
         *
         * @return for example {@code idle-timeout}; {@code spec.env.*} for a map-valued setting
         */
        public String name() {
            return name;
        }

        /**
         * What the value is.
         *
         * @return {@code duration}, {@code size}, {@code boolean}, {@code integer}, {@code number}, {@code string},
         *         {@code path}, {@code list}, {@code map}, or an enum's values joined by {@code |}
         */
        public String type() {
            return type;
        }

        /**
         * The default as text.
         *
         * @return the default, or {@code null} when there is none or it is derived when the manager starts
         */
        public @Nullable String defaultValue() {
            return defaultValue;
        }

        /**
         * What the setting means.
         *
         * @return one or two sentences
         */
        public String description() {
            return description;
        }

        /**
         * The key with {@value SandboxConfig#PREFIX}.
         *
         * @return for example {@code sandboxkit.idle-timeout}
         */
        public String property() {
            return PREFIX + name;
        }

        @Override
        public String toString() {
            return property();
        }
    }

    /** The table, built once. */
    private static final class Keys {
        static final List<Key> ALL;
        static final Map<String, Key> BY_NAME;

        static {
            List<Key> k = new ArrayList<>();
            SandboxConfig d = new SandboxConfig();
            // Manager
            k.add(str(d, "driver", "The driver's name: docker, kubernetes or another driver module's; detected from "
                    + "the class path when unset.", c -> c.driver, SandboxConfig::setDriver));
            k.add(key(d, "workspace-root", "path", "Host directory under which the per-session workdirs are created.",
                    c -> c.workspaceRoot.toString(), (c, v) -> c.setWorkspaceRoot(Path.of(v))));
            k.add(dur(d, "idle-timeout", "How long a sandbox may be idle before its container is removed; its workdir "
                    + "is kept and the next call resumes it.", c -> c.idleTimeout, SandboxConfig::setIdleTimeout));
            k.add(optDur(d, "reaper-interval", "How often the reaper looks for idle sandboxes; unset: a quarter of the "
                    + "idle timeout, between 10 ms and 500 ms.", c -> c.reaperInterval, SandboxConfig::setReaperInterval));
            k.add(dur(d, "lease-duration", "How long a manager's hold on its sessions lasts without renewal (managers "
                    + "sharing a store).", c -> c.leaseDuration, SandboxConfig::setLeaseDuration));
            k.add(dur(d, "reconcile-interval", "How often the orphan sweep runs.", c -> c.reconcileInterval,
                    SandboxConfig::setReconcileInterval));
            k.add(dur(d, "orphan-grace", "How old a container, workdir or snapshot of this store that no live manager "
                    + "accounts for must be before the sweep removes it.", c -> c.orphanGrace, SandboxConfig::setOrphanGrace));
            k.add(str(d, "fleet", "A name that partitions the managers on one engine; the sweep lists only its own "
                    + "fleet. Naming one gives no power over other applications' containers.", c -> c.fleet,
                    SandboxConfig::setFleet));
            k.add(str(d, "instance-id", "This manager's id, the owner label of its containers; random when unset. "
                    + "Never share one.", c -> c.instanceId, SandboxConfig::setInstanceId));
            k.add(size(d, "max-file-size", "The files API's largest file.", c -> c.maxFileSize, SandboxConfig::setMaxFileSize));
            k.add(key(d, "max-file-entries", "integer", "The most entries one files-API listing or archive may hold.",
                    c -> Integer.toString(c.maxFileEntries),
                    (c, v) -> c.setMaxFileEntries((int) ConfigValues.integer(PREFIX + "max-file-entries", v))));
            k.add(optDur(d, "archive-after", "How long a session stays suspended before the archive tier packs its "
                    + "workdir away; needs an archive store.", c -> c.archiveAfter, SandboxConfig::setArchiveAfter));
            // Spec
            k.add(str(d, "spec.image", "The image every sandbox runs (its entrypoint never does). Required for a spec.",
                    c -> c.image, SandboxConfig::setImage));
            k.add(key(d, "spec.env.*", "map", "Environment of every command (no secrets: it is stored with the session).",
                    c -> null, (c, v) -> { }));
            k.add(str(d, "spec.user", "uid or uid:gid the commands run as; unset: the driver's default.", c -> c.user,
                    (c, v) -> c.user = blankToNull(v)));
            k.add(str(d, "spec.network", "Network mode; none has no network at all.", c -> c.network,
                    (c, v) -> c.network = Objects.requireNonNullElse(blankToNull(v), "none")));
            k.add(size(d, "spec.memory", "Memory limit; 0 for none.", c -> c.memory, (c, v) -> c.memory = v));
            k.add(key(d, "spec.cpus", "number", "CPU limit; 0 for none.", c -> Double.toString(c.cpus),
                    (c, v) -> c.cpus = number("spec.cpus", v)));
            k.add(key(d, "spec.pids-limit", "integer", "Process limit; 0 for none.", c -> Long.toString(c.pidsLimit),
                    (c, v) -> c.pidsLimit = ConfigValues.integer(PREFIX + "spec.pids-limit", v)));
            k.add(size(d, "spec.tmp-size", "Size of the /tmp tmpfs.", c -> c.tmpSize, (c, v) -> c.tmpSize = v));
            k.add(bool(d, "spec.drop-all-capabilities", "Drop every Linux capability.", c -> c.dropAllCapabilities,
                    (c, v) -> c.dropAllCapabilities = v));
            k.add(key(d, "spec.add-capabilities", "list", "Capabilities added back, comma-separated.",
                    c -> c.addCapabilities.isEmpty() ? null : String.join(",", c.addCapabilities),
                    (c, v) -> {
                        c.addCapabilities.clear();
                        c.addCapabilities.addAll(ConfigValues.list(v));
                    }));
            k.add(bool(d, "spec.no-new-privileges", "Set no-new-privileges.", c -> c.noNewPrivileges,
                    (c, v) -> c.noNewPrivileges = v));
            k.add(bool(d, "spec.read-only-root-filesystem", "Mount the image's file system read-only.",
                    c -> c.readOnlyRootFilesystem, (c, v) -> c.readOnlyRootFilesystem = v));
            k.add(bool(d, "spec.init", "Run an init as PID 1 (it reaps zombies and stops in milliseconds).", c -> c.init,
                    (c, v) -> c.init = v));
            k.add(enumKey(d, "spec.pull-policy", PullPolicy.class, "When the image is pulled.", c -> c.pullPolicy,
                    (c, v) -> c.pullPolicy = v));
            k.add(key(d, "spec.labels.*", "map", "Extra container labels.", c -> null, (c, v) -> { }));
            k.add(bool(d, "spec.ephemeral", "Single use: release hard-kills the sandbox and purges its workdir.",
                    c -> c.ephemeral, (c, v) -> c.ephemeral = v));
            k.add(bool(d, "spec.manager-scoped", "The session ends, workdir included, with the manager that last held "
                    + "it.", c -> c.managerScoped, (c, v) -> c.managerScoped = v));
            k.add(optDur(d, "spec.max-lifetime", "Hard limit on a container's life, whatever its activity.",
                    c -> c.maxLifetime, (c, v) -> c.maxLifetime = v == null ? null : positive("spec.max-lifetime", v)));
            k.add(str(d, "spec.post-create", "Shell command run once in every new container before it is handed out.",
                    c -> c.postCreate, (c, v) -> c.postCreate = blankToNull(v)));
            k.add(dur(d, "spec.post-create-timeout", "How long spec.post-create may run.", c -> c.postCreateTimeout,
                    (c, v) -> c.postCreateTimeout = positive("spec.post-create-timeout", v)));
            k.add(str(d, "spec.http-proxy", "HTTP_PROXY inside the sandbox.", c -> c.httpProxy,
                    (c, v) -> c.httpProxy = blankToNull(v)));
            k.add(str(d, "spec.https-proxy", "HTTPS_PROXY inside the sandbox.", c -> c.httpsProxy,
                    (c, v) -> c.httpsProxy = blankToNull(v)));
            k.add(str(d, "spec.no-proxy", "NO_PROXY inside the sandbox.", c -> c.noProxy,
                    (c, v) -> c.noProxy = blankToNull(v)));
            k.add(str(d, "spec.extra-ca-certificates", "PEM certificates (or the path of a PEM file) added to the "
                    + "sandbox's trust store.", c -> c.extraCaCertificates, (c, v) -> c.extraCaCertificates = blankToNull(v)));
            k.add(enumKey(d, "spec.exec-mode", ExecMode.class, "How commands reach the sandbox.", c -> c.execMode,
                    (c, v) -> c.execMode = v));
            k.add(str(d, "spec.runtime", "The container runtime, for example runsc (gVisor); unset: the engine's "
                    + "default.", c -> c.runtime, (c, v) -> c.runtime = blankToNull(v)));
            k.add(str(d, "spec.template", "Files a new session's workdir starts with: a host directory, or "
                    + "snapshot:<id>.", c -> c.template, (c, v) -> c.template = blankToNull(v)));
            k.add(key(d, "spec.egress", "list", "Hosts the sandbox may reach through the host-side egress proxy while "
                    + "it stays on network none, comma-separated: pypi.org, *.pythonhosted.org, github.com:443, "
                    + "10.0.0.0/8. Unset: no proxy.", c -> c.egress == null ? null : String.join(",", c.egress),
                    (c, v) -> c.egress = v.isEmpty() ? null : egressRules(v)));
            // Egress proxy
            k.add(key(d, "egress.max-connections", "integer", "Open egress connections allowed per session; more "
                    + "get HTTP 429.", c -> Integer.toString(c.egressMaxConnections),
                    (c, v) -> c.setEgressMaxConnections((int) ConfigValues.integer(PREFIX + "egress.max-connections", v))));
            k.add(size(d, "egress.max-bytes", "Bytes one session may move through the egress proxy, both ways; 0 for "
                    + "no cap.", c -> c.egressMaxBytes, SandboxConfig::setEgressMaxBytes));
            k.add(dur(d, "egress.idle-timeout", "How long an egress connection may carry no byte before it is closed.",
                    c -> c.egressIdleTimeout, SandboxConfig::setEgressIdleTimeout));
            k.add(dur(d, "egress.connect-timeout", "How long the egress proxy waits for an upstream host to accept.",
                    c -> c.egressConnectTimeout, SandboxConfig::setEgressConnectTimeout));
            // Warm pool
            k.add(key(d, "warm-pool.size", "integer", "How many sandboxes of the default spec to keep started; 0 for "
                    + "none.", c -> Integer.toString(c.warmPoolSize),
                    (c, v) -> c.setWarmPoolSize((int) ConfigValues.integer(PREFIX + "warm-pool.size", v))));
            k.add(key(d, "warm-pool.max-size", "integer", "Upper bound on waiting plus starting pooled sandboxes; unset: "
                    + "warm-pool.size.", c -> c.warmPoolMaxSize == null ? null : c.warmPoolMaxSize.toString(),
                    (c, v) -> c.warmPoolMaxSize = v.isEmpty() ? null
                            : (int) atLeast("warm-pool.max-size", ConfigValues.integer(PREFIX + "warm-pool.max-size", v), 1)));
            k.add(enumKey(d, "warm-pool.when-empty", WarmPool.Exhausted.class, "What an acquire does when the pool is "
                    + "empty.", c -> c.warmPoolWhenEmpty, (c, v) -> c.warmPoolWhenEmpty = v));
            k.add(dur(d, "warm-pool.wait-timeout", "How long when-empty=wait waits.", c -> c.warmPoolWaitTimeout,
                    (c, v) -> c.warmPoolWaitTimeout = v));
            // Tools
            k.add(bool(d, "tools.read-only", "Offer only the tools that do not change the workspace.",
                    c -> c.toolsReadOnly, (c, v) -> c.toolsReadOnly = v));
            k.add(key(d, "tools.allowed", "list", "The tools offered, comma-separated; all when unset.",
                    c -> c.toolsAllowed.isEmpty() ? null : String.join(",", c.toolsAllowed), (c, v) -> {
                        c.toolsAllowed.clear();
                        c.toolsAllowed.addAll(ConfigValues.list(v));
                    }));
            k.add(str(d, "tools.session-prefix", "Put before a conversation id to make its session id.",
                    c -> c.toolsSessionPrefix, (c, v) -> c.toolsSessionPrefix = v));
            k.add(str(d, "tools.default-conversation", "The conversation of a tool call that names none; unset: such "
                    + "calls fail.", c -> c.toolsDefaultConversation, (c, v) -> c.toolsDefaultConversation = blankToNull(v)));
            k.add(dur(d, "tools.default-timeout", "run_command's timeout when the model gives none.",
                    c -> c.toolsDefaultTimeout, (c, v) -> c.toolsDefaultTimeout = positive("tools.default-timeout", v)));
            k.add(dur(d, "tools.max-timeout", "The longest timeout the model may ask for.", c -> c.toolsMaxTimeout,
                    (c, v) -> c.toolsMaxTimeout = positive("tools.max-timeout", v)));
            k.add(size(d, "tools.output-limit", "Bytes of each output stream the model sees (head and tail).",
                    c -> c.toolsOutputLimit, (c, v) -> c.toolsOutputLimit = atLeast("tools.output-limit", v, 1)));
            k.add(size(d, "tools.read-limit", "Bytes one read_file call returns at most.", c -> c.toolsReadLimit,
                    (c, v) -> c.toolsReadLimit = atLeast("tools.read-limit", v, 1)));
            k.add(size(d, "tools.write-limit", "Bytes one write_file or edit_file may write.", c -> c.toolsWriteLimit,
                    (c, v) -> c.toolsWriteLimit = atLeast("tools.write-limit", v, 1)));
            k.add(key(d, "tools.list-limit", "integer", "Entries one list_files call shows at most.",
                    c -> Integer.toString(c.toolsListLimit),
                    (c, v) -> c.toolsListLimit = (int) atLeast("tools.list-limit",
                            ConfigValues.integer(PREFIX + "tools.list-limit", v), 1)));
            k.add(key(d, "tools.search-limit", "integer", "Matches one search_files call returns at most.",
                    c -> Integer.toString(c.toolsSearchLimit),
                    (c, v) -> c.toolsSearchLimit = (int) atLeast("tools.search-limit",
                            ConfigValues.integer(PREFIX + "tools.search-limit", v), 1)));
            ALL = List.copyOf(k);
            Map<String, Key> byName = new LinkedHashMap<>();
            for (Key key : ALL) {
                if (!key.name().endsWith(".*")) {
                    byName.put(key.name(), key);
                }
            }
            BY_NAME = Collections.unmodifiableMap(byName);
        }

        private Keys() {
        }

        static String nearest(String k) {
            return ConfigValues.nearest(k, BY_NAME.keySet()).map(best -> "; did you mean " + PREFIX + best + "?")
                    .orElse("; the settings are listed by SandboxConfig.keys() (docs/configuration.md)");
        }

        private static Key key(SandboxConfig d, String name, String type, String description,
                               Function<SandboxConfig, @Nullable String> getter, BiConsumer<SandboxConfig, String> setter) {
            return new Key(name, type, getter.apply(d), description, getter, setter);
        }

        private static Key str(SandboxConfig d, String name, String description,
                               Function<SandboxConfig, @Nullable String> getter, BiConsumer<SandboxConfig, String> setter) {
            return key(d, name, "string", description, getter, setter);
        }

        private static Key dur(SandboxConfig d, String name, String description, Function<SandboxConfig, Duration> getter,
                               BiConsumer<SandboxConfig, Duration> setter) {
            return key(d, name, "duration", description, c -> ConfigValues.format(getter.apply(c)),
                    (c, v) -> setter.accept(c, ConfigValues.duration(PREFIX + name, v)));
        }

        private static Key optDur(SandboxConfig d, String name, String description,
                                  Function<SandboxConfig, @Nullable Duration> getter,
                                  BiConsumer<SandboxConfig, @Nullable Duration> setter) {
            return key(d, name, "duration", description, c -> {
                Duration v = getter.apply(c);
                return v == null ? null : ConfigValues.format(v);
            }, (c, v) -> setter.accept(c, v.isEmpty() ? null : ConfigValues.duration(PREFIX + name, v)));
        }

        private static Key size(SandboxConfig d, String name, String description, Function<SandboxConfig, Long> getter,
                                BiConsumer<SandboxConfig, Long> setter) {
            return key(d, name, "size", description, c -> ConfigValues.formatSize(getter.apply(c)),
                    (c, v) -> setter.accept(c, ConfigValues.size(PREFIX + name, v)));
        }

        private static Key bool(SandboxConfig d, String name, String description, Function<SandboxConfig, Boolean> getter,
                                BiConsumer<SandboxConfig, Boolean> setter) {
            return key(d, name, "boolean", description, c -> getter.apply(c).toString(),
                    (c, v) -> setter.accept(c, ConfigValues.bool(PREFIX + name, v)));
        }

        private static <E extends Enum<E>> Key enumKey(SandboxConfig d, String name, Class<E> type, String description,
                                                      Function<SandboxConfig, E> getter, BiConsumer<SandboxConfig, E> setter) {
            List<String> values = new ArrayList<>();
            for (E e : type.getEnumConstants()) {
                values.add(e.name().toLowerCase(Locale.ROOT).replace('_', '-'));
            }
            return key(d, name, String.join("|", values), description,
                    c -> getter.apply(c).name().toLowerCase(Locale.ROOT).replace('_', '-'),
                    (c, v) -> setter.accept(c, ConfigValues.enumValue(PREFIX + name, type, v)));
        }

        private static double number(String key, String text) {
            double v = ConfigValues.number(PREFIX + key, text);
            if (v < 0) {
                throw ConfigValues.invalid(PREFIX + key, text, "a number of at least 0");
            }
            return v;
        }
    }
}
