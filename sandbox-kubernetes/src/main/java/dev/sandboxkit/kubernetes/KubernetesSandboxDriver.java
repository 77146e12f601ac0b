package dev.sandboxkit.kubernetes;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.ComputeCapability;
import dev.sandboxkit.spi.SandboxDescriptor;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.TerminalConnection;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.spi.WorkspaceCapability;
import dev.sandboxkit.spi.WorkspaceDescriptor;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Runs each session's sandbox as one pod on a Kubernetes cluster, through the fabric8 client.
 *
 * <ul>
 *   <li>The pod has one container, {@code main}, whose command is {@code sleep infinity} (the image's
 *       entrypoint never runs), restart policy {@code Never}, no service account token, no service links
 *       and hardened security contexts (non-root, no privilege escalation, all capabilities dropped,
 *       RuntimeDefault seccomp), which satisfy the {@code restricted} Pod Security Standard.</li>
 *   <li>The durable workdir is a PersistentVolumeClaim per session mounted at {@value SandboxSpec#WORKSPACE};
 *       ephemeral sandboxes use an emptyDir instead. Removing a sandbox deletes the pod and keeps the
 *       claim; {@link #deleteWorkspace} deletes the claim.</li>
 *   <li>When the spec's network is {@code none} a deny-all NetworkPolicy (ingress and egress) selects the
 *       session's pods; it is only enforced by a CNI plugin that implements NetworkPolicy.</li>
 *   <li>Execs use the pod exec API with a small POSIX shell wrapper, so the image needs {@code /bin/sh}:
 *       see the module documentation for how env, working directory, stdin EOF and kills work.</li>
 * </ul>
 *
 * <p>Output listeners are called on a fabric8 client thread, one call at a time per exec.
 *
 * <pre>{@code
 * SandboxManager manager = SandboxManager.builder()
 *         .driver(KubernetesSandboxDriver.builder().namespace("agents").storageClass("fast").build())
 *         .build();
 * }</pre>
 *
 * <p>Thread-safe. Immutable once built.
 */
public final class KubernetesSandboxDriver implements SandboxDriver {
    /** The driver's name. */
    public static final String NAME = "kubernetes";
    static final String DEFAULT_WORKSPACE_SIZE = "1Gi";
    static final long DEFAULT_ID = 10001;
    static final Duration DEFAULT_READINESS_TIMEOUT = Duration.ofSeconds(120);
    static final Duration DEFAULT_TERMINATION_GRACE = Duration.ofSeconds(1);
    static final double DEFAULT_REQUEST_RATIO = 1.0;

    private final KubernetesClient client;
    private final boolean ownsClient;
    private final Settings settings;
    private final PodSandboxes pods;
    private final ClaimWorkspaces workspaces;

    KubernetesSandboxDriver(KubernetesClient client, boolean ownsClient, Settings settings, Supplier<String> execIds) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.settings = settings;
        this.pods = new PodSandboxes(client, settings, execIds);
        this.workspaces = new ClaimWorkspaces(client, settings);
    }

    /**
     * Starts a builder. Without {@link Builder#client} or {@link Builder#config}, the configuration comes
     * from {@code Config.autoConfigure}: the kubeconfig ({@code KUBECONFIG}, {@code ~/.kube/config}) or
     * the in-cluster service account.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String name() {
        return NAME;
    }

    /**
     * Stdin with EOF, streaming, process-group kills, real processes, port forwarding and terminals.
     */
    @Override
    public Set<ComputeCapability> computeCapabilities() {
        return Collections.unmodifiableSet(EnumSet.of(ComputeCapability.STDIN, ComputeCapability.STREAMING,
                ComputeCapability.KILL_PROCESS_GROUP, ComputeCapability.REAL_PROCESSES, ComputeCapability.PORT_FORWARD,
                ComputeCapability.TTY));
    }

    /** None: PVC workdirs have no files API, snapshots, archives or templates here, and are not on the host. */
    @Override
    public Set<WorkspaceCapability> workspaceCapabilities() {
        return Set.of();
    }

    /**
     * {@inheritDoc}
     *
     * @deprecated read {@link #computeCapabilities()} and {@link #workspaceCapabilities()}; goes in the next minor
     *             version
     */
    @Override
    @Deprecated(since = "0.1.0", forRemoval = true)
    @SuppressWarnings("removal")
    public Set<dev.sandboxkit.spi.DriverCapability> capabilities() {
        return SandboxDriver.super.capabilities();
    }

    /** Lists at most one pod in the namespace: proves reachability, credentials and RBAC in one call. */
    @Override
    public void ping() {
        try {
            client.pods().inNamespace(settings.namespace()).list(new ListOptionsBuilder().withLimit(1L).build());
        } catch (KubernetesClientException e) {
            throw Errors.translate(e, "list pods in namespace " + settings.namespace(), masterUrl(),
                    new SandboxUnavailableException("Kubernetes API at " + masterUrl() + " answered HTTP "
                            + e.getCode() + " when listing pods in namespace " + settings.namespace() + ": "
                            + Errors.message(e), e));
        }
    }

    /**
     * Creates the session's PersistentVolumeClaim if it does not exist (waiting for a claim of the same
     * name that is still being deleted to go), or, for an ephemeral spec, returns an emptyDir location.
     */
    @Override
    public String createWorkspace(String sessionId, SandboxSpec spec) {
        return workspaces.createWorkspace(sessionId, spec);
    }

    /** Deletes the session's claim (the volume goes with it under the usual Delete reclaim policy). */
    @Override
    public void deleteWorkspace(String workspace) {
        workspaces.deleteWorkspace(workspace);
    }

    /**
     * Creates the policy (first, so that the pod is never reachable without it) and the pod, then waits
     * until the container runs. On any failure both are deleted again.
     */
    @Override
    public String create(CreateRequest request) {
        return pods.create(request);
    }

    /**
     * Runs the command through the exec API. A missing pod is {@link dev.sandboxkit.SandboxNotFoundException};
     * a pod deleted during the exec gives a result with {@link ExecResult.Termination#KILLED}.
     */
    @Override
    public ExecResult exec(String sandboxId, ExecRequest request) {
        return pods.exec(sandboxId, request);
    }

    /**
     * A port-forward stream through the API server (fabric8 {@code portForward}, the pods/portforward
     * subresource: RBAC needs {@code create} on it). The pod's network stays as its policy says. The protocol has
     * no half-close: after {@link dev.sandboxkit.spi.PortConnection#shutdownOutput()} the service does not read
     * end of stream.
     */
    @Override
    public dev.sandboxkit.spi.PortConnection connect(String sandboxId, int port) {
        return pods.connect(sandboxId, port);
    }

    /**
     * Opens the command on a terminal: the exec API with {@code tty=true} and its resize channel (see
     * {@code PodTerminal}). Per-exec env is refused on a terminal (it would travel on the echoed stdin).
     */
    @Override
    public TerminalConnection openTerminal(String sandboxId, ExecRequest request) {
        return pods.openTerminal(sandboxId, request);
    }

    /**
     * Deletes the pod (with the short grace period) and its policy, keeps the claim, and waits until the
     * kubelet has confirmed the kill, so a resumed pod does not meet the old one on the claim. Idempotent.
     */
    @Override
    public void remove(String sandboxId) {
        pods.remove(sandboxId);
    }

    /**
     * Pods with all the given labels (and {@value SandboxLabels#MANAGED}). A session label in the selector
     * is sanitised for the query; the result carries the exact session id from the annotation.
     */
    @Override
    public List<SandboxDescriptor> list(Map<String, String> labels) {
        return pods.list(labels);
    }

    /**
     * The session claims in this driver's namespace, for the orphan sweep. Claims being deleted, and claims without a
     * creation time (their age cannot be judged), are left out.
     */
    @Override
    public List<WorkspaceDescriptor> listWorkspaces(Map<String, String> labels) {
        return workspaces.listWorkspaces(labels);
    }

    /** Closes the client if the driver created it, and stops the stdin writer threads. */
    @Override
    public void close() {
        pods.close();
        if (ownsClient) {
            client.close();
        }
    }

    /** The namespace this driver works in. */
    String namespace() {
        return settings.namespace();
    }

    Settings settings() {
        return settings;
    }

    KubernetesClient client() {
        return client;
    }

    private String masterUrl() {
        return String.valueOf(client.getMasterUrl());
    }

    /**
     * Configures a {@link KubernetesSandboxDriver}. Each option can be set once and is checked when it is set;
     * {@link #build()} checks how they combine. Not thread-safe.
     */
    public static final class Builder {
        private final Set<String> assigned = new HashSet<>();
        private KubernetesClient client;
        private Config config;
        private String kubeContext;
        private String namespace;
        private String storageClass;
        private String workspaceSize = DEFAULT_WORKSPACE_SIZE;
        private long runAsUser = DEFAULT_ID;
        private long runAsGroup = DEFAULT_ID;
        private long fsGroup = DEFAULT_ID;
        private boolean readOnlyRootFilesystem;
        private Duration readinessTimeout = DEFAULT_READINESS_TIMEOUT;
        private Boolean networkPolicy;
        private Duration terminationGracePeriod = DEFAULT_TERMINATION_GRACE;
        private double requestRatio = DEFAULT_REQUEST_RATIO;
        private String runtimeClassName;
        private List<String> imagePullSecrets = List.of();
        private String owner;
        private Supplier<String> execIds = Names::execId;

        private Builder() {
        }

        private void once(String option) {
            if (!assigned.add(option)) {
                throw new IllegalStateException(option + " is already set");
            }
        }

        /**
         * Uses this client. The driver does not close it. Excludes {@link #config} and {@link #kubeContext}.
         *
         * @param kubernetesClient the client
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder client(KubernetesClient kubernetesClient) {
            once("client");
            this.client = Objects.requireNonNull(kubernetesClient, "client");
            return this;
        }

        /**
         * Builds the driver's own client from this configuration instead of {@code Config.autoConfigure}.
         *
         * @param clientConfig the fabric8 configuration
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder config(Config clientConfig) {
            once("config");
            this.config = Objects.requireNonNull(clientConfig, "config");
            return this;
        }

        /**
         * Uses this kubeconfig context for {@code Config.autoConfigure} instead of the current one.
         *
         * @param context context name
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder kubeContext(String context) {
            once("kubeContext");
            this.kubeContext = Objects.requireNonNull(context, "kubeContext");
            return this;
        }

        /**
         * The namespace of all pods, claims and policies. Default: the client's namespace, else {@code default}.
         *
         * @param name namespace, a DNS-1123 label
         * @return this builder
         * @throws IllegalArgumentException if it is not a DNS-1123 label
         * @throws IllegalStateException if this option was set already
         */
        public Builder namespace(String name) {
            once("namespace");
            this.namespace = requireNamespace(Objects.requireNonNull(name, "namespace"));
            return this;
        }

        /**
         * The storage class of workspace claims. Default: the cluster's default class.
         *
         * @param name storage class name
         * @return this builder
         * @throws IllegalArgumentException if it is blank
         * @throws IllegalStateException if this option was set already
         */
        public Builder storageClass(String name) {
            once("storageClass");
            if (Objects.requireNonNull(name, "storageClass").isBlank()) {
                throw new IllegalArgumentException("storageClass must not be blank");
            }
            this.storageClass = name;
            return this;
        }

        /**
         * The requested size of each workspace claim, a Kubernetes quantity such as {@code 1Gi} (the default);
         * also the size limit of an ephemeral sandbox's emptyDir workdir.
         *
         * @param quantity size
         * @return this builder
         * @throws IllegalArgumentException if it is not a positive Kubernetes quantity
         * @throws IllegalStateException if this option was set already
         */
        public Builder workspaceSize(String quantity) {
            once("workspaceSize");
            Objects.requireNonNull(quantity, "workspaceSize");
            Quantity size;
            try {
                size = Quantity.parse(quantity);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("workspaceSize is not a Kubernetes quantity: " + quantity, e);
            }
            if (size.getNumericalAmount().compareTo(BigDecimal.ZERO) <= 0) {
                throw new IllegalArgumentException("workspaceSize must be positive: " + quantity);
            }
            this.workspaceSize = quantity;
            return this;
        }

        /**
         * The uid of sandboxes whose spec names no user. Default 10001.
         *
         * @param uid user id, not 0
         * @return this builder
         * @throws IllegalArgumentException if it is not positive
         * @throws IllegalStateException if this option was set already
         */
        public Builder runAsUser(long uid) {
            once("runAsUser");
            if (uid <= 0) {
                throw new IllegalArgumentException("runAsUser must be a non-root uid (> 0): " + uid);
            }
            this.runAsUser = uid;
            return this;
        }

        /**
         * The gid of sandboxes whose spec names no group. Default 10001.
         *
         * @param gid group id, at least 0
         * @return this builder
         * @throws IllegalArgumentException if it is negative
         * @throws IllegalStateException if this option was set already
         */
        public Builder runAsGroup(long gid) {
            once("runAsGroup");
            this.runAsGroup = notNegative("runAsGroup", gid);
            return this;
        }

        /**
         * The group that owns mounted volumes, so that the workspace is writable whatever the uid. Default 10001.
         *
         * @param gid group id, at least 0
         * @return this builder
         * @throws IllegalArgumentException if it is negative
         * @throws IllegalStateException if this option was set already
         */
        public Builder fsGroup(long gid) {
            once("fsGroup");
            this.fsGroup = notNegative("fsGroup", gid);
            return this;
        }

        /**
         * Forces a read-only root filesystem on every sandbox, even when the spec does not ask. Default false
         * (the spec decides).
         *
         * @param readOnly whether to force it
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder readOnlyRootFilesystem(boolean readOnly) {
            once("readOnlyRootFilesystem");
            this.readOnlyRootFilesystem = readOnly;
            return this;
        }

        /**
         * How long {@code create} waits for the container to run (image pull included). Default 120 s.
         *
         * @param timeout positive duration
         * @return this builder
         * @throws IllegalArgumentException if it is not positive
         * @throws IllegalStateException if this option was set already
         */
        public Builder readinessTimeout(Duration timeout) {
            once("readinessTimeout");
            if (Objects.requireNonNull(timeout, "readinessTimeout").isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("readinessTimeout must be positive: " + timeout);
            }
            this.readinessTimeout = timeout;
            return this;
        }

        /**
         * Whether each sandbox gets a deny-all (ingress and egress) NetworkPolicy. Default: when the spec's
         * network is {@code none}.
         *
         * @param enabled always on or always off
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder networkPolicy(boolean enabled) {
            once("networkPolicy");
            this.networkPolicy = enabled;
            return this;
        }

        /**
         * The pods' termination grace period. Default 1 s; rounded up to whole seconds, at least 1 (0 would
         * be a force deletion, which can leave the container running on its node).
         *
         * @param grace grace period, not negative
         * @return this builder
         * @throws IllegalArgumentException if it is negative
         * @throws IllegalStateException if this option was set already
         */
        public Builder terminationGracePeriod(Duration grace) {
            once("terminationGracePeriod");
            if (Objects.requireNonNull(grace, "terminationGracePeriod").isNegative()) {
                throw new IllegalArgumentException("terminationGracePeriod must be >= 0: " + grace);
            }
            this.terminationGracePeriod = grace;
            return this;
        }

        /**
         * Resource requests as a fraction of the spec's limits, in (0, 1]. Default 1 (requests = limits).
         * Lower values pack more idle sandboxes per node at the risk of memory pressure.
         *
         * @param ratio fraction
         * @return this builder
         * @throws IllegalArgumentException if it is not in (0, 1]
         * @throws IllegalStateException if this option was set already
         */
        public Builder resourceRequestRatio(double ratio) {
            once("resourceRequestRatio");
            if (!(ratio > 0 && ratio <= 1)) {
                throw new IllegalArgumentException("resourceRequestRatio must be in (0, 1]: " + ratio);
            }
            this.requestRatio = ratio;
            return this;
        }

        /**
         * A RuntimeClass for the pods, for example {@code gvisor} or {@code kata}, for a stronger boundary
         * than a container. Default: the cluster's default runtime.
         *
         * @param name RuntimeClass name
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder runtimeClassName(String name) {
            once("runtimeClassName");
            this.runtimeClassName = Objects.requireNonNull(name, "runtimeClassName");
            return this;
        }

        /**
         * Secrets for pulling sandbox images from private registries.
         *
         * @param names secret names in the namespace
         * @return this builder
         * @throws IllegalArgumentException if a name is blank
         * @throws IllegalStateException if this option was set already
         */
        public Builder imagePullSecrets(String... names) {
            once("imagePullSecrets");
            for (String secret : names) {
                if (secret == null || secret.isBlank()) {
                    throw new IllegalArgumentException("image pull secret names must not be blank");
                }
            }
            this.imagePullSecrets = List.copyOf(Arrays.asList(names));
            return this;
        }

        /** The manager instance id, set by the provider, for the workspace claims' owner label. */
        Builder owner(String instanceId) {
            once("owner");
            this.owner = instanceId;
            return this;
        }

        /** Fixes the exec marker values; tests use it to predict the exec URL. */
        Builder execIds(Supplier<String> ids) {
            once("execIds");
            this.execIds = Objects.requireNonNull(ids, "execIds");
            return this;
        }

        /**
         * Builds the driver (and its client, unless one was given). Does not contact the cluster.
         *
         * @return the driver
         * @throws IllegalArgumentException if the client's namespace is not a DNS-1123 label
         * @throws IllegalStateException    if both a client and a configuration were given
         */
        public KubernetesSandboxDriver build() {
            if (client != null && (config != null || kubeContext != null)) {
                throw new IllegalStateException("client(..) excludes config(..) and kubeContext(..)");
            }
            if (config != null && kubeContext != null) {
                throw new IllegalStateException("config(..) excludes kubeContext(..)");
            }
            Settings settings = settings();
            KubernetesClient c = client;
            boolean owns = false;
            if (c == null) {
                Config cfg = config != null ? config : autoConfigure(kubeContext);
                c = new KubernetesClientBuilder().withConfig(cfg).build();
                owns = true;
            }
            String ns = namespace != null ? namespace : c.getNamespace() != null ? c.getNamespace() : "default";
            try {
                requireNamespace(ns);
            } catch (IllegalArgumentException e) {
                if (owns) {
                    c.close();
                }
                throw e;
            }
            Settings resolved = new Settings(ns, settings.storageClass(), settings.workspaceSize(), settings.runAsUser(),
                    settings.runAsGroup(), settings.fsGroup(), settings.readOnlyRootFilesystem(),
                    settings.readinessTimeout(), settings.networkPolicy(), settings.terminationGrace(),
                    settings.requestRatio(), settings.runtimeClassName(), settings.imagePullSecrets(), settings.owner(),
                    settings.kubeContext());
            return new KubernetesSandboxDriver(c, owns, resolved, execIds);
        }

        /** The options as set (each checked by its setter), the namespace not yet resolved from the client. */
        Settings settings() {
            return new Settings(namespace, storageClass, workspaceSize, runAsUser, runAsGroup, fsGroup,
                    readOnlyRootFilesystem, readinessTimeout, networkPolicy, terminationGracePeriod, requestRatio,
                    runtimeClassName, imagePullSecrets, owner, kubeContext);
        }

        private static String requireNamespace(String name) {
            if (!Names.isDnsLabel(name)) {
                throw new IllegalArgumentException("namespace must be a DNS-1123 label: " + name);
            }
            return name;
        }

        private static long notNegative(String option, long id) {
            if (id < 0) {
                throw new IllegalArgumentException(option + " must be >= 0: " + id);
            }
            return id;
        }

        /**
         * fabric8's auto-configuration with fewer retries: its default of ten exponential retries would make
         * an unreachable API look like a hang (about 100 s) before {@code ping} could report it.
         */
        static Config autoConfigure(String context) {
            Config cfg = Config.autoConfigure(context);
            if (System.getProperty("kubernetes.request.retry.backoffLimit") == null
                    && System.getenv("KUBERNETES_REQUEST_RETRY_BACKOFFLIMIT") == null) {
                cfg.setRequestRetryBackoffLimit(2);
            }
            return cfg;
        }
    }
}
