package dev.sandboxkit.spring.boot;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.WarmPool.Exhausted;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.convert.DurationUnit;
import org.springframework.core.io.Resource;
import org.springframework.util.unit.DataSize;

import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@code sandboxkit.*} properties. Durations without a unit are seconds ({@code idle-timeout=1800}); sizes
 * without a unit are bytes. Checked when the beans are created: a bad value fails the startup with a message that
 * names the property.
 */
@ConfigurationProperties("sandboxkit")
public class SandboxProperties {

    /** Whether to configure sandboxkit at all. */
    private boolean enabled = true;

    /**
     * The sandbox driver: docker, kubernetes, or another driver module's name. Default: the available driver
     * with the highest priority (docker when its socket exists).
     */
    private String driver;

    /** Driver-specific settings, for example docker.host=unix:///var/run/docker.sock. */
    private Map<String, String> driverProperties = new LinkedHashMap<>();

    /** Host directory under which per-session workdirs are created (Docker). Default: ${java.io.tmpdir}/sandboxkit. */
    private Path workspaceRoot;

    /** How long a sandbox may be idle before its container is removed; its workdir is kept and resumed. */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration idleTimeout = Duration.ofMinutes(30);

    /** How often the reaper looks for idle sandboxes. Default: a quarter of the idle timeout, at most 500 ms. */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration reaperInterval;

    /** How long this manager's ownership of its sessions lasts without renewal (managers sharing a store). */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration leaseDuration = Duration.ofSeconds(30);

    /** How often the orphan sweep runs. */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration reconcileInterval = Duration.ofSeconds(60);

    /**
     * The fleet: a name that partitions the managers on one engine; the orphan sweep lists only its own fleet's
     * containers. Default: the core's ({@code default}). Naming one grants no power over other applications'
     * containers: the sweep judges a container only by the session store it was created under.
     */
    private String fleet;

    /**
     * How old a container, workdir or snapshot that no live manager of this store accounts for must be before the
     * orphan sweep removes it. Default: the core's (10 minutes).
     */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration orphanGrace;

    /** This manager's instance id, the owner label of its containers. Default: random. Never share one. */
    private String instanceId;

    /**
     * Whether startup fails when the sandbox backend cannot be reached. When false, the application starts, the
     * health indicator reports DOWN, and the manager starts on first use.
     */
    private boolean failFast = true;

    /** Where session metadata lives: memory (lost on restart), h2 or sqlite (a file), or jdbc (the DataSource). */
    private StoreType store = StoreType.MEMORY;

    /** The database file of the h2 and sqlite stores. */
    private Path storeFile;

    /** Whether the jdbc store creates and migrates its tables at startup (otherwise it only checks them). */
    private boolean storeAutoMigrate = true;

    /** Largest file one files-API call may read, write, upload or download. */
    private DataSize maxFileSize = DataSize.ofGigabytes(1);

    /** Most entries one files-API listing or tar archive may hold. */
    private int maxFileEntries = 100000;

    private final Spec spec = new Spec();

    private final Pool warmPool = new Pool();

    private final Tools tools = new Tools();

    private final ChatClientSettings chatClient = new ChatClientSettings();

    /** Where the session store lives. */
    public enum StoreType {
        /** In the manager's memory: sessions are forgotten on restart. */
        MEMORY,
        /** An H2 file ({@code sandboxkit.store-file}), for one host. Needs sandbox-store-jdbc and H2. */
        H2,
        /** A SQLite file ({@code sandboxkit.store-file}), for one host. Needs sandbox-store-jdbc and sqlite-jdbc. */
        SQLITE,
        /** The application's DataSource (PostgreSQL, H2 or SQLite), shared by managers. Needs sandbox-store-jdbc. */
        JDBC
    }

    /**
     * Whether sandboxkit is configured.
     *
     * @return {@code sandboxkit.enabled}
     */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Sets {@code sandboxkit.enabled}.
     *
     * @param enabled whether sandboxkit is configured
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /**
     * The driver name.
     *
     * @return {@code sandboxkit.driver}, or {@code null} for the available driver with the highest priority
     */
    public String getDriver() {
        return driver;
    }

