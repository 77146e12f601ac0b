package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SandboxDriverProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * Finds the driver: an explicit name, then the {@code sandboxkit.driver} system property, then the
 * available provider with the highest priority. A broken provider is skipped, not fatal; when nothing
 * fits, the error lists every candidate and why it was passed over.
 */
final class DriverResolver {
    static final String DRIVER_PROPERTY = "sandboxkit.driver";
    private static final Logger log = LoggerFactory.getLogger(DriverResolver.class);

    private DriverResolver() {
    }

    static SandboxDriver create(String requestedName, DriverContext context, ClassLoader loader) {
        List<String> report = new ArrayList<>();
        List<SandboxDriverProvider> providers = load(loader, report);
        String name = requestedName != null ? requestedName : System.getProperty(DRIVER_PROPERTY);
        if (name != null) {
            for (SandboxDriverProvider p : providers) {
                if (p.name().equals(name)) {
                    return p.create(context);
                }
            }
            providers.forEach(p -> report.add(p.name() + " (" + p.getClass().getName() + ")"));
            throw new SandboxConfigurationException("no sandbox driver named '" + name + "'"
                    + (requestedName == null ? " (from -D" + DRIVER_PROPERTY + ")" : "")
                    + "; candidates: " + describe(report) + ". Add the driver module (for example "
                    + "dev.sandboxkit:sandbox-" + name + ") to the classpath.");
        }
        providers.sort(Comparator.comparingInt(SandboxDriverProvider::priority).reversed());
        for (SandboxDriverProvider p : providers) {
            Optional<String> reason = p.unavailableReason(context);
            if (reason.isEmpty()) {
                log.debug("Using sandbox driver {} (priority {})", p.name(), p.priority());
                return p.create(context);
            }
            report.add(p.name() + ": " + reason.get());
        }
        throw new SandboxConfigurationException("no usable sandbox driver; candidates: " + describe(report)
                + ". Add dev.sandboxkit:sandbox-docker or sandbox-kubernetes to the classpath, or pass a driver "
                + "to SandboxManager.builder().driver(..).");
    }

    private static List<SandboxDriverProvider> load(ClassLoader loader, List<String> report) {
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
                report.add("broken provider: " + e.getMessage());
            }
        }
        return providers;
    }

    private static String describe(List<String> report) {
        return report.isEmpty() ? "none found on the classpath" : String.join("; ", report);
    }
}
