package dev.sandboxkit.spring.boot.internal;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxListener;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.WarmPool;
import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.spring.boot.SandboxProperties;
import dev.sandboxkit.tools.SandboxTool;
import dev.sandboxkit.tools.SandboxTools;
import dev.sandboxkit.tools.SessionResolver;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns the {@code sandboxkit.*} properties into a spec, a manager and a tool set. Every value is checked here,
 * before the library sees it, so that a failure names the property rather than a builder option.
 */
public final class SandboxFactory {
    private SandboxFactory() {
    }

    /**
     * The default spec from {@code sandboxkit.spec.*}.
     *
     * @param s the spec properties, with an image
     * @return the spec
     * @throws SandboxConfigurationException naming the property, if a value is invalid
     */
    public static SandboxSpec spec(SandboxProperties.Spec s) {
        String p = "sandboxkit.spec.";
        SandboxSpec.Builder b = SandboxSpec.builder()
                .image(s.getImage())
                .env(s.getEnv())
                .user(s.getUser())
                .network(s.getNetwork())
                .memoryBytes(Check.bytes(s.getMemory(), p + "memory", 0))
                .tmpSizeBytes(Check.bytes(s.getTmpSize(), p + "tmp-size", 0))
                .pidsLimit(Check.atLeast(s.getPidsLimit(), 0, p + "pids-limit"))
                .readOnlyRootFilesystem(s.isReadOnlyRootFilesystem())
                .pullPolicy(s.getPullPolicy())
                .ephemeral(s.isEphemeral())
                .execMode(s.getExecMode());
        if (s.getCpus() < 0 || Double.isNaN(s.getCpus())) {
            throw Check.invalid(p + "cpus", "it must be 0 or more, got " + s.getCpus());
        }
        b.cpus(s.getCpus());
        s.getAddCapabilities().forEach(b::addCapability);
        s.getLabels().forEach(b::label);
        if (s.getMaxLifetime() != null) {
            b.maxLifetime(Check.positive(s.getMaxLifetime(), p + "max-lifetime"));
        }
        if (s.getPostCreate() != null && !s.getPostCreate().isBlank()) {
            b.postCreate(ExecRequest.shell(s.getPostCreate())
                    .withTimeout(Check.wholeSeconds(s.getPostCreateTimeout(), p + "post-create-timeout")));
        }
        if (s.getHttpProxy() != null || s.getHttpsProxy() != null) {
            b.proxy(new SandboxSpec.Proxy(s.getHttpProxy(), s.getHttpsProxy(), s.getNoProxy()));
        } else if (s.getNoProxy() != null) {
            throw Check.invalid(p + "no-proxy", "it needs sandboxkit.spec.http-proxy or sandboxkit.spec.https-proxy");
        }
        if (s.getExtraCaCertificates() != null) {
            b.extraCaCertificates(read(s.getExtraCaCertificates(), p + "extra-ca-certificates"));
        }
        try {
            return b.build();
        } catch (IllegalArgumentException | NullPointerException e) {
            throw Check.invalid(specProperty(String.valueOf(e.getMessage())), e.getMessage(), e);
        }
    }

    /** The property behind a SandboxSpec complaint, which starts with the name of the field it is about. */
    private static String specProperty(String message) {
        String p = "sandboxkit.spec.";
        for (String[] field : new String[][] {{"image", "image"}, {"user", "user"}, {"network", "network"},
                {"invalid env entry", "env"}, {"env ", "env"}, {"label", "labels"}, {"extraCaCertificates", "extra-ca-certificates"},
                {"a proxy", "http-proxy"}}) {
            if (message.startsWith(field[0])) {
                return p + field[1];
            }
        }
        return p + "*";
    }

    private static String read(org.springframework.core.io.Resource resource, String property) {
        try (InputStream in = resource.getInputStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw Check.invalid(property, "cannot read " + resource.getDescription() + ": " + e.getMessage(), e);
        }
    }