    /**
     * Sets {@code sandboxkit.driver}.
     *
     * @param driver the driver name
     */
    public void setDriver(String driver) {
        this.driver = driver;
    }

    /**
     * The driver-specific settings.
     *
     * @return {@code sandboxkit.driver-properties}
     */
    public Map<String, String> getDriverProperties() {
        return driverProperties;
    }

    /**
     * Sets {@code sandboxkit.driver-properties}.
     *
     * @param driverProperties setting name to value
     */
    public void setDriverProperties(Map<String, String> driverProperties) {
        this.driverProperties = driverProperties;
    }

    /**
     * The workspace root.
     *
     * @return {@code sandboxkit.workspace-root}, or {@code null} for the default
     */
    public Path getWorkspaceRoot() {
        return workspaceRoot;
    }

    /**
     * Sets {@code sandboxkit.workspace-root}.
     *
     * @param workspaceRoot a host directory
     */
    public void setWorkspaceRoot(Path workspaceRoot) {
        this.workspaceRoot = workspaceRoot;
    }

    /**
     * The idle timeout.
     *
     * @return {@code sandboxkit.idle-timeout}
     */
    public Duration getIdleTimeout() {
        return idleTimeout;
    }

    /**
     * Sets {@code sandboxkit.idle-timeout}.
     *
     * @param idleTimeout positive
     */
    public void setIdleTimeout(Duration idleTimeout) {
        this.idleTimeout = idleTimeout;
    }

    /**
     * The reaper interval.
     *
     * @return {@code sandboxkit.reaper-interval}, or {@code null} for the default
     */
    public Duration getReaperInterval() {
        return reaperInterval;
    }

    /**
     * Sets {@code sandboxkit.reaper-interval}.
     *
     * @param reaperInterval positive
     */
    public void setReaperInterval(Duration reaperInterval) {
        this.reaperInterval = reaperInterval;
    }

    /**
     * The lease duration.
     *
     * @return {@code sandboxkit.lease-duration}
     */
    public Duration getLeaseDuration() {
        return leaseDuration;
    }

    /**
     * Sets {@code sandboxkit.lease-duration}.
     *
     * @param leaseDuration positive
     */
    public void setLeaseDuration(Duration leaseDuration) {
        this.leaseDuration = leaseDuration;
    }

    /**
     * The orphan-sweep interval.
     *
     * @return {@code sandboxkit.reconcile-interval}
     */
    public Duration getReconcileInterval() {
        return reconcileInterval;
    }

    /**
     * Sets {@code sandboxkit.reconcile-interval}.
     *
     * @param reconcileInterval positive
     */
    public void setReconcileInterval(Duration reconcileInterval) {
        this.reconcileInterval = reconcileInterval;
    }

    /**
     * The fleet name.
     *
     * @return {@code sandboxkit.fleet}, or {@code null} for the core's default
     */
    public String getFleet() {
        return fleet;
    }

    /**
     * Sets {@code sandboxkit.fleet}.
     *
     * @param fleet 1-63 characters from {@code [A-Za-z0-9._-]}
     */
    public void setFleet(String fleet) {
        this.fleet = fleet;
    }

    /**
     * The orphan sweep's grace.
     *
     * @return {@code sandboxkit.orphan-grace}, or {@code null} for the core's default
     */
    public Duration getOrphanGrace() {
        return orphanGrace;
    }

    /**
     * Sets {@code sandboxkit.orphan-grace}.
     *
     * @param orphanGrace positive
     */
    public void setOrphanGrace(Duration orphanGrace) {
        this.orphanGrace = orphanGrace;
    }

    /**
     * The instance id.
     *
     * @return {@code sandboxkit.instance-id}, or {@code null} for a random one
     */
    public String getInstanceId() {
        return instanceId;
    }

    /**
     * Sets {@code sandboxkit.instance-id}.
     *
     * @param instanceId 1-63 characters from {@code [A-Za-z0-9._-]}
     */
    public void setInstanceId(String instanceId) {
        this.instanceId = instanceId;
    }

    /**
     * Whether an unreachable backend fails the startup.
     *
     * @return {@code sandboxkit.fail-fast}
     */
    public boolean isFailFast() {
        return failFast;
    }

