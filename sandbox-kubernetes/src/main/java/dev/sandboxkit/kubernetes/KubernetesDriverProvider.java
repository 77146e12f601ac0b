package dev.sandboxkit.kubernetes;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.spi.ConfigValues;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SandboxDriverProvider;
import dev.sandboxkit.spi.SettingKey;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Makes the Kubernetes driver available through {@link java.util.ServiceLoader} under the name
 * {@value KubernetesSandboxDriver#NAME}, with priority 50 (below Docker's 100): picked automatically
 * only where no Docker engine is found but a kubeconfig or an in-cluster service account is.
 *
 * <p>Settings come from {@code SandboxManager.builder().driverProperty(key, value)}, a
 * {@link dev.sandboxkit.SandboxConfig} or the system properties {@code sandboxkit.<key>}, in the syntax of
 * {@link ConfigValues} ({@code 2m}, {@code 1h30m}, {@code 10Gi}); {@link #keys()} lists them with their types,
 * defaults and meanings: {@code kubernetes.context}, {@code kubernetes.namespace}, {@code kubernetes.storageClass},
 * {@code kubernetes.workspaceSize}, {@code kubernetes.runAsUser}, {@code kubernetes.runAsGroup},
 * {@code kubernetes.fsGroup}, {@code kubernetes.readOnlyRootFilesystem}, {@code kubernetes.readinessTimeout},
 * {@code kubernetes.terminationGracePeriod}, {@code kubernetes.networkPolicy},
 * {@code kubernetes.resourceRequestRatio}, {@code kubernetes.runtimeClassName} and
 * {@code kubernetes.imagePullSecrets}. They are the options of {@link KubernetesSandboxDriver.Builder}, whose
 * defaults they share. An invalid value or an unknown {@code kubernetes.*} key is a configuration error that names
 * the key.
 */
public final class KubernetesDriverProvider implements SandboxDriverProvider {
    static final String PREFIX = "kubernetes.";
    static final String SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

    /** Creates the provider; called by {@link java.util.ServiceLoader}. */
    public KubernetesDriverProvider() {
    }

    @Override
    public String name() {
        return KubernetesSandboxDriver.NAME;
    }

    @Override
    public int priority() {
        return 50;
    }

    /**
     * Available when a kubeconfig file ({@code KUBECONFIG}, the {@code kubeconfig} system property or
     * {@code ~/.kube/config}), an explicit master URL, or an in-cluster service account exists. Nothing is
     * contacted.
     */
    @Override
    public Optional<String> unavailableReason(DriverContext context) {
        return unavailableReason(System.getenv(), System::getProperty, Path.of(SERVICE_ACCOUNT_TOKEN));
    }

    static Optional<String> unavailableReason(Map<String, String> env, Function<String, String> sysprops,
                                              Path serviceAccountToken) {
        if (sysprops.apply("kubernetes.master") != null || env.get("KUBERNETES_MASTER") != null) {
            return Optional.empty();
        }
        String kubeconfig = sysprops.apply("kubeconfig");
        if (kubeconfig == null) {
            kubeconfig = env.get("KUBECONFIG");
        }
        if (kubeconfig != null && !kubeconfig.isBlank()) {
            boolean any = Arrays.stream(kubeconfig.split(File.pathSeparator))
                    .anyMatch(p -> !p.isBlank() && Files.isRegularFile(Path.of(p)));
            if (any) {
                return Optional.empty();
            }
        } else {
            String home = sysprops.apply("user.home");
            if (home != null && Files.isRegularFile(Path.of(home, ".kube", "config"))) {
                return Optional.empty();
            }
        }
        if (env.get("KUBERNETES_SERVICE_HOST") != null && Files.isRegularFile(serviceAccountToken)) {
            return Optional.empty();
        }
        return Optional.of("no kubeconfig (" + (kubeconfig != null ? "KUBECONFIG=" + kubeconfig + " has no file"
                : "~/.kube/config not found") + ") and not running in a cluster (no service account token at "
                + serviceAccountToken + ")");
    }

    /**
     * The driver's settings.
     *
     * @return {@link #keys()}
     */
    @Override
    public List<SettingKey> settingKeys() {
        return keys();
    }

    /**
     * Every key of the Kubernetes driver, in order, with its type, default and description: what the docs' table and
     * the entry points' metadata are made from.
     *
     * @return the keys
     */
    public static List<SettingKey> keys() {
        return Keys.DOCS;
    }

    /**
     * Creates the driver from the context's {@code kubernetes.*} settings. Does not contact the cluster.
     *
     * @param context the manager's settings
     * @return a new driver
     * @throws SandboxConfigurationException naming the key (as the user set it) if a value is invalid or a
     *                                       {@code kubernetes.*} key is unknown (suggesting the nearest)
     */
    @Override
    public SandboxDriver create(DriverContext context) {
        KubernetesSandboxDriver.Builder b = builder(context).owner(context.instanceId());
        try {
            return b.build();
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new SandboxConfigurationException("invalid Kubernetes driver setting: " + e.getMessage(), e);
        }
    }

    /** A builder with every {@code kubernetes.*} setting of the context applied; a blank value is the default. */
    static KubernetesSandboxDriver.Builder builder(DriverContext context) {
        context.requireKnownKeys(PREFIX, Keys.DOCS.stream().map(SettingKey::name).toList());
        KubernetesSandboxDriver.Builder b = KubernetesSandboxDriver.builder();
        for (Key k : Keys.ALL) {
            String name = k.doc.name();
            Optional<String> value = context.property(name).map(String::trim).filter(v -> !v.isEmpty());
            if (value.isPresent()) {
                String setting = context.settingName(name);
                try {
                    k.parser.parse(b, setting, value.get());
                } catch (IllegalArgumentException e) { // the builder's check of the parsed value
                    throw new SandboxConfigurationException(setting + ": " + e.getMessage(), e);
                }
            }
        }
        return b;
    }

    /** Applies one value, already trimmed and not blank; {@code name} is how the user set it, for messages. */
    @FunctionalInterface
    interface Parser {
        void parse(KubernetesSandboxDriver.Builder b, String name, String value);
    }

    /**
     * One key: its documentation, how its text is applied to a builder, and the canonical text of its value in a
     * driver's settings (empty when unset).
     */
    record Key(SettingKey doc, Parser parser, Function<Settings, String> text) {
    }

    static final class Keys {
        static final List<Key> ALL;
        static final List<SettingKey> DOCS;

        static {
            Settings d = KubernetesSandboxDriver.builder().settings();
            List<Key> k = new ArrayList<>();
            k.add(key(d, "context", "string", "The kubeconfig context the client is configured from. Unset: the "
                    + "current context.", (b, n, v) -> b.kubeContext(v), s -> orEmpty(s.kubeContext())));
            k.add(key(d, "namespace", "string", "The namespace of every pod, claim and network policy. Unset: the "
                    + "client's namespace, else default.", (b, n, v) -> b.namespace(v), s -> orEmpty(s.namespace())));
            k.add(key(d, "storageClass", "string", "The storage class of the workspace claims. Unset: the cluster's "
                    + "default class.", (b, n, v) -> b.storageClass(v), s -> orEmpty(s.storageClass())));
            k.add(key(d, "workspaceSize", "size", "The requested size of each workspace claim, and the size limit of "
                    + "an ephemeral sandbox's emptyDir.", (b, n, v) -> b.workspaceSize(quantity(ConfigValues.size(n, v))),
                    s -> quantity(ConfigValues.size(PREFIX + "workspaceSize", s.workspaceSize()))));
            k.add(key(d, "runAsUser", "integer", "The uid of sandboxes whose spec names no user; not 0.",
                    (b, n, v) -> b.runAsUser(ConfigValues.integer(n, v)), s -> Long.toString(s.runAsUser())));
            k.add(key(d, "runAsGroup", "integer", "The gid of sandboxes whose spec names no group.",
                    (b, n, v) -> b.runAsGroup(ConfigValues.integer(n, v)), s -> Long.toString(s.runAsGroup())));
            k.add(key(d, "fsGroup", "integer", "The group that owns mounted volumes, so that the workspace is "
                    + "writable whatever the uid.", (b, n, v) -> b.fsGroup(ConfigValues.integer(n, v)),
                    s -> Long.toString(s.fsGroup())));
            k.add(key(d, "readOnlyRootFilesystem", "boolean", "true forces a read-only root file system on every "
                    + "sandbox, even when its spec does not ask for one.",
                    (b, n, v) -> b.readOnlyRootFilesystem(ConfigValues.bool(n, v)),
                    s -> Boolean.toString(s.readOnlyRootFilesystem())));
            k.add(key(d, "readinessTimeout", "duration", "How long creating a sandbox waits for its container to run, "
                    + "image pull included.", (b, n, v) -> b.readinessTimeout(ConfigValues.duration(n, v)),
                    s -> ConfigValues.format(s.readinessTimeout())));
            k.add(key(d, "terminationGracePeriod", "duration", "The pods' termination grace period, rounded up to "
                    + "whole seconds, at least 1.", (b, n, v) -> b.terminationGracePeriod(ConfigValues.duration(n, v)),
                    s -> ConfigValues.format(s.terminationGrace())));
            k.add(key(d, "networkPolicy", "true|false|auto", "Whether each sandbox gets a deny-all (ingress and "
                    + "egress) NetworkPolicy; auto: when its spec's network is none.", KubernetesDriverProvider::networkPolicy,
                    s -> s.networkPolicy() == null ? "auto" : s.networkPolicy().toString()));
            k.add(key(d, "resourceRequestRatio", "number", "Resource requests as a fraction of the spec's limits, in "
                    + "(0, 1]; lower packs more idle sandboxes per node at the risk of memory pressure.",
                    (b, n, v) -> b.resourceRequestRatio(ConfigValues.number(n, v)), s -> Double.toString(s.requestRatio())));
            k.add(key(d, "runtimeClassName", "string", "A RuntimeClass for the pods (gvisor, kata, ...). Unset: the "
                    + "cluster's default runtime.", (b, n, v) -> b.runtimeClassName(v),
                    s -> orEmpty(s.runtimeClassName())));
            k.add(key(d, "imagePullSecrets", "list", "Secrets for pulling sandbox images from private registries, "
                    + "comma-separated.", (b, n, v) -> b.imagePullSecrets(ConfigValues.list(v).toArray(String[]::new)),
                    s -> String.join(",", s.imagePullSecrets())));
            ALL = List.copyOf(k);
            DOCS = ALL.stream().map(Key::doc).toList();
        }

        private Keys() {
        }

        private static Key key(Settings defaults, String name, String type, String description, Parser parser,
                               Function<Settings, String> text) {
            return new Key(new SettingKey(PREFIX + name, type, text.apply(defaults), description), parser, text);
        }

        private static String orEmpty(String value) {
            return value == null ? "" : value;
        }
    }

    private static void networkPolicy(KubernetesSandboxDriver.Builder b, String name, String value) {
        if (!value.equalsIgnoreCase("auto")) {
            if (!value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
                throw ConfigValues.invalid(name, value, "true, false or auto");
            }
            b.networkPolicy(Boolean.parseBoolean(value));
        }
    }

    /** A size as a Kubernetes quantity: whole Ki, Mi, Gi or Ti when it is one, else bytes. */
    static String quantity(long bytes) {
        String text = ConfigValues.formatSize(bytes); // 20000B, 512MB, 1GB: binary units
        String unit = text.replaceAll("\\d", "");
        String number = text.substring(0, text.length() - unit.length());
        return unit.equals("B") ? number : number + unit.charAt(0) + "i";
    }
}