    /**
     * The manager from {@code sandboxkit.*}: built and started now, or, with {@code sandboxkit.fail-fast=false}
     * and the backend down, a manager that starts on first use.
     *
     * @param p           the properties
     * @param backend     the driver and identity
     * @param store       the session store, or {@code null} for the manager's in-memory one
     * @param defaultSpec the default spec (for the warm pool), or {@code null}
     * @param listeners   the application's listeners, possibly none
     * @return the manager
     * @throws SandboxConfigurationException naming the property, if a value is invalid
     * @throws SandboxUnavailableException   if the backend cannot be reached and {@code sandboxkit.fail-fast} is on
     */
    public static SandboxManager manager(SandboxProperties p, SandboxBackend backend, SessionStore store,
                                         SandboxSpec defaultSpec, List<SandboxListener> listeners) {
        SandboxManager.Builder b = SandboxManager.builder()
                .driver(backend.driver())
                .instanceId(backend.instanceId())
                .workspaceRoot(backend.workspaceRoot())
                .idleTimeout(Check.positive(p.getIdleTimeout(), "sandboxkit.idle-timeout"))
                .leaseDuration(Check.positive(p.getLeaseDuration(), "sandboxkit.lease-duration"))
                .reconcileInterval(Check.positive(p.getReconcileInterval(), "sandboxkit.reconcile-interval"))
                .fileLimits(Check.bytes(p.getMaxFileSize(), "sandboxkit.max-file-size", 1),
                        (int) Check.atLeast(p.getMaxFileEntries(), 1, "sandboxkit.max-file-entries"));
        if (p.getFleet() != null) {
            b.fleet(Check.name(p.getFleet(), "sandboxkit.fleet"));
        }
        if (p.getOrphanGrace() != null) {
            b.orphanGrace(Check.positive(p.getOrphanGrace(), "sandboxkit.orphan-grace"));
        }
        if (p.getReaperInterval() != null) {
            b.reaperInterval(Check.positive(p.getReaperInterval(), "sandboxkit.reaper-interval"));
        }
        if (store != null) {
            b.store(store);
        }
        listeners.forEach(b::listener);
        WarmPool pool = warmPool(p.getWarmPool(), defaultSpec);
        if (pool != null) {
            b.warmPool(pool);
        }
        if (!p.isFailFast()) {
            LazySandboxManager lazy = new LazySandboxManager(b::build, backend.instanceId(), backend.driver().name(),
                    Check.positive(p.getIdleTimeout(), "sandboxkit.idle-timeout"));
            lazy.tryStart();
            return lazy;
        }
        try {
            return b.build();
        } catch (SandboxUnavailableException e) {
            throw new SandboxUnavailableException("The sandbox backend cannot be reached (sandboxkit.driver="
                    + backend.driver().name() + "): " + e.getMessage() + " Start it, point the driver at it with "
                    + "sandboxkit.driver-properties.* (for Docker: sandboxkit.driver-properties.docker.host), or set "
                    + "sandboxkit.fail-fast=false to start without it (the health indicator then reports DOWN).", e);
        }
    }

    private static WarmPool warmPool(SandboxProperties.Pool pool, SandboxSpec spec) {
        if (pool.getSize() < 0) {
            throw Check.invalid("sandboxkit.warm-pool.size", "it must be 0 or more, got " + pool.getSize());
        }
        if (pool.getSize() == 0 && pool.getMaxSize() == null) {
            return null;
        }
        if (spec == null) {
            throw Check.invalid("sandboxkit.warm-pool.size", "a warm pool needs the default spec: set "
                    + "sandboxkit.spec.image or define a SandboxSpec bean");
        }
        int max = pool.getMaxSize() != null ? pool.getMaxSize() : Math.max(1, pool.getSize());
        if (max < Math.max(1, pool.getSize())) {
            throw Check.invalid("sandboxkit.warm-pool.max-size", "it must be at least 1 and at least "
                    + "sandboxkit.warm-pool.size (" + pool.getSize() + "), got " + max);
        }
        if (pool.getWaitTimeout() == null || pool.getWaitTimeout().isNegative()) {
            throw Check.invalid("sandboxkit.warm-pool.wait-timeout", "it must not be negative");
        }
        return new WarmPool(spec, pool.getSize(), max, pool.getWhenEmpty(), pool.getWaitTimeout());
    }