    /**
     * Sets {@code sandboxkit.fail-fast}.
     *
     * @param failFast whether an unreachable backend fails the startup
     */
    public void setFailFast(boolean failFast) {
        this.failFast = failFast;
    }

    /**
     * The session store.
     *
     * @return {@code sandboxkit.store}
     */
    public StoreType getStore() {
        return store;
    }

    /**
     * Sets {@code sandboxkit.store}.
     *
     * @param store where session metadata lives
     */
    public void setStore(StoreType store) {
        this.store = store;
    }

    /**
     * The database file of the h2 and sqlite stores.
     *
     * @return {@code sandboxkit.store-file}
     */
    public Path getStoreFile() {
        return storeFile;
    }

    /**
     * Sets {@code sandboxkit.store-file}.
     *
     * @param storeFile the database file
     */
    public void setStoreFile(Path storeFile) {
        this.storeFile = storeFile;
    }

    /**
     * Whether the jdbc store migrates its schema.
     *
     * @return {@code sandboxkit.store-auto-migrate}
     */
    public boolean isStoreAutoMigrate() {
        return storeAutoMigrate;
    }

    /**
     * Sets {@code sandboxkit.store-auto-migrate}.
     *
     * @param storeAutoMigrate whether to migrate
     */
    public void setStoreAutoMigrate(boolean storeAutoMigrate) {
        this.storeAutoMigrate = storeAutoMigrate;
    }

    /**
     * The files API's per-file limit.
     *
     * @return {@code sandboxkit.max-file-size}
     */
    public DataSize getMaxFileSize() {
        return maxFileSize;
    }

    /**
     * Sets {@code sandboxkit.max-file-size}.
     *
     * @param maxFileSize positive
     */
    public void setMaxFileSize(DataSize maxFileSize) {
        this.maxFileSize = maxFileSize;
    }

    /**
     * The files API's per-listing limit.
     *
     * @return {@code sandboxkit.max-file-entries}
     */
    public int getMaxFileEntries() {
        return maxFileEntries;
    }

    /**
     * Sets {@code sandboxkit.max-file-entries}.
     *
     * @param maxFileEntries positive
     */
    public void setMaxFileEntries(int maxFileEntries) {
        this.maxFileEntries = maxFileEntries;
    }

    /**
     * The default sandbox spec.
     *
     * @return {@code sandboxkit.spec}
     */
    public Spec getSpec() {
        return spec;
    }

    /**
     * The warm pool for the default spec.
     *
     * @return {@code sandboxkit.warm-pool}
     */
    public Pool getWarmPool() {
        return warmPool;
    }

    /**
     * The model tools.
     *
     * @return {@code sandboxkit.tools}
     */
    public Tools getTools() {
        return tools;
    }

    /**
     * What the starter adds to Spring AI's auto-configured ChatClient.Builder.
     *
     * @return {@code sandboxkit.chat-client}
     */
    public ChatClientSettings getChatClient() {
        return chatClient;
    }

    /**
     * The default sandbox spec ({@code sandboxkit.spec.*}), used by the tools and the warm pool. Without an image
     * there is no default spec (and no tools) unless the application defines a {@code SandboxSpec} bean, which is
     * also the way to change what these properties do not cover (capabilities dropped, no-new-privileges, init).
     */
    public static class Spec {
        /** The image every sandbox runs, for example python:3.12-slim. */
        private String image;

        /** Environment variables for every command (not for secrets). */
        private Map<String, String> env = new LinkedHashMap<>();

        /** uid or uid:gid to run as (numeric). Default: the JVM's uid when not root, else the driver's unprivileged default. */
        private String user;

        /** Network mode: none (the default) or a network name. */
        private String network = "none";

        /** Memory limit, swap included; 0 for none. */
        private DataSize memory = DataSize.ofMegabytes(512);

        /** CPU limit in cores; 0 for none. */
        private double cpus = 0;

        /** Process limit; 0 for none. */
        private long pidsLimit = 512;

        /** Size of the tmpfs at /tmp; 0 for none. */
        private DataSize tmpSize = DataSize.ofMegabytes(64);

        /** Capabilities to add back after all are dropped, for example NET_BIND_SERVICE. */
        private Set<String> addCapabilities = new LinkedHashSet<>();

        /** Whether the image's root filesystem is mounted read-only. */
        private boolean readOnlyRootFilesystem = false;

