package dev.sandboxkit.kubernetes;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Kubernetes names and label values derived from session ids.
 *
 * <p>Session ids allow {@code [A-Za-z0-9._:@+=-]} and up to 128 characters; label values allow
 * {@code [A-Za-z0-9._-]}, at most 63 characters, alphanumeric at both ends. An id that is already a
 * valid label value is used unchanged. Otherwise invalid characters become {@code _}, the result is cut
 * to 52 characters, trimmed to alphanumeric ends and suffixed with {@code -} and ten hex digits of the
 * SHA-256 of the exact id, so two ids that sanitise alike still get different values. The exact id is
 * always kept in the {@value dev.sandboxkit.spi.SandboxLabels#SESSION} annotation.
 */
final class Names {
    static final int MAX_LABEL_VALUE = 63;
    private static final int HASH_CHARS = 10;
    private static final int SANITISED_PREFIX = MAX_LABEL_VALUE - 1 - HASH_CHARS;
    private static final int SLUG_CHARS = 40;
    private static final Pattern LABEL_VALUE = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?");
    private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([a-z0-9-]*[a-z0-9])?");
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final char[] ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();

    private Names() {
    }

    /** Whether a string can be used as a label value as it is (empty values are not used here). */
    static boolean isValidLabelValue(String value) {
        return value != null && !value.isEmpty() && value.length() <= MAX_LABEL_VALUE
                && LABEL_VALUE.matcher(value).matches();
    }

    /** Whether a string is a DNS-1123 label (pod, PVC and policy names here). */
    static boolean isDnsLabel(String value) {
        return value != null && !value.isEmpty() && value.length() <= MAX_LABEL_VALUE
                && DNS_LABEL.matcher(value).matches();
    }

    /** The session label value: the id itself when valid, otherwise a sanitised prefix plus a hash. */
    static String sessionLabel(String sessionId) {
        if (isValidLabelValue(sessionId)) {
            return sessionId;
        }
        StringBuilder sb = new StringBuilder(sessionId.length());
        for (int i = 0; i < sessionId.length(); i++) {
            char c = sessionId.charAt(i);
            sb.append(isAlnum(c) || c == '.' || c == '_' || c == '-' ? c : '_');
        }
        String prefix = trimToAlnum(sb.length() > SANITISED_PREFIX ? sb.substring(0, SANITISED_PREFIX) : sb.toString());
        String hash = hash(sessionId);
        return prefix.isEmpty() ? hash : prefix + "-" + hash;
    }

    /** Pod name: readable prefix from the id plus a random suffix, so a resumed session never reuses a name. */
    static String podName(String sessionId) {
        return "sbx-" + slug(sessionId) + "-" + random(8);
    }

    /** PVC name: deterministic, so that {@code createWorkspace} is idempotent for a session. */
    static String claimName(String sessionId) {
        return "sbx-ws-" + slug(sessionId) + "-" + hash(sessionId);
    }

    /** The per-pod NetworkPolicy's name. */
    static String networkPolicyName(String podName) {
        return podName + "-net";
    }

    /** A random exec marker value: 16 hex digits. */
    static String execId() {
        byte[] b = new byte[8];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /** Lower-case, DNS-safe, at most 40 characters; "session" if nothing is left. */
    static String slug(String id) {
        StringBuilder sb = new StringBuilder();
        boolean dash = false;
        for (int i = 0; i < id.length() && sb.length() < SLUG_CHARS; i++) {
            char c = Character.toLowerCase(id.charAt(i));
            if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
                sb.append(c);
                dash = false;
            } else if (!dash && sb.length() > 0) {
                sb.append('-');
                dash = true;
            }
        }
        while (sb.length() > 0 && sb.charAt(sb.length() - 1) == '-') {
            sb.setLength(sb.length() - 1);
        }
        return sb.length() == 0 ? "session" : sb.toString();
    }

    static String hash(String s) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest).substring(0, HASH_CHARS);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }

    private static String random(int n) {
        char[] out = new char[n];
        for (int i = 0; i < n; i++) {
            out[i] = ALNUM[RANDOM.nextInt(ALNUM.length)];
        }
        return new String(out);
    }

    private static String trimToAlnum(String s) {
        int start = 0;
        int end = s.length();
        while (start < end && !isAlnum(s.charAt(start))) {
            start++;
        }
        while (end > start && !isAlnum(s.charAt(end - 1))) {
            end--;
        }
        return s.substring(start, end);
    }

    private static boolean isAlnum(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    }

    static String lower(String s) {
        return s.toLowerCase(Locale.ROOT);
    }
}
