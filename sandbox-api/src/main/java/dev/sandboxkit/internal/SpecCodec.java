package dev.sandboxkit.internal;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.sandboxkit.EgressPolicy;
import dev.sandboxkit.ExecMode;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SnapshotId;
import dev.sandboxkit.WorkspaceTemplate;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Turns a {@link SandboxSpec} into stable text for the store and back, so that any manager sharing the
 * store can resume a session without the caller repeating the spec. Line-based {@code key=value} with
 * URL-encoded values: readable in a database, no JSON dependency. Keys are sorted, so equal specs
 * encode equally and share one fingerprint.
 */
final class SpecCodec {
    private static final String VERSION = "sandboxkit-spec/1";

    /** Bounds of the caches below: a manager usually sees a handful of specs; more only costs re-encoding. */
    static final int MAX_CACHED_SPECS = 1_024;

    /** Decoded specs are shared: thousands of sessions usually use a handful of specs. */
    private final Cache<String, SandboxSpec> decoded = bounded();
    /** One shared copy of each encoded spec and fingerprint, so that 10,000 sessions hold one string each. */
    private final Cache<String, String> interned = bounded();
    /** The encoding and fingerprint of recently seen specs: every acquire needs them, most with an equal spec. */
    private final Cache<SandboxSpec, Encoded> encodings = bounded();

    /** A spec's stored form and its fingerprint, both interned. */
    record Encoded(String text, String fingerprint) {
    }

    private static <K, V> Cache<K, V> bounded() {
        return Caffeine.newBuilder().maximumSize(MAX_CACHED_SPECS).executor(Runnable::run).build();
    }

    /** The spec's encoding and fingerprint, interned. */
    Encoded encoded(SandboxSpec spec) {
        return encodings.get(spec, s -> {
            String text = intern(encode(s));
            return new Encoded(text, intern(fingerprint(text)));
        });
    }

    static String encode(SandboxSpec s) {
        TreeMap<String, String> kv = new TreeMap<>();
        kv.put("image", s.image());
        s.env().forEach((k, v) -> kv.put("env." + k, v));
        if (s.user() != null) {
            kv.put("user", s.user());
        }
        kv.put("network", s.network());
        kv.put("memoryBytes", Long.toString(s.memoryBytes()));
        kv.put("cpus", Double.toString(s.cpus()));
        kv.put("pidsLimit", Long.toString(s.pidsLimit()));
        kv.put("tmpSizeBytes", Long.toString(s.tmpSizeBytes()));
        kv.put("dropAllCapabilities", Boolean.toString(s.dropAllCapabilities()));
        new TreeSet<>(s.addCapabilities()).forEach(c -> kv.put("cap." + c, "add"));
        kv.put("noNewPrivileges", Boolean.toString(s.noNewPrivileges()));
        kv.put("readOnlyRootFilesystem", Boolean.toString(s.readOnlyRootFilesystem()));
        kv.put("init", Boolean.toString(s.init()));
        kv.put("pullPolicy", s.pullPolicy().name());
        s.labels().forEach((k, v) -> kv.put("label." + k, v));
        kv.put("ephemeral", Boolean.toString(s.ephemeral()));
        if (s.managerScoped()) {
            kv.put("managerScoped", "true"); // only when set: older sessions keep their fingerprints
        }
        if (s.maxLifetime() != null) {
            kv.put("maxLifetime", s.maxLifetime().toString());
        }
        ExecRequest hook = s.postCreate();
        if (hook != null) {
            for (int i = 0; i < hook.command().size(); i++) {
                kv.put(String.format("postCreate.arg.%03d", i), hook.command().get(i));
            }
            hook.env().forEach((k, v) -> kv.put("postCreate.env." + k, v));
            if (hook.workingDir() != null) {
                kv.put("postCreate.workingDir", hook.workingDir());
            }
            if (hook.timeout() != null) {
                kv.put("postCreate.timeout", hook.timeout().toString());
            }
        }
        if (s.proxy() != null) {
            putIfSet(kv, "proxy.http", s.proxy().httpProxy());
            putIfSet(kv, "proxy.https", s.proxy().httpsProxy());
            putIfSet(kv, "proxy.no", s.proxy().noProxy());
        }
        putIfSet(kv, "extraCaCertificates", s.extraCaCertificates());
        if (s.execMode() != ExecMode.AUTO) {
            // Only when set: specs encoded before the option existed keep their fingerprint.
            kv.put("execMode", s.execMode().name());
        }
        if (s.runtime() != null) {
            kv.put("runtime", s.runtime()); // only when set: older specs keep their fingerprint
        }
        WorkspaceTemplate template = s.template();
        if (template != null) { // part of the fingerprint: a pool slot or a resume compares specs by it
            if (template.directory() != null) {
                kv.put("template.directory", template.directory().toString());
            } else {
                kv.put("template.snapshot", String.valueOf(template.snapshot()));
            }
        }
        if (s.egress() != null) { // only when set: older specs keep their fingerprint
            putEgress(kv, s.egress());
        }
        StringBuilder b = new StringBuilder(VERSION).append('\n');
        kv.forEach((k, v) -> b.append(enc(k)).append('=').append(enc(v)).append('\n'));
        return b.toString();
    }