        /** When the image may be pulled. */
        private PullPolicy pullPolicy = PullPolicy.IF_MISSING;

        /** Extra labels on the containers (the dev.sandboxkit. prefix is reserved). */
        private Map<String, String> labels = new LinkedHashMap<>();

        /** Single-use sandboxes: released means removed with their workdir, never resumed. */
        private boolean ephemeral = false;

        /** Hard limit on a container's life, regardless of activity. Default: none. */
        @DurationUnit(ChronoUnit.SECONDS)
        private Duration maxLifetime;

        /** A shell command run once in every new container (resumes included) before it is used. Stored with the session: no secrets. */
        private String postCreate;

        /** How long the post-create command may run. */
        @DurationUnit(ChronoUnit.SECONDS)
        private Duration postCreateTimeout = Duration.ofMinutes(10);

        /** HTTP proxy URL exported to every command. */
        private String httpProxy;

        /** HTTPS proxy URL exported to every command. */
        private String httpsProxy;

        /** Comma-separated hosts that bypass the proxy. */
        private String noProxy;

        /** PEM certificates to trust besides the image's bundle, for example classpath:corp-ca.pem. */
        private Resource extraCaCertificates;

        /** How commands are run; every mode gives the same results. */
        private ExecMode execMode = ExecMode.AUTO;

        /**
         * The image.
         *
         * @return {@code sandboxkit.spec.image}
         */
        public String getImage() {
            return image;
        }

        /**
         * Sets {@code sandboxkit.spec.image}.
         *
         * @param image an image reference
         */
        public void setImage(String image) {
            this.image = image;
        }

        /**
         * The environment.
         *
         * @return {@code sandboxkit.spec.env}
         */
        public Map<String, String> getEnv() {
            return env;
        }

        /**
         * Sets {@code sandboxkit.spec.env}.
         *
         * @param env name to value
         */
        public void setEnv(Map<String, String> env) {
            this.env = env;
        }

        /**
         * The user.
         *
         * @return {@code sandboxkit.spec.user}, or {@code null} for automatic
         */
        public String getUser() {
            return user;
        }

        /**
         * Sets {@code sandboxkit.spec.user}.
         *
         * @param user uid or uid:gid
         */
        public void setUser(String user) {
            this.user = user;
        }

        /**
         * The network mode.
         *
         * @return {@code sandboxkit.spec.network}
         */
        public String getNetwork() {
            return network;
        }

        /**
         * Sets {@code sandboxkit.spec.network}.
         *
         * @param network network mode or name
         */
        public void setNetwork(String network) {
            this.network = network;
        }

        /**
         * The memory limit.
         *
         * @return {@code sandboxkit.spec.memory}
         */
        public DataSize getMemory() {
            return memory;
        }

        /**
         * Sets {@code sandboxkit.spec.memory}.
         *
         * @param memory the limit, 0 for none
         */
        public void setMemory(DataSize memory) {
            this.memory = memory;
        }

        /**
         * The CPU limit.
         *
         * @return {@code sandboxkit.spec.cpus}
         */
        public double getCpus() {
            return cpus;
        }

        /**
         * Sets {@code sandboxkit.spec.cpus}.
         *
         * @param cpus cores, 0 for none
         */
        public void setCpus(double cpus) {
            this.cpus = cpus;
        }

        /**
         * The process limit.
         *
         * @return {@code sandboxkit.spec.pids-limit}
         */
        public long getPidsLimit() {
            return pidsLimit;
        }

        /**
         * Sets {@code sandboxkit.spec.pids-limit}.
         *
         * @param pidsLimit the limit, 0 for none
         */
        public void setPidsLimit(long pidsLimit) {
            this.pidsLimit = pidsLimit;
        }

        /**
         * The /tmp size.
         *
         * @return {@code sandboxkit.spec.tmp-size}
         */
        public DataSize getTmpSize() {
            return tmpSize;
        }

        /**
         * Sets {@code sandboxkit.spec.tmp-size}.
         *
         * @param tmpSize the size, 0 for no tmpfs
         */
        public void setTmpSize(DataSize tmpSize) {
            this.tmpSize = tmpSize;
        }

