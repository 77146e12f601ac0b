package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.spi.ConfigValues;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SandboxDriverProvider;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * Finds the driver: a name (the builder's, else the {@code sandboxkit.driver} system property), or the available
 * provider with the highest priority. A broken provider is skipped, not fatal. When nothing fits, the message names
 * the setting the name came from, suggests the nearest known driver for a typo, gives every candidate's reason, and
 * suggests adding only driver modules that exist and are missing. Entry points with settings of their own (Spring
 * Boot) call {@link #find} through {@link SandboxDriverProvider#find} with their names for the settings.
 */
public final class DriverResolver {
    static final String DRIVER_PROPERTY = "sandboxkit.driver";
    /** sandboxkit's own drivers and their modules: what a typo is compared with, and what may be missing. */
    private static final Map<String, String> KNOWN = knownDrivers();
    private static final Logger log = LoggerFactory.getLogger(DriverResolver.class);

    private DriverResolver() {
    }

    private static Map<String, String> knownDrivers() {
        Map<String, String> known = new LinkedHashMap<>();
        known.put("docker", "dev.sandboxkit:sandbox-docker");
        known.put("kubernetes", "dev.sandboxkit:sandbox-kubernetes");
        return known;
    }

    /** The builder's way: its name, else the system property, else detection; creates the driver. */
    static SandboxDriver create(@Nullable String requestedName, DriverContext context, ClassLoader loader) {
        String fromProperty = System.getProperty(DRIVER_PROPERTY);
        String name = requestedName != null ? requestedName : fromProperty;
        String setting = requestedName != null ? "SandboxManager.builder().driver(..)"
                : fromProperty != null ? "-D" + DRIVER_PROPERTY : "SandboxManager.builder().driver(..) or -D" + DRIVER_PROPERTY;
        SandboxDriverProvider p = find(name, setting, context, loader);
        log.debug("Using sandbox driver {} (priority {})", p.name(), p.priority());
        return p.create(context);
    }

    /**
     * The provider named {@code name}, or, without a name, the available one with the highest priority.
     *
     * @param name        the driver's name, or {@code null} (or blank) to detect one
     * @param nameSetting how the user names the driver at this entry point, for messages
     * @param context     what providers are checked with; driver settings are named by its
     *                    {@link DriverContext#settingName(String)}
     * @param loader      where providers are looked up
     * @return the provider
     * @throws SandboxConfigurationException if no provider has the name, or none is available
     */
    public static SandboxDriverProvider find(@Nullable String name, String nameSetting, DriverContext context,
                                             ClassLoader loader) {
        List<String> broken = new ArrayList<>();
        List<SandboxDriverProvider> providers = load(loader, broken);
        if (name != null && !name.isBlank()) {
            String wanted = name.trim();
            for (SandboxDriverProvider p : providers) {
                if (p.name().equals(wanted)) {
                    return p;
                }
            }
            throw new SandboxConfigurationException("no sandbox driver named '" + wanted + "' (" + nameSetting + ")"
                    + suggestion(wanted, providers) + " Drivers on the classpath: " + names(providers)
                    + (broken.isEmpty() ? "" : "; skipped, broken: " + String.join("; ", broken)) + ".");
        }
        providers.sort(Comparator.comparingInt(SandboxDriverProvider::priority).reversed());
        List<String> reasons = new ArrayList<>();
        for (SandboxDriverProvider p : providers) {
            Optional<String> reason = p.unavailableReason(context);
            if (reason.isEmpty()) {
                return p;
            }
            reasons.add(p.name() + ": " + reason.get());
        }
        reasons.addAll(broken.stream().map(b -> "broken provider: " + b).toList());
        boolean knownPresent = providers.stream().anyMatch(p -> KNOWN.containsKey(p.name()));
        throw new SandboxConfigurationException("no usable sandbox driver (none named with " + nameSetting
                + ", so one is detected): " + (reasons.isEmpty() ? "none on the classpath" : String.join("; ", reasons))
                + ". " + (knownPresent ? "Start the engine, or correct the settings named above."
                : "Add a driver module: " + String.join(" or ", KNOWN.values()) + "."));
    }

    /** "; did you mean docker?" for a typo, the module of a known driver that is missing, or the known drivers. */
    private static String suggestion(String wanted, List<SandboxDriverProvider> providers) {
        if (KNOWN.containsKey(wanted)) {
            return ". It is in " + KNOWN.get(wanted) + ", which is not on the classpath.";
        }
        List<String> candidates = new ArrayList<>(providers.stream().map(SandboxDriverProvider::name).toList());
        KNOWN.keySet().stream().filter(k -> !candidates.contains(k)).forEach(candidates::add);
        String suggested = ConfigValues.nearest(wanted, candidates).orElse(null);
        if (suggested != null) {
            String module = KNOWN.get(suggested);
            boolean onClasspath = providers.stream().anyMatch(p -> p.name().equals(suggested));
            return "; did you mean " + suggested + "?" + (onClasspath || module == null ? ""
                    : " It is in " + module + ", which is not on the classpath.");
        }
        return "; sandboxkit's drivers are " + String.join(" and ", KNOWN.entrySet().stream()
                .map(e -> e.getKey() + " (" + e.getValue() + ")").toList()) + ".";
    }

    private static String names(List<SandboxDriverProvider> providers) {
        return providers.isEmpty() ? "none"
                : String.join(", ", providers.stream().map(SandboxDriverProvider::name).sorted().toList());
    }

    private static List<SandboxDriverProvider> load(ClassLoader loader, List<String> broken) {
        List<SandboxDriverProvider> providers = new ArrayList<>();
        Iterator<SandboxDriverProvider> it = ServiceLoader.load(SandboxDriverProvider.class, loader).iterator();
        while (true) {
            try {
                if (!it.hasNext()) {
                    break;
                }
                providers.add(it.next());
            } catch (ServiceConfigurationError e) {
                log.warn("Skipping a sandbox driver provider that failed to load: {}", e.getMessage());
                broken.add(e.getMessage());
            }
        }
        return providers;
    }
}