    String intern(String text) {
        return interned.get(text, t -> t);
    }

    SandboxSpec decode(String text) {
        return decoded.get(text, SpecCodec::parse);
    }

    static SandboxSpec parse(String text) {
        String[] lines = text.split("\n");
        if (lines.length == 0 || !lines[0].equals(VERSION)) {
            throw new IllegalArgumentException("not an encoded spec (expected " + VERSION + ")");
        }
        SandboxSpec.Builder b = SandboxSpec.builder();
        TreeMap<String, String> hookArgs = new TreeMap<>();
        Map<String, String> hookEnv = new TreeMap<>();
        String[] hookDir = new String[1];
        Duration[] hookTimeout = new Duration[1];
        String[] proxy = new String[3];
        EgressReader egress = new EgressReader();
        for (int i = 1; i < lines.length; i++) {
            if (lines[i].isEmpty()) {
                continue;
            }
            int eq = lines[i].indexOf('=');
            String k = dec(lines[i].substring(0, eq));
            String v = dec(lines[i].substring(eq + 1));
            if (k.startsWith("env.")) {
                b.env(k.substring(4), v);
            } else if (k.startsWith("label.")) {
                b.label(k.substring(6), v);
            } else if (k.startsWith("cap.")) {
                b.addCapability(k.substring(4));
            } else if (k.startsWith("postCreate.arg.")) {
                hookArgs.put(k, v);
            } else if (egress.accept(k, v)) {
                continue;
            } else if (k.startsWith("postCreate.env.")) {
                hookEnv.put(k.substring("postCreate.env.".length()), v);
            } else {
                switch (k) {
                    case "image" -> b.image(v);
                    case "user" -> b.user(v);
                    case "network" -> b.network(v);
                    case "memoryBytes" -> b.memoryBytes(Long.parseLong(v));
                    case "cpus" -> b.cpus(Double.parseDouble(v));
                    case "pidsLimit" -> b.pidsLimit(Long.parseLong(v));
                    case "tmpSizeBytes" -> b.tmpSizeBytes(Long.parseLong(v));
                    case "dropAllCapabilities" -> b.dropAllCapabilities(Boolean.parseBoolean(v));
                    case "noNewPrivileges" -> b.noNewPrivileges(Boolean.parseBoolean(v));
                    case "readOnlyRootFilesystem" -> b.readOnlyRootFilesystem(Boolean.parseBoolean(v));
                    case "init" -> b.init(Boolean.parseBoolean(v));
                    case "pullPolicy" -> b.pullPolicy(PullPolicy.valueOf(v));
                    case "ephemeral" -> b.ephemeral(Boolean.parseBoolean(v));
                    case "managerScoped" -> b.managerScoped(Boolean.parseBoolean(v));
                    case "maxLifetime" -> b.maxLifetime(Duration.parse(v));
                    case "postCreate.workingDir" -> hookDir[0] = v;
                    case "postCreate.timeout" -> hookTimeout[0] = Duration.parse(v);
                    case "proxy.http" -> proxy[0] = v;
                    case "proxy.https" -> proxy[1] = v;
                    case "proxy.no" -> proxy[2] = v;
                    case "extraCaCertificates" -> b.extraCaCertificates(v);
                    case "execMode" -> b.execMode(ExecMode.valueOf(v));
                    case "runtime" -> b.runtime(v);
                    case "template.directory" -> b.template(WorkspaceTemplate.directory(Path.of(v)));
                    case "template.snapshot" -> b.template(WorkspaceTemplate.snapshot(new SnapshotId(v)));
                    default -> { } // written by a newer version: ignore rather than fail a resume
                }
            }
        }
        if (!hookArgs.isEmpty()) {
            b.postCreate(ExecRequest.of(List.copyOf(hookArgs.values())).withEnv(hookEnv).withWorkingDir(hookDir[0])
                    .withTimeout(hookTimeout[0]));
        }
        if (egress.on) {
            b.egress(egress.build());
        }
        if (proxy[0] != null || proxy[1] != null) {
            b.proxy(new SandboxSpec.Proxy(proxy[0], proxy[1], proxy[2]));
        }
        return b.build();
    }