        /**
         * The capabilities added back.
         *
         * @return {@code sandboxkit.spec.add-capabilities}
         */
        public Set<String> getAddCapabilities() {
            return addCapabilities;
        }

        /**
         * Sets {@code sandboxkit.spec.add-capabilities}.
         *
         * @param addCapabilities capability names without CAP_
         */
        public void setAddCapabilities(Set<String> addCapabilities) {
            this.addCapabilities = addCapabilities;
        }

        /**
         * Whether the root filesystem is read-only.
         *
         * @return {@code sandboxkit.spec.read-only-root-filesystem}
         */
        public boolean isReadOnlyRootFilesystem() {
            return readOnlyRootFilesystem;
        }

        /**
         * Sets {@code sandboxkit.spec.read-only-root-filesystem}.
         *
         * @param readOnlyRootFilesystem whether it is read-only
         */
        public void setReadOnlyRootFilesystem(boolean readOnlyRootFilesystem) {
            this.readOnlyRootFilesystem = readOnlyRootFilesystem;
        }

        /**
         * The pull policy.
         *
         * @return {@code sandboxkit.spec.pull-policy}
         */
        public PullPolicy getPullPolicy() {
            return pullPolicy;
        }

        /**
         * Sets {@code sandboxkit.spec.pull-policy}.
         *
         * @param pullPolicy when the image may be pulled
         */
        public void setPullPolicy(PullPolicy pullPolicy) {
            this.pullPolicy = pullPolicy;
        }

        /**
         * The extra labels.
         *
         * @return {@code sandboxkit.spec.labels}
         */
        public Map<String, String> getLabels() {
            return labels;
        }

        /**
         * Sets {@code sandboxkit.spec.labels}.
         *
         * @param labels key to value
         */
        public void setLabels(Map<String, String> labels) {
            this.labels = labels;
        }

        /**
         * Whether sandboxes are single-use.
         *
         * @return {@code sandboxkit.spec.ephemeral}
         */
        public boolean isEphemeral() {
            return ephemeral;
        }

        /**
         * Sets {@code sandboxkit.spec.ephemeral}.
         *
         * @param ephemeral whether sandboxes are single-use
         */
        public void setEphemeral(boolean ephemeral) {
            this.ephemeral = ephemeral;
        }

        /**
         * The maximum lifetime.
         *
         * @return {@code sandboxkit.spec.max-lifetime}, or {@code null} for none
         */
        public Duration getMaxLifetime() {
            return maxLifetime;
        }

        /**
         * Sets {@code sandboxkit.spec.max-lifetime}.
         *
         * @param maxLifetime positive
         */
        public void setMaxLifetime(Duration maxLifetime) {
            this.maxLifetime = maxLifetime;
        }

        /**
         * The post-create command.
         *
         * @return {@code sandboxkit.spec.post-create}, or {@code null} for none
         */
        public String getPostCreate() {
            return postCreate;
        }

        /**
         * Sets {@code sandboxkit.spec.post-create}.
         *
         * @param postCreate a shell command
         */
        public void setPostCreate(String postCreate) {
            this.postCreate = postCreate;
        }

        /**
         * The post-create timeout.
         *
         * @return {@code sandboxkit.spec.post-create-timeout}
         */
        public Duration getPostCreateTimeout() {
            return postCreateTimeout;
        }

        /**
         * Sets {@code sandboxkit.spec.post-create-timeout}.
         *
         * @param postCreateTimeout whole seconds, at least 1
         */
        public void setPostCreateTimeout(Duration postCreateTimeout) {
            this.postCreateTimeout = postCreateTimeout;
        }

        /**
         * The HTTP proxy.
         *
         * @return {@code sandboxkit.spec.http-proxy}
         */
        public String getHttpProxy() {
            return httpProxy;
        }

        /**
         * Sets {@code sandboxkit.spec.http-proxy}.
         *
         * @param httpProxy a proxy URL
         */
        public void setHttpProxy(String httpProxy) {
            this.httpProxy = httpProxy;
        }

        /**
         * The HTTPS proxy.
         *
         * @return {@code sandboxkit.spec.https-proxy}
         */
        public String getHttpsProxy() {
            return httpsProxy;
        }

