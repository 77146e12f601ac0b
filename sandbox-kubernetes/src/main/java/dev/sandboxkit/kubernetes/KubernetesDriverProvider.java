package dev.sandboxkit.kubernetes;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SandboxDriverProvider;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Makes the Kubernetes driver available through {@link java.util.ServiceLoader} under the name
 * {@value KubernetesSandboxDriver#NAME}, with priority 50 (below Docker's 100): picked automatically
 * only where no Docker engine is found but a kubeconfig or an in-cluster service account is.
 *
 * <p>Settings come from {@code SandboxManager.builder().driverProperty(key, value)} or the system
 * properties {@code sandboxkit.<key>}:
 * <ul>
 *   <li>{@code kubernetes.namespace}, {@code kubernetes.context} (kubeconfig context)</li>
 *   <li>{@code kubernetes.storageClass}, {@code kubernetes.workspaceSize} (quantity, default {@code 1Gi})</li>
 *   <li>{@code kubernetes.runAsUser}, {@code kubernetes.runAsGroup}, {@code kubernetes.fsGroup} (default 10001)</li>
 *   <li>{@code kubernetes.readOnlyRootFilesystem} ({@code true} forces it)</li>
 *   <li>{@code kubernetes.readinessTimeout}, {@code kubernetes.terminationGracePeriod} (seconds, or
 *       {@code 500ms}, {@code 2m}, ISO-8601 {@code PT2M})</li>
 *   <li>{@code kubernetes.networkPolicy} ({@code true}, {@code false} or {@code auto})</li>
 *   <li>{@code kubernetes.resourceRequestRatio}, {@code kubernetes.runtimeClassName},
 *       {@code kubernetes.imagePullSecrets} (comma-separated)</li>
 * </ul>
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

    @Override
    public SandboxDriver create(DriverContext context) {
        KubernetesSandboxDriver.Builder b = KubernetesSandboxDriver.builder().owner(context.instanceId());
        try {
            prop(context, "context").ifPresent(b::kubeContext);
            prop(context, "namespace").ifPresent(b::namespace);
            prop(context, "storageClass").ifPresent(b::storageClass);
            prop(context, "workspaceSize").ifPresent(b::workspaceSize);
            prop(context, "runAsUser").ifPresent(v -> b.runAsUser(parseLong("runAsUser", v)));
            prop(context, "runAsGroup").ifPresent(v -> b.runAsGroup(parseLong("runAsGroup", v)));
            prop(context, "fsGroup").ifPresent(v -> b.fsGroup(parseLong("fsGroup", v)));
            prop(context, "readOnlyRootFilesystem")
                    .ifPresent(v -> b.readOnlyRootFilesystem(parseBoolean("readOnlyRootFilesystem", v)));
            prop(context, "readinessTimeout").ifPresent(v -> b.readinessTimeout(parseDuration("readinessTimeout", v)));
            prop(context, "terminationGracePeriod")
                    .ifPresent(v -> b.terminationGracePeriod(parseDuration("terminationGracePeriod", v)));
            prop(context, "networkPolicy").filter(v -> !v.equalsIgnoreCase("auto"))
                    .ifPresent(v -> b.networkPolicy(parseBoolean("networkPolicy", v)));
            prop(context, "resourceRequestRatio")
                    .ifPresent(v -> b.resourceRequestRatio(parseDouble("resourceRequestRatio", v)));
            prop(context, "runtimeClassName").ifPresent(b::runtimeClassName);
            prop(context, "imagePullSecrets").ifPresent(v -> b.imagePullSecrets(Arrays.stream(v.split(","))
                    .map(String::trim).filter(s -> !s.isEmpty()).toArray(String[]::new)));
            return b.build();
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new SandboxConfigurationException("invalid Kubernetes driver setting: " + e.getMessage(), e);
        }
    }

    private static Optional<String> prop(DriverContext context, String key) {
        return context.property(PREFIX + key).map(String::trim).filter(s -> !s.isEmpty());
    }

    private static long parseLong(String key, String value) {
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(PREFIX + key + " must be a number: " + value, e);
        }
    }

    private static double parseDouble(String key, String value) {
        try {
            return Double.parseDouble(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(PREFIX + key + " must be a number: " + value, e);
        }
    }

    private static boolean parseBoolean(String key, String value) {
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException(PREFIX + key + " must be true or false: " + value);
        };
    }

    /** Seconds ({@code 90}), {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h} or ISO-8601 ({@code PT2M}). */
    static Duration parseDuration(String key, String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        try {
            if (v.startsWith("pt") || v.startsWith("p")) {
                return Duration.parse(value.trim().toUpperCase(Locale.ROOT));
            }
            if (v.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2).trim()));
            }
            if (v.endsWith("s")) {
                return Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1).trim()));
            }
            if (v.endsWith("m")) {
                return Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1).trim()));
            }
            if (v.endsWith("h")) {
                return Duration.ofHours(Long.parseLong(v.substring(0, v.length() - 1).trim()));
            }
            return Duration.ofSeconds(Long.parseLong(v));
        } catch (NumberFormatException | DateTimeParseException e) {
            throw new IllegalArgumentException(PREFIX + key + " is not a duration (seconds, 500ms, 2m, PT2M): "
                    + value, e);
        }
    }
}
