package dev.sandboxkit.internal;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.ComputeDriver;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Per-container set-up (ADR-031's "injected proxy and CA settings, post-create results"): run once in every
 * new container, resumes and pool slots included, before it is handed out. Also computes the environment
 * every exec gets from the spec, once per spec rather than once per exec.
 */
final class ContainerSetup {
    static final String CA_DIR = "/tmp/.sandboxkit";
    /** For a post-create hook that sets no timeout of its own. */
    static final Duration POST_CREATE_TIMEOUT = Duration.ofMinutes(10);
    static final String ATTR_EXIT = "postCreate.exitCode";
    static final String ATTR_OUTPUT = "postCreate.output";
    static final String ATTR_MILLIS = "postCreate.millis";
    private static final int OUTPUT_KEPT = 4096;
    private static final Duration CA_TIMEOUT = Duration.ofSeconds(30);
    /** Writes the extra PEM (stdin) and a full bundle = the image's bundle + the extra certificates. */
    private static final String CA_SCRIPT = "umask 022 && mkdir -p " + CA_DIR + " && cat > " + CA_DIR + "/extra-ca.pem"
            + " && : > " + CA_DIR + "/ca-bundle.pem"
            + " && for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem; do"
            + " if [ -f \"$f\" ]; then cat \"$f\" >> " + CA_DIR + "/ca-bundle.pem; break; fi; done"
            + " && cat " + CA_DIR + "/extra-ca.pem >> " + CA_DIR + "/ca-bundle.pem";

    private final Map<SandboxSpec, Map<String, String>> envBySpec = new ConcurrentHashMap<>();

    /**
     * The environment every exec gets: spec env, proxy or egress variables, CA variables (per-exec env wins later).
     * {@code egress} is whether the session has an egress endpoint now, which updateEgress may have made differ
     * from its spec.
     */
    Map<String, String> execEnvironment(SandboxSpec spec, boolean egress) {
        if (egress != (spec.egress() != null)) {
            return environment(spec, egress); // rare: not worth a cache entry
        }
        return envBySpec.computeIfAbsent(spec, s -> environment(s, egress));
    }

    private static Map<String, String> environment(SandboxSpec s, boolean egress) {
        Map<String, String> env = new LinkedHashMap<>();
        if (s.proxy() != null) {
            env.putAll(s.proxy().environment());
        }
        if (egress) {
            env.putAll(Egress.environment());
        }
        if (s.extraCaCertificates() != null) {
            String bundle = CA_DIR + "/ca-bundle.pem";
            env.put("SSL_CERT_FILE", bundle);
            env.put("REQUESTS_CA_BUNDLE", bundle);
            env.put("CURL_CA_BUNDLE", bundle);
            env.put("GIT_SSL_CAINFO", bundle);
            env.put("PIP_CERT", bundle);
            env.put("NODE_EXTRA_CA_CERTS", CA_DIR + "/extra-ca.pem");
        }
        env.putAll(s.env());
        return Map.copyOf(env);
    }

    static ExecRequest withEnvironment(Map<String, String> base, ExecRequest request) {
        if (base.isEmpty()) {
            return request;
        }
        Map<String, String> merged = new HashMap<>(base);
        merged.putAll(request.env());
        return request.withEnv(merged);
    }

    /**
     * Runs the set-up in a freshly started container and returns what to store on the session. {@code egress}:
     * whether the session's egress endpoint runs (it starts first, so that the hook can install packages).
     *
     * @throws SandboxAcquireException if a step fails; the caller removes the container
     */
    Map<String, String> prepare(ComputeDriver compute, String sessionId, String sandboxId, SandboxSpec spec,
                                Map<String, Duration> phases, boolean egress) {
        if (spec.extraCaCertificates() == null && spec.postCreate() == null) {
            return Map.of();
        }
        long t0 = System.nanoTime();
        Map<String, String> attributes = new LinkedHashMap<>();
        if (spec.extraCaCertificates() != null) {
            ExecResult ca = compute.exec(sandboxId, ExecRequest.shell(CA_SCRIPT)
                    .withStdin(spec.extraCaCertificates().getBytes(StandardCharsets.UTF_8)).withTimeout(CA_TIMEOUT));
            if (!ca.isSuccess()) {
                throw new SandboxAcquireException("session " + sessionId + ": could not install the extra CA "
                        + "certificates under " + CA_DIR + " (exit " + ca.exitCode() + ", " + ca.termination()
                        + "): " + tail(ca));
            }
        }
        ExecRequest hook = spec.postCreate();
        if (hook != null) {
            if (hook.timeout() == null) {
                hook = hook.withTimeout(POST_CREATE_TIMEOUT); // a hung hook must not hang the acquire
            }
            ExecResult r = compute.exec(sandboxId, withEnvironment(execEnvironment(spec, egress), hook));
            attributes.put(ATTR_EXIT, Integer.toString(r.exitCode()));
            attributes.put(ATTR_OUTPUT, tail(r));
            attributes.put(ATTR_MILLIS, Long.toString(r.duration().toMillis()));
            if (!r.isSuccess()) {
                throw new SandboxAcquireException("session " + sessionId + ": post-create hook " + hook.command()
                        + " failed (exit " + r.exitCode() + (r.timedOut() ? ", timed out" : "") + "): " + tail(r));
            }
        }
        phases.put(SandboxEvent.PHASE_POST_CREATE, Duration.ofNanos(System.nanoTime() - t0));
        return attributes;
    }

    private static String tail(ExecResult r) {
        String out = (r.stdout() + r.stderr()).strip();
        return out.length() <= OUTPUT_KEPT ? out : "..." + out.substring(out.length() - OUTPUT_KEPT);
    }
}