        /**
         * Sets {@code sandboxkit.spec.https-proxy}.
         *
         * @param httpsProxy a proxy URL
         */
        public void setHttpsProxy(String httpsProxy) {
            this.httpsProxy = httpsProxy;
        }

        /**
         * The proxy exceptions.
         *
         * @return {@code sandboxkit.spec.no-proxy}
         */
        public String getNoProxy() {
            return noProxy;
        }

        /**
         * Sets {@code sandboxkit.spec.no-proxy}.
         *
         * @param noProxy comma-separated hosts
         */
        public void setNoProxy(String noProxy) {
            this.noProxy = noProxy;
        }

        /**
         * The extra CA certificates.
         *
         * @return {@code sandboxkit.spec.extra-ca-certificates}, or {@code null}
         */
        public Resource getExtraCaCertificates() {
            return extraCaCertificates;
        }

        /**
         * Sets {@code sandboxkit.spec.extra-ca-certificates}.
         *
         * @param extraCaCertificates a PEM resource
         */
        public void setExtraCaCertificates(Resource extraCaCertificates) {
            this.extraCaCertificates = extraCaCertificates;
        }

        /**
         * The exec mode.
         *
         * @return {@code sandboxkit.spec.exec-mode}
         */
        public ExecMode getExecMode() {
            return execMode;
        }

        /**
         * Sets {@code sandboxkit.spec.exec-mode}.
         *
         * @param execMode how commands are run
         */
        public void setExecMode(ExecMode execMode) {
            this.execMode = execMode;
        }
    }

    /** The warm pool for the default spec ({@code sandboxkit.warm-pool.*}). */
    public static class Pool {
        /** How many started sandboxes to keep waiting for new sessions; 0 for no pool. */
        private int size = 0;

        /** Upper bound on waiting plus starting sandboxes. Default: the size. */
        private Integer maxSize;

        /** What a new session does when no pooled sandbox is waiting. */
        private Exhausted whenEmpty = Exhausted.COLD_START;

        /** How long when-empty=wait waits for a pooled sandbox. */
        @DurationUnit(ChronoUnit.SECONDS)
        private Duration waitTimeout = Duration.ofSeconds(10);

        /**
         * The pool size.
         *
         * @return {@code sandboxkit.warm-pool.size}
         */
        public int getSize() {
            return size;
        }

        /**
         * Sets {@code sandboxkit.warm-pool.size}.
         *
         * @param size 0 or more
         */
        public void setSize(int size) {
            this.size = size;
        }

        /**
         * The pool's upper bound.
         *
         * @return {@code sandboxkit.warm-pool.max-size}, or {@code null} for the size
         */
        public Integer getMaxSize() {
            return maxSize;
        }

        /**
         * Sets {@code sandboxkit.warm-pool.max-size}.
         *
         * @param maxSize at least the size
         */
        public void setMaxSize(Integer maxSize) {
            this.maxSize = maxSize;
        }

        /**
         * The exhaustion policy.
         *
         * @return {@code sandboxkit.warm-pool.when-empty}
         */
        public Exhausted getWhenEmpty() {
            return whenEmpty;
        }

        /**
         * Sets {@code sandboxkit.warm-pool.when-empty}.
         *
         * @param whenEmpty cold-start, wait or fail-fast
         */
        public void setWhenEmpty(Exhausted whenEmpty) {
            this.whenEmpty = whenEmpty;
        }

        /**
         * The wait timeout.
         *
         * @return {@code sandboxkit.warm-pool.wait-timeout}
         */
        public Duration getWaitTimeout() {
            return waitTimeout;
        }

        /**
         * Sets {@code sandboxkit.warm-pool.wait-timeout}.
         *
         * @param waitTimeout not negative
         */
        public void setWaitTimeout(Duration waitTimeout) {
            this.waitTimeout = waitTimeout;
        }
    }

    /** The model tools ({@code sandboxkit.tools.*}). They need a default spec. */
    public static class Tools {
        /** Whether to create the tool beans (SandboxTools, the tool callback provider and the @Tool methods). */
        private boolean enabled = true;

        /** Offer only the tools that cannot change the workspace: read_file, list_files, search_files. */
        private boolean readOnly = false;

        /** Offer only these tools (run_command, read_file, write_file, edit_file, list_files, search_files). Default: all. */
        private List<String> allowed = new ArrayList<>();

