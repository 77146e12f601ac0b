package dev.sandboxkit.spring.boot.internal;

import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.spi.ConfigValues;
import dev.sandboxkit.spi.SandboxDriverProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.Resource;
import org.springframework.core.io.ResourceLoader;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Binds the {@code sandboxkit.*} properties onto a {@link SandboxConfig}, key by key from
 * {@link SandboxConfig#keys()}: whatever the core can be told, Boot can, with Boot's relaxed names, its property
 * sources and their precedence, and no default of the starter's own (a property that is absent leaves the core's
 * default). A property under {@code sandboxkit.} that is neither a key of the core, nor a driver setting, nor one of
 * the Boot-only options ({@link #BOOT_ONLY}) fails the startup, naming it and the nearest key.
 */
public final class SandboxConfigBinder {
    /**
     * The starter's own options (bound by {@code SandboxProperties}), without the prefix: what enables beans and
     * chooses the session store; none of them is a setting of the core.
     */
    public static final List<String> BOOT_ONLY = List.of("enabled", "fail-fast", "store", "store-file",
            "store-auto-migrate", "tools.enabled", "tools.rethrow-sandbox-exceptions",
            "chat-client.conversation-advisor", "chat-client.default-tools");
    /** The starter's older name for driver settings: {@code sandboxkit.driver-properties.docker.host}. */
    public static final String LEGACY_DRIVER_SETTINGS = "driver-properties";

    private static final String PREFIX_LEGACY = SandboxConfig.PREFIX + LEGACY_DRIVER_SETTINGS + ".";
    private static final Logger log = LoggerFactory.getLogger(SandboxConfigBinder.class);
    private static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of("sandboxkit");
    /** Parts of a key that name a group of the core's or the starter's, not a driver. */
    private static final Set<String> GROUPS = Set.of("spec", "warm-pool", "tools", "chat-client",
            LEGACY_DRIVER_SETTINGS);
    /** A resource location as Spring writes it ({@code classpath:ca.pem}, {@code file:/etc/ca.pem}), not PEM text. */
    private static final Pattern RESOURCE = Pattern.compile("(classpath\\*?|file|https?|jar):.*", Pattern.DOTALL);

    private SandboxConfigBinder() {
    }

    /**
     * The configuration the environment describes.
     *
     * @param environment the application's environment
     * @param resources   resolves {@code spec.extra-ca-certificates} given as a resource location
     * @return the configuration: the core's defaults, then the properties
     * @throws SandboxConfigurationException naming the property, if one is unknown or its value invalid
     */
    public static SandboxConfig bind(Environment environment, ResourceLoader resources) {
        Binder binder = Binder.get(environment);
        SandboxConfig config = new SandboxConfig();
        checkNames(environment);
        // The older name first, so that the newer one wins when both name a key.
        legacyDriverSettings(environment).forEach((key, value) ->
                set(environment, config, key, value, PREFIX_LEGACY + key));
        for (SandboxConfig.Key key : SandboxConfig.keys()) {
            String name = key.name();
            if (name.endsWith(".*")) {
                String group = name.substring(0, name.length() - 2);
                binder.bind(SandboxConfig.PREFIX + group, Bindable.mapOf(String.class, String.class))
                        .ifBound(entries -> new TreeMap<>(entries).forEach((entry, value) ->
                                set(environment, config, group + "." + entry, value, key.property())));
            } else if (key.type().equals("list")) { // comma-separated, or indexed: tools.allowed[0]
                binder.bind(key.property(), Bindable.listOf(String.class)).ifBound(values ->
                        set(environment, config, name, String.join(",", values), key.property()));
            } else {
                binder.bind(key.property(), String.class).ifBound(value -> set(environment, config, name,
                        name.equals("spec.extra-ca-certificates") ? pem(value, resources, key.property()) : value,
                        key.property()));
            }
        }
        driverKeys(environment).forEach((name, driverKey) -> binder.bind(name, Bindable.of(String.class))
                .ifBound(value -> set(environment, config, driverKey, value, SandboxConfig.PREFIX + driverKey)));
        return config;
    }

    /**
     * The driver settings given under the older name, {@code sandboxkit.driver-properties.<key>}.
     *
     * @param environment the application's environment
     * @return key to value
     */
    public static Map<String, String> legacyDriverSettings(Environment environment) {
        return Binder.get(environment).bind(SandboxConfig.PREFIX + LEGACY_DRIVER_SETTINGS,
                Bindable.mapOf(String.class, String.class)).map(m -> (Map<String, String>) new TreeMap<>(m))
                .orElse(Map.of());
    }

    private static void set(Environment environment, SandboxConfig config, String key, String value, String property) {
        try {
            config.set(key, value);
        } catch (SandboxConfigurationException e) {
            String origin = origin(environment, property);
            String message = e.getMessage().startsWith(SandboxConfig.PREFIX) || e.getMessage().startsWith(property)
                    ? e.getMessage() : property + ": " + e.getMessage();
            throw new SandboxConfigurationException(message + (origin == null ? "" : " (" + origin + ")"), e);
        }
    }

    /** Where a property was written, when its source tracks it: a file and line. */
    private static String origin(Environment environment, String property) {
        ConfigurationPropertyName name = ConfigurationPropertyName.adapt(property, '.');
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            ConfigurationProperty p = source.getConfigurationProperty(name);
            if (p != null) {
                return p.getOrigin() == null ? null : "from " + p.getOrigin();
            }
        }
        return null;
    }

    /** {@code spec.extra-ca-certificates} as PEM text when it is given as a resource location (the starter's older form). */
    private static String pem(String value, ResourceLoader resources, String property) {
        if (!RESOURCE.matcher(value.trim()).matches()) {
            return value; // PEM text or a file path: the core reads it
        }
        Resource resource = resources.getResource(value.trim());
        try (InputStream in = resource.getInputStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new SandboxConfigurationException(property + ": cannot read " + resource.getDescription() + ": "
                    + e.getMessage(), e);
        }
    }

    // ------------------------------------------------------------------ names

    /**
     * Every property name under {@code sandboxkit.} in the environment's enumerable sources, in precedence order, and
     * whether it comes from environment variables (where {@code SANDBOXKIT_IDLE_TIMEOUT} is Boot's legacy spelling
     * of {@code sandboxkit.idle-timeout}, not a driver setting {@code idle.timeout}).
     */
    private static Map<ConfigurationPropertyName, Boolean> names(Environment environment) {
        Map<ConfigurationPropertyName, Boolean> names = new LinkedHashMap<>();
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (source instanceof IterableConfigurationPropertySource iterable) {
                boolean variables = source.getUnderlyingSource() instanceof SystemEnvironmentPropertySource;
                iterable.filter(ROOT::isAncestorOf).stream().forEach(n -> names.putIfAbsent(n, variables));
            }
        }
        return names;
    }

    /** What a name is: one of the core's keys, a Boot-only option, a driver setting, or unknown. */
    private enum Kind { KEY, BOOT_ONLY, DRIVER, UNKNOWN }

    private static Kind kind(ConfigurationPropertyName name, boolean variable) {
        for (SandboxConfig.Key key : SandboxConfig.keys()) {
            if (key.name().endsWith(".*")) {
                if (of(key.name().substring(0, key.name().length() - 2)).isAncestorOf(name)) {
                    return Kind.KEY;
                }
            } else if (of(key.name()).equals(name)
                    || key.type().equals("list") && of(key.name()).isParentOf(name) && name.isLastElementIndexed()) {
                return Kind.KEY;
            }
        }
        for (String option : BOOT_ONLY) {
            if (of(option).equals(name)) {
                return Kind.BOOT_ONLY;
            }
        }
        if (of(LEGACY_DRIVER_SETTINGS).isAncestorOf(name)) {
            return Kind.DRIVER;
        }
        // sandboxkit.docker.host: a part, then a setting of that driver's, as the core has it.
        if (name.getNumberOfElements() < 3) {
            return Kind.UNKNOWN;
        }
        if (variable) {
            String squashed = squash(written(name).substring(SandboxConfig.PREFIX.length()));
            if (SandboxConfig.keys().stream().anyMatch(k -> squash(k.name()).equals(squashed))) {
                return Kind.KEY;
            }
            if (BOOT_ONLY.stream().anyMatch(o -> squash(o).equals(squashed))) {
                return Kind.BOOT_ONLY;
            }
        }
        String first = name.getElement(1, Form.DASHED);
        if (GROUPS.contains(first) || SandboxConfig.keys().stream()
                .anyMatch(k -> !k.name().endsWith(".*") && of(k.name()).isAncestorOf(name))) {
            return Kind.UNKNOWN; // spec.imag, tools.allowd, idle-timeout.x
        }
        return Kind.DRIVER;
    }

    private static String squash(String key) {
        return key.toLowerCase(Locale.ROOT).replaceAll("[-._]", "");
    }

    private static ConfigurationPropertyName of(String key) {
        return ConfigurationPropertyName.of(SandboxConfig.PREFIX + key);
    }

    /** Fails on the first unknown name; a driver setting of a driver that is not on the class path is logged. */
    private static void checkNames(Environment environment) {
        Set<String> drivers = null;
        for (Map.Entry<ConfigurationPropertyName, Boolean> e : names(environment).entrySet()) {
            ConfigurationPropertyName name = e.getKey();
            Kind kind = kind(name, e.getValue());
            String written = written(name);
            String key = written.substring(SandboxConfig.PREFIX.length());
            if (kind == Kind.UNKNOWN) {
                String origin = origin(environment, written);
                throw new SandboxConfigurationException(written + ": no such setting" + suggestion(key)
                        + (origin == null ? "" : " (" + origin + ")"));
            }
            if (kind == Kind.DRIVER && !of(LEGACY_DRIVER_SETTINGS).isAncestorOf(name)) {
                if (drivers == null) {
                    drivers = driverNames();
                }
                String driver = name.getElement(1, Form.ORIGINAL);
                if (!drivers.contains(driver)) {
                    String nearest = suggestion(key);
                    if (nearest.startsWith("; did you mean")) { // sandboxkit.spc.image, SANDBOXKIT_IDLE_TIMEOUT
                        throw new SandboxConfigurationException(written + ": no such setting" + nearest
                                + " (it would be a setting of a driver named '" + driver + "', and there is none)");
                    }
                    log.debug("{} is taken as a setting of driver '{}', which is not on the class path", written,
                            driver);
                }
            }
        }
    }

    /** The driver settings' names and keys ({@code docker.host}), without the older {@code driver-properties.} ones. */
    private static Map<ConfigurationPropertyName, String> driverKeys(Environment environment) {
        Map<ConfigurationPropertyName, String> keys = new LinkedHashMap<>();
        for (Map.Entry<ConfigurationPropertyName, Boolean> e : names(environment).entrySet()) {
            ConfigurationPropertyName name = e.getKey();
            if (kind(name, e.getValue()) == Kind.DRIVER && !of(LEGACY_DRIVER_SETTINGS).isAncestorOf(name)) {
                keys.putIfAbsent(name, written(name).substring(SandboxConfig.PREFIX.length()));
            }
        }
        return keys;
    }

    /** The name as it was written (its original case), indexes in brackets. */
    private static String written(ConfigurationPropertyName name) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < name.getNumberOfElements(); i++) {
            String element = name.getElement(i, Form.ORIGINAL);
            if (name.isNumericIndex(i)) {
                b.append('[').append(element).append(']');
            } else {
                b.append(b.isEmpty() ? "" : ".").append(element);
            }
        }
        return b.toString();
    }

    private static Set<String> driverNames() {
        Set<String> names = new LinkedHashSet<>();
        var it = ServiceLoader.load(SandboxDriverProvider.class, SandboxConfigBinder.class.getClassLoader()).iterator();
        while (true) {
            try {
                if (!it.hasNext()) {
                    return names;
                }
                names.add(it.next().name());
            } catch (ServiceConfigurationError e) {
                // a broken provider: the driver resolution reports it
            }
        }
    }

    /** "; did you mean sandboxkit.idle-timeout?" for a near miss of a key or Boot-only option, else where they are listed. */
    static String suggestion(String key) {
        String wanted = key.toLowerCase(Locale.ROOT).replace('_', '-');
        List<String> all = new ArrayList<>();
        SandboxConfig.keys().forEach(k -> all.add(k.name().endsWith(".*") ? k.name().substring(0, k.name().length() - 2)
                : k.name()));
        all.addAll(BOOT_ONLY);
        // Relaxed names lose the dashes (idleTimout, SANDBOXKIT_IDLETIMOUT): compare those without them too.
        Map<String, String> withoutDashes = new LinkedHashMap<>();
        all.forEach(c -> withoutDashes.putIfAbsent(c.replace("-", ""), c));
        return ConfigValues.nearest(wanted, all)
                .or(() -> ConfigValues.nearest(wanted.replace("-", ""), withoutDashes.keySet()).map(withoutDashes::get))
                .map(best -> "; did you mean " + SandboxConfig.PREFIX + best + "?")
                .orElse("; the properties are listed in docs/configuration.md (SandboxConfig.keys() and the starter's own)");
    }
}