    /** An egress policy alone, as {@code key=value} lines: how a session stores the one updateEgress set. */
    static String encodeEgress(EgressPolicy policy) {
        TreeMap<String, String> kv = new TreeMap<>();
        putEgress(kv, policy);
        StringBuilder b = new StringBuilder();
        kv.forEach((k, v) -> b.append(enc(k)).append('=').append(enc(v)).append('\n'));
        return b.toString();
    }

    static EgressPolicy decodeEgress(String text) {
        EgressReader r = new EgressReader();
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                r.accept(dec(line.substring(0, eq)), dec(line.substring(eq + 1)));
            }
        }
        return r.build();
    }

    private static void putEgress(Map<String, String> kv, EgressPolicy policy) {
        kv.put("egress", "on");
        List<String> rules = policy.rules();
        for (int i = 0; i < rules.size(); i++) {
            kv.put(String.format("egress.rule.%06d", i), rules.get(i)); // zero-padded: the keys sort in rule order
        }
        // Header values are credentials: stored, like the rest of the session, where only the host reads them.
        policy.headers().forEach((host, headers) -> headers.forEach((name, value) ->
                kv.put("egress.header." + host + " " + name, value)));
        policy.tlsUpstreamHosts().forEach(host -> kv.put("egress.tls." + host, "true"));
    }

    /** Collects an encoded egress policy's keys. */
    private static final class EgressReader {
        final TreeMap<String, String> rules = new TreeMap<>();
        final EgressPolicy.Builder builder = EgressPolicy.builder();
        boolean on;

        boolean accept(String k, String v) {
            if (k.equals("egress")) {
                on = true;
            } else if (k.startsWith("egress.rule.")) {
                rules.put(k, v);
            } else if (k.startsWith("egress.header.")) {
                String[] hostAndName = k.substring("egress.header.".length()).split(" ", 2);
                builder.header(hostAndName[0], hostAndName[1], v);
            } else if (k.startsWith("egress.tls.")) {
                builder.tlsUpstream(k.substring("egress.tls.".length()));
            } else {
                return false;
            }
            return true;
        }

        EgressPolicy build() {
            rules.values().forEach(builder::allow);
            return builder.build();
        }
    }

    private static void putIfSet(Map<String, String> kv, String key, String value) {
        if (value != null) {
            kv.put(key, value);
        }
    }

    static String fingerprint(String encoded) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(encoded.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(hash, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always present", e);
        }
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String dec(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }
}