        /** Put before every conversation's session id, so conversations never collide with the application's own sessions. */
        private String sessionPrefix = "conv-";

        /**
         * The conversation of tool calls whose ToolContext names none. Only for single-user applications: every
         * such call shares this conversation's workspace. Default: none, such calls fail.
         */
        private String defaultConversation;

        /** The run_command timeout when the model gives none. */
        @DurationUnit(ChronoUnit.SECONDS)
        private Duration defaultTimeout = Duration.ofMinutes(2);

        /** The longest run_command timeout the model may ask for. */
        @DurationUnit(ChronoUnit.SECONDS)
        private Duration maxTimeout = Duration.ofMinutes(10);

        /** How much of each run_command output stream the model sees (half from the start, half from the end). */
        private DataSize outputLimit = DataSize.ofBytes(20000);

        /** The most one read_file call returns. */
        private DataSize readLimit = DataSize.ofBytes(100000);

        /** The largest file write_file writes and edit_file edits. */
        private DataSize writeLimit = DataSize.ofBytes(10000000);

        /** The most entries one list_files call shows. */
        private int listLimit = 500;

        /** The most matches one search_files call may return. */
        private int searchLimit = 500;

        /**
         * Whether the application's ToolExecutionExceptionProcessor beans are decorated so that sandboxkit's
         * operator failures thrown by @Tool methods reach the caller instead of the model.
         */
        private boolean rethrowSandboxExceptions = true;

        /**
         * Whether the tool beans are created.
         *
         * @return {@code sandboxkit.tools.enabled}
         */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets {@code sandboxkit.tools.enabled}.
         *
         * @param enabled whether the tool beans are created
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /**
         * Whether the tools are read-only.
         *
         * @return {@code sandboxkit.tools.read-only}
         */
        public boolean isReadOnly() {
            return readOnly;
        }

        /**
         * Sets {@code sandboxkit.tools.read-only}.
         *
         * @param readOnly whether the tools are read-only
         */
        public void setReadOnly(boolean readOnly) {
            this.readOnly = readOnly;
        }

        /**
         * The allow-list.
         *
         * @return {@code sandboxkit.tools.allowed}; empty for all tools
         */
        public List<String> getAllowed() {
            return allowed;
        }

        /**
         * Sets {@code sandboxkit.tools.allowed}.
         *
         * @param allowed tool names
         */
        public void setAllowed(List<String> allowed) {
            this.allowed = allowed;
        }

        /**
         * The session prefix.
         *
         * @return {@code sandboxkit.tools.session-prefix}
         */
        public String getSessionPrefix() {
            return sessionPrefix;
        }

        /**
         * Sets {@code sandboxkit.tools.session-prefix}.
         *
         * @param sessionPrefix {@code [A-Za-z0-9][A-Za-z0-9._-]*}, at most 32 characters
         */
        public void setSessionPrefix(String sessionPrefix) {
            this.sessionPrefix = sessionPrefix;
        }

        /**
         * The default conversation.
         *
         * @return {@code sandboxkit.tools.default-conversation}, or {@code null} for none
         */
        public String getDefaultConversation() {
            return defaultConversation;
        }

        /**
         * Sets {@code sandboxkit.tools.default-conversation}.
         *
         * @param defaultConversation the conversation, not blank
         */
        public void setDefaultConversation(String defaultConversation) {
            this.defaultConversation = defaultConversation;
        }

        /**
         * The default command timeout.
         *
         * @return {@code sandboxkit.tools.default-timeout}
         */
        public Duration getDefaultTimeout() {
            return defaultTimeout;
        }

        /**
         * Sets {@code sandboxkit.tools.default-timeout}.
         *
         * @param defaultTimeout whole seconds, at least 1
         */
        public void setDefaultTimeout(Duration defaultTimeout) {
            this.defaultTimeout = defaultTimeout;
        }

        /**
         * The maximum command timeout.
         *
         * @return {@code sandboxkit.tools.max-timeout}
         */
        public Duration getMaxTimeout() {
            return maxTimeout;
        }

        /**
         * Sets {@code sandboxkit.tools.max-timeout}.
         *
         * @param maxTimeout whole seconds, at least 1
         */
        public void setMaxTimeout(Duration maxTimeout) {
            this.maxTimeout = maxTimeout;
        }