    /**
     * The tool set from {@code sandboxkit.tools.*}.
     *
     * @param t        the tool properties
     * @param manager  the manager
     * @param spec     the default spec
     * @param resolver the application's resolver, or {@code null} for the prefixed default
     * @return the tool set
     * @throws SandboxConfigurationException naming the property, if a value is invalid
     */
    public static SandboxTools tools(SandboxProperties.Tools t, SandboxManager manager, SandboxSpec spec,
                                     SessionResolver resolver) {
        String p = "sandboxkit.tools.";
        SandboxTools.Builder b = SandboxTools.builder(manager).spec(spec);
        if (resolver != null) {
            b.resolver(resolver);
        } else {
            try {
                b.resolver(SessionResolver.prefixed(t.getSessionPrefix()));
            } catch (IllegalArgumentException | NullPointerException e) {
                throw Check.invalid(p + "session-prefix", "it must be 1-32 characters from [A-Za-z0-9._-], starting "
                        + "with a letter or digit, got " + (t.getSessionPrefix() == null ? "nothing"
                        : "\"" + t.getSessionPrefix() + "\""), e);
            }
        }
        if (!t.getAllowed().isEmpty()) {
            List<SandboxTool> allowed = new ArrayList<>();
            for (String name : t.getAllowed()) {
                allowed.add(SandboxTool.byName(name.trim()).orElseThrow(() -> Check.invalid(p + "allowed",
                        "no tool named '" + name + "'; the tools are " + String.join(", ",
                                java.util.Arrays.stream(SandboxTool.values()).map(SandboxTool::toolName).toList()))));
            }
            if (t.isReadOnly()) {
                for (SandboxTool tool : allowed) {
                    if (tool.changesWorkspace()) {
                        throw Check.invalid(p + "allowed", tool.toolName() + " changes the workspace, which "
                                + "sandboxkit.tools.read-only=true forbids");
                    }
                }
            }
            b.tools(allowed.toArray(new SandboxTool[0]));
        }
        if (t.isReadOnly()) {
            b.readOnly();
        }
        b.defaultTimeout(Check.wholeSeconds(t.getDefaultTimeout(), p + "default-timeout"))
                .maxTimeout(Check.wholeSeconds(t.getMaxTimeout(), p + "max-timeout"))
                .outputLimit(Check.intBytes(t.getOutputLimit(), p + "output-limit", 256))
                .readLimit(Check.intBytes(t.getReadLimit(), p + "read-limit", 256))
                .writeLimit(Check.bytes(t.getWriteLimit(), p + "write-limit", 1))
                .listLimit((int) Check.atLeast(t.getListLimit(), 1, p + "list-limit"))
                .searchLimit((int) Check.atLeast(t.getSearchLimit(), 1, p + "search-limit"));
        if (t.getDefaultTimeout().compareTo(t.getMaxTimeout()) > 0) {
            throw Check.invalid(p + "default-timeout", Check.show(t.getDefaultTimeout()) + " exceeds "
                    + "sandboxkit.tools.max-timeout (" + Check.show(t.getMaxTimeout()) + ")");
        }
        return b.build();
    }

    /**
     * The default conversation from {@code sandboxkit.tools.default-conversation}, checked.
     *
     * @param t the tool properties
     * @return the conversation, or {@code null} for none
     */
    public static String defaultConversation(SandboxProperties.Tools t) {
        String c = t.getDefaultConversation();
        if (c != null && c.isBlank()) {
            throw Check.invalid("sandboxkit.tools.default-conversation", "it must not be blank (leave it unset for none)");
        }
        return c;
    }
}
