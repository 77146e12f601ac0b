package dev.sandboxkit.internal;

import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxSpec;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Turns a {@link SandboxSpec} into stable text for the store and back, so that any manager sharing the
 * store can resume a session without the caller repeating the spec. Line-based {@code key=value} with
 * URL-encoded values: readable in a database, no JSON dependency. Keys are sorted, so equal specs
 * encode equally and share one fingerprint.
 */
final class SpecCodec {
    private static final String VERSION = "sandboxkit-spec/1";

    /** Decoded specs are shared: thousands of sessions usually use a handful of specs. */
    private final Map<String, SandboxSpec> decoded = new ConcurrentHashMap<>();

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
        if (s.maxLifetime() != null) {
            kv.put("maxLifetime", s.maxLifetime().toString());
        }
        StringBuilder b = new StringBuilder(VERSION).append('\n');
        kv.forEach((k, v) -> b.append(enc(k)).append('=').append(enc(v)).append('\n'));
        return b.toString();
    }

    SandboxSpec decode(String text) {
        return decoded.computeIfAbsent(text, SpecCodec::parse);
    }

    static SandboxSpec parse(String text) {
        String[] lines = text.split("\n");
        if (lines.length == 0 || !lines[0].equals(VERSION)) {
            throw new IllegalArgumentException("not an encoded spec (expected " + VERSION + ")");
        }
        SandboxSpec.Builder b = SandboxSpec.builder();
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
                    case "maxLifetime" -> b.maxLifetime(Duration.parse(v));
                    default -> { } // written by a newer version: ignore rather than fail a resume
                }
            }
        }
        return b.build();
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