        /**
         * The output limit.
         *
         * @return {@code sandboxkit.tools.output-limit}
         */
        public DataSize getOutputLimit() {
            return outputLimit;
        }

        /**
         * Sets {@code sandboxkit.tools.output-limit}.
         *
         * @param outputLimit at least 256 bytes
         */
        public void setOutputLimit(DataSize outputLimit) {
            this.outputLimit = outputLimit;
        }

        /**
         * The read limit.
         *
         * @return {@code sandboxkit.tools.read-limit}
         */
        public DataSize getReadLimit() {
            return readLimit;
        }

        /**
         * Sets {@code sandboxkit.tools.read-limit}.
         *
         * @param readLimit at least 256 bytes
         */
        public void setReadLimit(DataSize readLimit) {
            this.readLimit = readLimit;
        }

        /**
         * The write limit.
         *
         * @return {@code sandboxkit.tools.write-limit}
         */
        public DataSize getWriteLimit() {
            return writeLimit;
        }

        /**
         * Sets {@code sandboxkit.tools.write-limit}.
         *
         * @param writeLimit at least 1 byte
         */
        public void setWriteLimit(DataSize writeLimit) {
            this.writeLimit = writeLimit;
        }

        /**
         * The listing limit.
         *
         * @return {@code sandboxkit.tools.list-limit}
         */
        public int getListLimit() {
            return listLimit;
        }

        /**
         * Sets {@code sandboxkit.tools.list-limit}.
         *
         * @param listLimit at least 1
         */
        public void setListLimit(int listLimit) {
            this.listLimit = listLimit;
        }

        /**
         * The search limit.
         *
         * @return {@code sandboxkit.tools.search-limit}
         */
        public int getSearchLimit() {
            return searchLimit;
        }

        /**
         * Sets {@code sandboxkit.tools.search-limit}.
         *
         * @param searchLimit at least 1
         */
        public void setSearchLimit(int searchLimit) {
            this.searchLimit = searchLimit;
        }

        /**
         * Whether exception processors are decorated.
         *
         * @return {@code sandboxkit.tools.rethrow-sandbox-exceptions}
         */
        public boolean isRethrowSandboxExceptions() {
            return rethrowSandboxExceptions;
        }

        /**
         * Sets {@code sandboxkit.tools.rethrow-sandbox-exceptions}.
         *
         * @param rethrowSandboxExceptions whether exception processors are decorated
         */
        public void setRethrowSandboxExceptions(boolean rethrowSandboxExceptions) {
            this.rethrowSandboxExceptions = rethrowSandboxExceptions;
        }
    }

    /** What the starter adds to Spring AI's auto-configured {@code ChatClient.Builder} ({@code sandboxkit.chat-client.*}). */
    public static class ChatClientSettings {
        /**
         * Whether to add the SandboxConversationAdvisor, which hands the chat_memory_conversation_id advisor
         * parameter to the tools.
         */
        private boolean conversationAdvisor = true;

        /**
         * Whether to offer the sandbox tools to every ChatClient built from the auto-configured builder. Off by
         * default: a ChatClient that should not run commands never sees them.
         */
        private boolean defaultTools = false;

        /**
         * Whether the conversation advisor is added.
         *
         * @return {@code sandboxkit.chat-client.conversation-advisor}
         */
        public boolean isConversationAdvisor() {
            return conversationAdvisor;
        }

        /**
         * Sets {@code sandboxkit.chat-client.conversation-advisor}.
         *
         * @param conversationAdvisor whether the advisor is added
         */
        public void setConversationAdvisor(boolean conversationAdvisor) {
            this.conversationAdvisor = conversationAdvisor;
        }

        /**
         * Whether the tools are default tools.
         *
         * @return {@code sandboxkit.chat-client.default-tools}
         */
        public boolean isDefaultTools() {
            return defaultTools;
        }

        /**
         * Sets {@code sandboxkit.chat-client.default-tools}.
         *
         * @param defaultTools whether every ChatClient gets the tools
         */
        public void setDefaultTools(boolean defaultTools) {
            this.defaultTools = defaultTools;
        }
    }
}
