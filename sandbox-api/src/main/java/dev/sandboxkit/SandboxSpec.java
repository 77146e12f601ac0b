package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a session's container looks like. Immutable; build one with {@link #builder()}.
 *
 * <p>The defaults are hardened, and each can be overridden: network {@code none}, all capabilities
 * dropped, no-new-privileges, a non-root user, pids and memory limits, a small {@code /tmp} tmpfs and
 * an init process. The image's own entrypoint never runs: PID 1 is {@code sleep infinity} under init.
 *
 * <p>A final class rather than a record, so that options can be added without breaking callers: build it with
 * {@link #builder()}, derive variants with {@link #toBuilder()}. Equal specs (all values equal) share one encoding
 * in the store, and one warm pool.
 */
public final class SandboxSpec {
    private final String image;
    private final Map<String, String> env;
    private final @Nullable String user;
    private final String network;
    private final long memoryBytes;
    private final double cpus;
    private final long pidsLimit;
    private final long tmpSizeBytes;
    private final boolean dropAllCapabilities;
    private final Set<String> addCapabilities;
    private final boolean noNewPrivileges;
    private final boolean readOnlyRootFilesystem;
    private final boolean init;
    private final PullPolicy pullPolicy;
    private final Map<String, String> labels;
    private final boolean ephemeral;
    private final boolean managerScoped;
    private final @Nullable Duration maxLifetime;
    private final @Nullable ExecRequest postCreate;
    private final @Nullable Proxy proxy;
    private final @Nullable String extraCaCertificates;
    private final ExecMode execMode;
    private final @Nullable String runtime;
    private final @Nullable WorkspaceTemplate template;
    private final @Nullable EgressPolicy egress;

    private SandboxSpec(@Nullable String image, Map<String, String> env, @Nullable String user, String network,
                        long memoryBytes, double cpus, long pidsLimit, long tmpSizeBytes, boolean dropAllCapabilities,
                        Set<String> addCapabilities, boolean noNewPrivileges, boolean readOnlyRootFilesystem, boolean init,
                        PullPolicy pullPolicy, Map<String, String> labels, boolean ephemeral, boolean managerScoped,
                        @Nullable Duration maxLifetime, @Nullable ExecRequest postCreate, @Nullable Proxy proxy,
                        @Nullable String extraCaCertificates, ExecMode execMode, @Nullable String runtime,
                        @Nullable WorkspaceTemplate template, @Nullable EgressPolicy egress) {
        if (image == null || image.isBlank()) {
            throw new IllegalArgumentException("image is required");
        }
        requireImageReference(image);
        env = copyEnv(env);
        if (user != null) {
            requireUser(user);
        }
        if (network == null || network.isBlank()) {
            throw new IllegalArgumentException("network is required (use \"none\" for no network)");
        }
        requireNonNegative(memoryBytes, "memoryBytes");
        if (cpus < 0 || Double.isNaN(cpus)) {
            throw new IllegalArgumentException("cpus must be >= 0, got: " + cpus);
        }
        requireNonNegative(pidsLimit, "pidsLimit");
        requireNonNegative(tmpSizeBytes, "tmpSizeBytes");
        addCapabilities = Set.copyOf(addCapabilities == null ? Set.of() : addCapabilities);
        Objects.requireNonNull(pullPolicy, "pullPolicy");
        labels = Map.copyOf(labels == null ? Map.of() : labels);
        for (String key : labels.keySet()) {
            if (key.startsWith(RESERVED_LABEL_PREFIX)) {
                throw new IllegalArgumentException("label prefix " + RESERVED_LABEL_PREFIX + " is reserved: " + key);
            }
        }
        if (maxLifetime != null && (maxLifetime.isNegative() || maxLifetime.isZero())) {
            throw new IllegalArgumentException("maxLifetime must be positive, got: " + maxLifetime);
        }
        if (postCreate != null && (postCreate.stdinLength() >= 0 || postCreate.listener() != null)) {
            throw new IllegalArgumentException("postCreate takes neither stdin nor a listener");
        }
        if (extraCaCertificates != null && !extraCaCertificates.contains("-----BEGIN CERTIFICATE-----")) {
            throw new IllegalArgumentException("extraCaCertificates must be PEM (-----BEGIN CERTIFICATE-----)");
        }
        Objects.requireNonNull(execMode, "execMode");
        if (runtime != null && !RUNTIME.matcher(runtime).matches()) {
            throw new IllegalArgumentException("runtime must be a runtime name such as runsc ([A-Za-z0-9][A-Za-z0-9._-]*, "
                    + "at most 63 characters), got: " + quoted(runtime));
        }
        this.image = image;
        this.env = env;
        this.user = user;
        this.network = network;
        this.memoryBytes = memoryBytes;
        this.cpus = cpus;
        this.pidsLimit = pidsLimit;
        this.tmpSizeBytes = tmpSizeBytes;
        this.dropAllCapabilities = dropAllCapabilities;
        this.addCapabilities = addCapabilities;
        this.noNewPrivileges = noNewPrivileges;
        this.readOnlyRootFilesystem = readOnlyRootFilesystem;
        this.init = init;
        this.pullPolicy = pullPolicy;
        this.labels = labels;
        this.ephemeral = ephemeral;
        this.managerScoped = managerScoped;
        this.maxLifetime = maxLifetime;
        this.postCreate = postCreate;
        this.proxy = proxy;
        this.extraCaCertificates = extraCaCertificates;
        this.execMode = execMode;
        this.runtime = runtime;
        if (egress != null && !network.equals("none")) {
            throw new IllegalArgumentException("egress needs network \"none\": on network " + quoted(network)
                    + " a sandbox could go around the proxy");
        }
        if (egress != null && proxy != null) {
            throw new IllegalArgumentException("a proxy and egress both set HTTP_PROXY: choose one");
        }
        this.template = template;
        this.egress = egress;
    }

    /**
     * Image reference {@code [registry[:port]/]name[:tag][@digest]} (Docker's grammar: path components in lower
     * case), for example {@code python:3.12-slim}.
     *
     * @return image reference {@code [registry[:port]/]name[:tag][@digest]} (Docker's grammar: path components in
     *         lower case), for example {@code python:3.12-slim}
     */
    public String image() {
        return image;
    }

    /**
     * Environment for every exec (not for secrets: pass those per exec).
     *
     * @return environment for every exec (not for secrets: pass those per exec)
     */
    public Map<String, String> env() {
        return env;
    }

    /**
     * {@code uid[:gid]} to run as (numeric, each 0..4294967294: Linux's unsigned 32-bit range; a driver may accept
     * less, Docker 0..2147483647), or {@code null} for automatic: the JVM's uid when it is not root, otherwise the
     * driver's unprivileged default.
     *
     * @return {@code uid[:gid]} to run as (numeric, each 0..4294967294: Linux's unsigned 32-bit range; a driver may
     *         accept less, Docker 0..2147483647), or {@code null} for automatic: the JVM's uid when it is not root,
     *         otherwise the driver's unprivileged default
     */
    public @Nullable String user() {
        return user;
    }

    /**
     * Network mode; {@code none} by default.
     *
     * @return network mode; {@code none} by default
     */
    public String network() {
        return network;
    }

    /**
     * Memory limit in bytes, swap included; {@code 0} for none.
     *
     * @return memory limit in bytes, swap included; {@code 0} for none
     */
    public long memoryBytes() {
        return memoryBytes;
    }

    /**
     * CPU limit in cores; {@code 0} for none.
     *
     * @return CPU limit in cores; {@code 0} for none
     */
    public double cpus() {
        return cpus;
    }

    /**
     * Maximum number of processes; {@code 0} for none.
     *
     * @return maximum number of processes; {@code 0} for none
     */
    public long pidsLimit() {
        return pidsLimit;
    }

    /**
     * Size of the tmpfs mounted at {@code /tmp}; {@code 0} for no tmpfs.
     *
     * @return size of the tmpfs mounted at {@code /tmp}; {@code 0} for no tmpfs
     */
    public long tmpSizeBytes() {
        return tmpSizeBytes;
    }

    /**
     * Drop every Linux capability.
     *
     * @return drop every Linux capability
     */
    public boolean dropAllCapabilities() {
        return dropAllCapabilities;
    }

    /**
     * Capabilities to add back after dropping.
     *
     * @return capabilities to add back after dropping
     */
    public Set<String> addCapabilities() {
        return addCapabilities;
    }

    /**
     * Forbid privilege gain through setuid binaries.
     *
     * @return forbid privilege gain through setuid binaries
     */
    public boolean noNewPrivileges() {
        return noNewPrivileges;
    }

    /**
     * Mount the image's root filesystem read-only.
     *
     * @return mount the image's root filesystem read-only
     */
    public boolean readOnlyRootFilesystem() {
        return readOnlyRootFilesystem;
    }

    /**
     * Run an init process as PID 1 (reaps zombies, stops fast).
     *
     * @return run an init process as PID 1 (reaps zombies, stops fast)
     */
    public boolean init() {
        return init;
    }

    /**
     * When the image may be pulled.
     *
     * @return when the image may be pulled
     */
    public PullPolicy pullPolicy() {
        return pullPolicy;
    }

    /**
     * Extra labels on the container; the {@code dev.sandboxkit.} prefix is reserved.
     *
     * @return extra labels on the container; the {@code dev.sandboxkit.} prefix is reserved
     */
    public Map<String, String> labels() {
        return labels;
    }

    /**
     * Single-use: released means hard-killed, workdir purged, never reused.
     *
     * @return whether the sandbox is single-use
     */
    public boolean ephemeral() {
        return ephemeral;
    }

    /**
     * Whether the session lives only as long as the manager that last held it (see
     * {@link Builder#managerScoped(boolean)}).
     *
     * @return whether the session is discarded with its manager
     */
    public boolean managerScoped() {
        return managerScoped;
    }

    /**
     * Hard limit on a container's life regardless of activity, or {@code null}.
     *
     * @return hard limit on a container's life regardless of activity, or {@code null}
     */
    public @Nullable Duration maxLifetime() {
        return maxLifetime;
    }

    /**
     * A command run once in every new container (resume included) before it is handed out; a failure or timeout fails
     * the acquire with its output. Without a timeout of its own it gets 10 minutes. Stored with the session: never
     * put secrets in it. {@code null} for none.
     *
     * @return a command run once in every new container (resume included) before it is handed out; a failure or
     *         timeout fails the acquire with its output. Without a timeout of its own it gets 10 minutes. Stored with
     *         the session: never put secrets in it. {@code null} for none
     */
    public @Nullable ExecRequest postCreate() {
        return postCreate;
    }

    /**
     * HTTP(S) proxy settings exported to every exec, or {@code null}.
     *
     * @return HTTP(S) proxy settings exported to every exec, or {@code null}
     */
    public @Nullable Proxy proxy() {
        return proxy;
    }

    /**
     * Which hosts the sandbox may reach through the host-side egress proxy, or {@code null} for no proxy (network
     * {@code none} then means no network at all). See {@link Builder#egress(EgressPolicy)}.
     *
     * @return the egress allow-list, or {@code null}
     */
    public @Nullable EgressPolicy egress() {
        return egress;
    }

    /**
     * PEM certificates to trust in addition to the image's bundle, or {@code null}; installed under {@code
     * /tmp/.sandboxkit} in each new container and exposed through {@code SSL_CERT_FILE}, {@code REQUESTS_CA_BUNDLE},
     * {@code CURL_CA_BUNDLE}, {@code NODE_EXTRA_CA_CERTS}, {@code GIT_SSL_CAINFO} and {@code PIP_CERT}.
     *
     * @return PEM certificates to trust in addition to the image's bundle, or {@code null}; installed under {@code
     *         /tmp/.sandboxkit} in each new container and exposed through {@code SSL_CERT_FILE}, {@code
     *         REQUESTS_CA_BUNDLE}, {@code CURL_CA_BUNDLE}, {@code NODE_EXTRA_CA_CERTS}, {@code GIT_SSL_CAINFO} and
     *         {@code PIP_CERT}
     */
    public @Nullable String extraCaCertificates() {
        return extraCaCertificates;
    }

    /**
     * How commands are run: {@link ExecMode#AUTO} (the default) uses the driver's fast path when the sandbox supports
     * it; results are the same in every mode.
     *
     * @return how commands are run: {@link ExecMode#AUTO} (the default) uses the driver's fast path when the sandbox
     *         supports it; results are the same in every mode
     */
    public ExecMode execMode() {
        return execMode;
    }

    /**
     * The container runtime to run the sandbox under, for a second wall around model-written code: {@code runsc}
     * (gVisor) or {@code kata} on Docker (the engine's {@code --runtime}), a RuntimeClass name on Kubernetes
     * ({@code runtimeClassName}). {@code null} (the default) is the engine's default runtime (runc).
     *
     * @return the runtime name, or {@code null} for the engine's default
     */
    public @Nullable String runtime() {
        return runtime;
    }

    /**
     * What a new session's workdir starts with, copied once when the session is first created (never on resume), or
     * {@code null} for an empty workdir. See {@link WorkspaceTemplate}.
     *
     * @return the template, or {@code null}
     */
    public @Nullable WorkspaceTemplate template() {
        return template;
    }

    @Override
    public boolean equals(Object other) {
        return this == other || (other instanceof SandboxSpec o
                && Objects.equals(image, o.image) && Objects.equals(env, o.env) && Objects.equals(user, o.user) &&
                Objects.equals(network, o.network) && memoryBytes == o.memoryBytes &&
                Double.compare(cpus, o.cpus) == 0 && pidsLimit == o.pidsLimit &&
                tmpSizeBytes == o.tmpSizeBytes && dropAllCapabilities == o.dropAllCapabilities &&
                Objects.equals(addCapabilities, o.addCapabilities) && noNewPrivileges == o.noNewPrivileges &&
                readOnlyRootFilesystem == o.readOnlyRootFilesystem && init == o.init &&
                Objects.equals(pullPolicy, o.pullPolicy) && Objects.equals(labels, o.labels) &&
                ephemeral == o.ephemeral && managerScoped == o.managerScoped &&
                Objects.equals(maxLifetime, o.maxLifetime) &&
                Objects.equals(postCreate, o.postCreate) && Objects.equals(proxy, o.proxy) &&
                Objects.equals(extraCaCertificates, o.extraCaCertificates) &&
                Objects.equals(execMode, o.execMode) && Objects.equals(runtime, o.runtime) &&
                Objects.equals(template, o.template) && Objects.equals(egress, o.egress));
    }

    @Override
    public int hashCode() {
        return Objects.hash(image, env, user, network, memoryBytes, cpus, pidsLimit, tmpSizeBytes, dropAllCapabilities,
                addCapabilities, noNewPrivileges, readOnlyRootFilesystem, init, pullPolicy, labels, ephemeral,
                managerScoped, maxLifetime, postCreate, proxy, extraCaCertificates, execMode, runtime, template, egress);
    }

    @Override
    public String toString() {
        return "SandboxSpec[" + "image=" + image + ", env=" + env + ", user=" + user + ", network=" + network +
                ", memoryBytes=" + memoryBytes + ", cpus=" + cpus + ", pidsLimit=" + pidsLimit +
                ", tmpSizeBytes=" + tmpSizeBytes + ", dropAllCapabilities=" + dropAllCapabilities +
                ", addCapabilities=" + addCapabilities + ", noNewPrivileges=" + noNewPrivileges +
                ", readOnlyRootFilesystem=" + readOnlyRootFilesystem + ", init=" + init +
                ", pullPolicy=" + pullPolicy + ", labels=" + labels + ", ephemeral=" + ephemeral + ", managerScoped=" + managerScoped +
                ", maxLifetime=" + maxLifetime + ", postCreate=" + postCreate + ", proxy=" + proxy +
                ", extraCaCertificates=" + extraCaCertificates + ", execMode=" + execMode + ", runtime=" + runtime +
                ", template=" + template + ", egress=" + egress + "]";
    }


    /** Where the session's durable workdir is mounted inside every sandbox. */
    public static final String WORKSPACE = "/workspace";

    /** Label prefix reserved for sandboxkit's own labels. */
    public static final String RESERVED_LABEL_PREFIX = "dev.sandboxkit.";

    /**
     * HTTP(S) proxy settings, exported to every exec as {@code HTTP_PROXY}/{@code http_proxy},
     * {@code HTTPS_PROXY}/{@code https_proxy} and {@code NO_PROXY}/{@code no_proxy}.
     *
     * @param httpProxy  proxy URL for http, or {@code null}
     * @param httpsProxy proxy URL for https, or {@code null}
     * @param noProxy    comma-separated hosts that bypass the proxy, or {@code null}
     */
    public record Proxy(@Nullable String httpProxy, @Nullable String httpsProxy, @Nullable String noProxy) {
        /** Validates. */
        public Proxy {
            if (httpProxy == null && httpsProxy == null) {
                throw new IllegalArgumentException("a proxy needs httpProxy or httpsProxy");
            }
        }

        /**
         * The variables to export, lower and upper case (tools disagree on which they read).
         *
         * @return variable name to value
         */
        public Map<String, String> environment() {
            Map<String, String> env = new LinkedHashMap<>();
            if (httpProxy != null) {
                env.put("HTTP_PROXY", httpProxy);
                env.put("http_proxy", httpProxy);
            }
            if (httpsProxy != null) {
                env.put("HTTPS_PROXY", httpsProxy);
                env.put("https_proxy", httpsProxy);
            }
            if (noProxy != null) {
                env.put("NO_PROXY", noProxy);
                env.put("no_proxy", noProxy);
            }
            return env;
        }
    }

    /**
     * Starts a builder with the hardened defaults.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts a builder holding this spec's values.
     *
     * @return a new builder
     */
    public Builder toBuilder() {
        return new Builder(this);
    }

    static Map<String, String> copyEnv(@Nullable Map<String, String> env) {
        if (env == null || env.isEmpty()) {
            return Map.of();
        }
        for (Map.Entry<String, String> e : env.entrySet()) {
            String k = Objects.requireNonNull(e.getKey(), "env name");
            Objects.requireNonNull(e.getValue(), () -> "env value of " + k);
            if (k.isEmpty() || k.indexOf('=') >= 0 || k.indexOf('\0') >= 0 || e.getValue().indexOf('\0') >= 0) {
                throw new IllegalArgumentException("invalid env entry: " + quoted(k));
            }
        }
        return Map.copyOf(env);
    }

    /** Linux uids and gids are unsigned 32-bit; {@code 4294967295} is {@code (uid_t) -1}, never an owner. */
    private static final long MAX_ID = 4294967294L;
    private static final int MAX_IMAGE_LENGTH = 600;
    private static final int MAX_IMAGE_NAME_LENGTH = 255;
    /** The Docker / OCI distribution reference grammar: {@code [registry[:port]/]path[:tag][@digest]}. */
    private static final Pattern IMAGE_REFERENCE;
    private static final Pattern RUNTIME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");

    static {
        String alphanumeric = "[a-z0-9]+";
        String component = alphanumeric + "(?:(?:[._]|__|-+)" + alphanumeric + ")*";
        String hostPart = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
        String domain = "(?:" + hostPart + "(?:\\." + hostPart + ")*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?";
        String name = "((?:" + domain + "/)?" + component + "(?:/" + component + ")*)";
        String tag = "[\\w][\\w.-]{0,127}";
        String digest = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";
        IMAGE_REFERENCE = Pattern.compile(name + "(?::" + tag + ")?(?:@" + digest + ")?");
    }

    private static void requireImageReference(String image) {
        Matcher m = image.length() > MAX_IMAGE_LENGTH ? null : IMAGE_REFERENCE.matcher(image);
        if (m == null || !m.matches() || m.group(1).length() > MAX_IMAGE_NAME_LENGTH) {
            throw new IllegalArgumentException("image must be a reference [registry[:port]/]name[:tag][@digest] "
                    + "(name in lower case, no spaces or control characters), got: " + quoted(image));
        }
    }

    private static void requireUser(String user) {
        int colon = user.indexOf(':');
        String[] ids = colon < 0 ? new String[] {user} : new String[] {user.substring(0, colon), user.substring(colon + 1)};
        for (String id : ids) {
            if (id.isEmpty() || id.length() > 10 || !id.chars().allMatch(c -> c >= '0' && c <= '9')) {
                throw new IllegalArgumentException("user must be uid or uid:gid (numeric), got: " + quoted(user));
            }
            if (Long.parseLong(id) > MAX_ID) {
                throw new IllegalArgumentException("user: uids and gids are 0.." + MAX_ID + ", got: " + quoted(user));
            }
        }
    }

    /** A caller's value for an error message: quoted, control characters escaped (no forged log lines), capped. */
    private static String quoted(String value) {
        StringBuilder b = new StringBuilder("\"");
        int shown = Math.min(value.length(), 200);
        for (int i = 0; i < shown; i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == '\u2028' || c == '\u2029') {
                b.append(String.format("\\u%04x", (int) c));
            } else if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else {
                b.append(c);
            }
        }
        b.append('"');
        if (value.length() > shown) {
            b.append(" (").append(value.length()).append(" characters)");
        }
        return b.toString();
    }

    private static void requireNonNegative(long value, String name) {
        if (value < 0) {
            throw new IllegalArgumentException(name + " must be >= 0, got: " + value);
        }
    }

    /** Builds a {@link SandboxSpec}. Not thread-safe. */
    public static final class Builder {
        private @Nullable String image;
        private final Map<String, String> env = new LinkedHashMap<>();
        private @Nullable String user;
        private String network = "none";
        private long memoryBytes = 512L * 1024 * 1024;
        private double cpus;
        private long pidsLimit = 512;
        private long tmpSizeBytes = 64L * 1024 * 1024;
        private boolean dropAllCapabilities = true;
        private final Set<String> addCapabilities = new LinkedHashSet<>();
        private boolean noNewPrivileges = true;
        private boolean readOnlyRootFilesystem;
        private boolean init = true;
        private PullPolicy pullPolicy = PullPolicy.IF_MISSING;
        private final Map<String, String> labels = new LinkedHashMap<>();
        private boolean ephemeral;
        private boolean managerScoped;
        private @Nullable Duration maxLifetime;
        private @Nullable ExecRequest postCreate;
        private @Nullable Proxy proxy;
        private @Nullable String extraCaCertificates;
        private ExecMode execMode = ExecMode.AUTO;
        private @Nullable String runtime;
        private @Nullable WorkspaceTemplate template;
        private @Nullable EgressPolicy egress;

        private Builder() {
        }

        private Builder(SandboxSpec s) {
            image = s.image;
            env.putAll(s.env);
            user = s.user;
            network = s.network;
            memoryBytes = s.memoryBytes;
            cpus = s.cpus;
            pidsLimit = s.pidsLimit;
            tmpSizeBytes = s.tmpSizeBytes;
            dropAllCapabilities = s.dropAllCapabilities;
            addCapabilities.addAll(s.addCapabilities);
            noNewPrivileges = s.noNewPrivileges;
            readOnlyRootFilesystem = s.readOnlyRootFilesystem;
            init = s.init;
            pullPolicy = s.pullPolicy;
            labels.putAll(s.labels);
            ephemeral = s.ephemeral;
            managerScoped = s.managerScoped;
            maxLifetime = s.maxLifetime;
            postCreate = s.postCreate;
            proxy = s.proxy;
            extraCaCertificates = s.extraCaCertificates;
            execMode = s.execMode;
            runtime = s.runtime;
            template = s.template;
            egress = s.egress;
        }

        /**
         * Sets the image. Checked by {@link #build()} against Docker's reference grammar.
         *
         * @param image image reference, {@code [registry[:port]/]name[:tag][@digest]}
         * @return this builder
         */
        public Builder image(String image) {
            this.image = image;
            return this;
        }

        /**
         * Adds an environment variable for every exec.
         *
         * @param name  variable name
         * @param value variable value
         * @return this builder
         */
        public Builder env(String name, String value) {
            env.put(name, value);
            return this;
        }

        /**
         * Adds environment variables for every exec.
         *
         * @param variables name to value
         * @return this builder
         */
        public Builder env(Map<String, String> variables) {
            env.putAll(variables);
            return this;
        }

        /**
         * Sets the user, {@code uid} or {@code uid:gid} (numeric, each 0..4294967294); {@code null} means
         * automatic. A bare {@code uid} never runs in the root group: the driver names
         * its group (Docker: the same number as the uid; Kubernetes: {@code kubernetes.runAsGroup}). Checked by
         * {@link #build()}.
         *
         * @param user numeric user
         * @return this builder
         */
        public Builder user(@Nullable String user) {
            this.user = user;
            return this;
        }

        /**
         * Sets the network mode ({@code none} by default).
         *
         * @param network network mode or name
         * @return this builder
         */
        public Builder network(String network) {
            this.network = network;
            return this;
        }

        /**
         * Sets the memory limit in bytes ({@code 0} for none; 512 MiB by default).
         *
         * @param bytes limit
         * @return this builder
         */
        public Builder memoryBytes(long bytes) {
            this.memoryBytes = bytes;
            return this;
        }

        /**
         * Sets the CPU limit in cores ({@code 0}, the default, for none).
         *
         * @param cpus limit
         * @return this builder
         */
        public Builder cpus(double cpus) {
            this.cpus = cpus;
            return this;
        }

        /**
         * Sets the process limit ({@code 0} for none; 512 by default).
         *
         * @param limit limit
         * @return this builder
         */
        public Builder pidsLimit(long limit) {
            this.pidsLimit = limit;
            return this;
        }

        /**
         * Sets the size of the {@code /tmp} tmpfs ({@code 0} for none; 64 MiB by default).
         *
         * @param bytes size
         * @return this builder
         */
        public Builder tmpSizeBytes(long bytes) {
            this.tmpSizeBytes = bytes;
            return this;
        }

        /**
         * Whether to drop all capabilities ({@code true} by default).
         *
         * @param drop drop all
         * @return this builder
         */
        public Builder dropAllCapabilities(boolean drop) {
            this.dropAllCapabilities = drop;
            return this;
        }

        /**
         * Adds back a capability, for example {@code NET_BIND_SERVICE}.
         *
         * @param capability capability name without {@code CAP_}
         * @return this builder
         */
        public Builder addCapability(String capability) {
            addCapabilities.add(capability);
            return this;
        }

        /**
         * Whether to set no-new-privileges ({@code true} by default).
         *
         * @param value flag
         * @return this builder
         */
        public Builder noNewPrivileges(boolean value) {
            this.noNewPrivileges = value;
            return this;
        }

        /**
         * Whether the root filesystem is read-only ({@code false} by default).
         *
         * @param value flag
         * @return this builder
         */
        public Builder readOnlyRootFilesystem(boolean value) {
            this.readOnlyRootFilesystem = value;
            return this;
        }

        /**
         * Whether to run an init as PID 1 ({@code true} by default).
         *
         * @param value flag
         * @return this builder
         */
        public Builder init(boolean value) {
            this.init = value;
            return this;
        }

        /**
         * Sets the pull policy ({@link PullPolicy#IF_MISSING} by default).
         *
         * @param policy policy
         * @return this builder
         */
        public Builder pullPolicy(PullPolicy policy) {
            this.pullPolicy = policy;
            return this;
        }

        /**
         * Adds a label to the container.
         *
         * @param key   label key, not under {@code dev.sandboxkit.}
         * @param value label value
         * @return this builder
         */
        public Builder label(String key, String value) {
            labels.put(key, value);
            return this;
        }

        /**
         * Makes the sandbox single-use: on release it is hard-killed and its workdir purged.
         *
         * @return this builder
         */
        public Builder ephemeral() {
            return ephemeral(true);
        }

        /**
         * Sets whether the sandbox is single-use.
         *
         * @param value flag
         * @return this builder
         */
        public Builder ephemeral(boolean value) {
            this.ephemeral = value;
            return this;
        }

        /**
         * Makes the session live only as long as the manager that last held it: the session is destroyed, container
         * and workdir, when that manager closes, or when another manager sharing the session store finds it gone (its
         * lease expired; found by the orphan sweep at build and then at most every
         * {@link SandboxManager.Builder#orphanGrace orphan grace}). Idle reaps keep the workdir, as for any session.
         * For sessions nobody can name again once the process is gone, such as an MCP client's unkeyed conversation.
         * With an in-memory store a crashed manager's scoped workdirs are not found (the store that named them is gone).
         * Default {@code false}: a session outlives its manager.
         *
         * @param value flag
         * @return this builder
         */
        public Builder managerScoped(boolean value) {
            this.managerScoped = value;
            return this;
        }

        /**
         * Sets a hard limit on each container's life, independent of activity.
         *
         * @param lifetime limit, or {@code null} for none
         * @return this builder
         */
        public Builder maxLifetime(@Nullable Duration lifetime) {
            this.maxLifetime = lifetime;
            return this;
        }

        /**
         * Runs a command once in every new container, resume included, before it is handed out. A hook
         * without a timeout ({@link ExecRequest#withTimeout}) is killed after 10 minutes, failing the acquire.
         *
         * @param hook the command (no stdin, no listener), or {@code null} for none
         * @return this builder
         */
        public Builder postCreate(@Nullable ExecRequest hook) {
            this.postCreate = hook;
            return this;
        }

        /**
         * Exports HTTP(S) proxy settings to every exec.
         *
         * @param settings the proxy, or {@code null} for none
         * @return this builder
         */
        public Builder proxy(@Nullable Proxy settings) {
            this.proxy = settings;
            return this;
        }

        /**
         * Trusts extra CA certificates in every exec (see the record's documentation for how).
         *
         * @param pem one or more PEM certificates, or {@code null} for none
         * @return this builder
         */
        public Builder extraCaCertificates(@Nullable String pem) {
            this.extraCaCertificates = pem;
            return this;
        }

        /**
         * Sets how commands are run ({@link ExecMode#AUTO} by default). The results are the same in every
         * mode; {@link ExecMode#PLAIN} opts out of the driver's fast path.
         *
         * @param mode the exec mode
         * @return this builder
         */
        public Builder execMode(ExecMode mode) {
            this.execMode = mode;
            return this;
        }

        /**
         * Runs the sandbox under another container runtime, such as {@code runsc} (gVisor) for a user-space
         * kernel between the model's code and the host's. The engine must know it (Docker: {@code runtimes} in
         * {@code daemon.json}; Kubernetes: a RuntimeClass); an unknown one fails the acquire with the names the
         * engine offers.
         *
         * @param name the runtime, or {@code null} for the engine's default
         * @return this builder
         */
        public Builder runtime(@Nullable String name) {
            this.runtime = name;
            return this;
        }

        /**
         * Starts every new session's workdir as a copy of a host directory or a snapshot, made once when the session
         * is first created (or its warm-pool slot started), never when it resumes. A template missing at that point
         * fails the acquire with {@link SandboxConfigurationException}; keep a snapshot template
         * ({@link SandboxManager#keepSnapshot}) while sessions may be created from it.
         *
         * @param template {@link WorkspaceTemplate#directory} or {@link WorkspaceTemplate#snapshot}, or {@code null}
         *                 for an empty workdir
         * @return this builder
         */
        public Builder template(@Nullable WorkspaceTemplate template) {
            this.template = template;
            return this;
        }

        /**
         * Lets the sandbox reach the hosts a policy allows, and nothing else, while it stays on network {@code none}.
         * Inside the sandbox, {@code HTTP_PROXY}, {@code HTTPS_PROXY} and their variants name a proxy endpoint on its
         * own loopback ({@code 127.0.0.1:3128}); each connection to it is carried to the manager over the engine's
         * exec streams, where the policy is checked, the name resolved on the host and the bytes spliced (CONNECT
         * for TLS, absolute URIs for plain HTTP). A refusal is an HTTP 403 whose body names the host and the
         * policy. The policy is stored with the session (header values included): it survives reap, resume and
         * restarts; {@link SandboxManager#updateEgress} changes it for the next connection. The image needs
         * BusyBox-style {@code sh}, {@code nc} (with {@code -l} and {@code -e}), {@code mkfifo} and {@code dd};
         * without them the acquire fails with {@link SandboxConfigurationException} naming what is missing.
         *
         * @param policy the allow-list ({@link EgressPolicy#denyAll()} for a proxy that refuses everything), or
         *               {@code null} for no proxy
         * @return this builder
         */
        public Builder egress(@Nullable EgressPolicy policy) {
            this.egress = policy;
            return this;
        }

        /**
         * Builds the spec.
         *
         * @return the immutable spec
         * @throws IllegalArgumentException if a value is invalid
         */
        public SandboxSpec build() {
            return new SandboxSpec(image, env, user, network, memoryBytes, cpus, pidsLimit, tmpSizeBytes,
                    dropAllCapabilities, addCapabilities, noNewPrivileges, readOnlyRootFilesystem, init,
                    pullPolicy, labels, ephemeral, managerScoped, maxLifetime, postCreate, proxy, extraCaCertificates,
                    execMode, runtime, template, egress);
        }
    }
}
