package dev.sandboxkit.mcp.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Who may talk to the HTTP endpoint.
 *
 * @param token          the bearer token every request must carry, or {@code null} for none (loopback only)
 * @param loopbackHosts  whether the {@code Host} header must name a loopback address (the server is bound to one):
 *                       with the {@code Origin} check this defeats DNS rebinding
 * @param allowedOrigins browser origins allowed besides none at all: exact ({@code https://app.example}) or with
 *                       any port ({@code http://localhost:*}); requests without {@code Origin} (non-browser
 *                       clients) are always allowed
 */
public record HttpAccess(String token, boolean loopbackHosts, List<String> allowedOrigins) {
    /** The default origins: pages served from this machine. */
    public static final List<String> LOOPBACK_ORIGINS = List.of("http://localhost:*", "http://127.0.0.1:*",
            "http://[::1]:*", "https://localhost:*", "https://127.0.0.1:*", "https://[::1]:*");

    /**
     * Validates and copies.
     *
     * @param token          the bearer token, or {@code null}
     * @param loopbackHosts  whether {@code Host} must be loopback
     * @param allowedOrigins the allowed browser origins
     */
    public HttpAccess {
        if (token != null && token.isBlank()) {
            throw new IllegalArgumentException("token must not be blank");
        }
        allowedOrigins = List.copyOf(allowedOrigins);
        for (String o : allowedOrigins) {
            Objects.requireNonNull(o, "allowedOrigins element");
            if (!o.startsWith("http://") && !o.startsWith("https://") || o.endsWith("/")) {
                throw new IllegalArgumentException("an allowed origin is scheme://host[:port] or scheme://host:*, got: "
                        + o);
            }
        }
    }

    /**
     * Whether a browser origin is allowed.
     *
     * @param origin the {@code Origin} header
     * @return {@code true} if listed
     */
    public boolean originAllowed(String origin) {
        String o = origin.trim().toLowerCase(Locale.ROOT);
        for (String allowed : allowedOrigins) {
            String a = allowed.toLowerCase(Locale.ROOT);
            if (a.endsWith(":*")) {
                String base = a.substring(0, a.length() - 2);
                if (o.equals(base) || o.startsWith(base + ":") && o.substring(base.length() + 1).chars()
                        .allMatch(Character::isDigit)) {
                    return true;
                }
            } else if (o.equals(a)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a {@code Host} header names a loopback address, with any port.
     *
     * @param host the header, or {@code null}
     * @return {@code true} for {@code localhost}, {@code 127.x.y.z} and {@code [::1]}
     */
    public static boolean loopbackHost(String host) {
        if (host == null || host.isBlank()) {
            return false;
        }
        String h = host.trim().toLowerCase(Locale.ROOT);
        if (h.startsWith("[")) {
            int close = h.indexOf(']');
            return close > 0 && h.substring(0, close + 1).equals("[::1]") && portOnly(h.substring(close + 1));
        }
        int colon = h.indexOf(':');
        String name = colon < 0 ? h : h.substring(0, colon);
        if (colon >= 0 && !portOnly(h.substring(colon))) {
            return false;
        }
        return name.equals("localhost") || name.matches("127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}");
    }

    private static boolean portOnly(String rest) {
        return rest.isEmpty() || rest.length() > 1 && rest.charAt(0) == ':' && rest.substring(1).chars()
                .allMatch(Character::isDigit);
    }

    /**
     * Whether an {@code Authorization} header carries the token. Compares digests, in constant time.
     *
     * @param authorization the header, or {@code null}
     * @return {@code true} if no token is configured or the header is {@code Bearer <token>}
     */
    public boolean authorized(String authorization) {
        if (token == null) {
            return true;
        }
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return false;
        }
        return MessageDigest.isEqual(sha256(token), sha256(authorization.substring(7).trim()));
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }

    /** Never prints the token. */
    @Override
    public String toString() {
        return "HttpAccess[token=" + (token == null ? "none" : "set") + ", loopbackHosts=" + loopbackHosts
                + ", allowedOrigins=" + allowedOrigins + "]";
    }
}
