package dev.sandboxkit.store.jdbc;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Attributes as one text column: {@code application/x-www-form-urlencoded} UTF-8 with sorted keys, for
 * example {@code hook.output=ok&note=a+b%3Dc}. The empty map is the empty string. Any string round-trips,
 * including {@code '&'}, {@code '='}, {@code '%'}, {@code '+'}, line breaks and NUL (as {@code %00}).
 */
final class AttributeCodec {
    private AttributeCodec() {
    }

    static String encode(Map<String, String> attributes) {
        if (attributes.isEmpty()) {
            return "";
        }
        StringBuilder b = new StringBuilder();
        new TreeMap<>(attributes).forEach((k, v) -> {
            if (b.length() > 0) {
                b.append('&');
            }
            b.append(URLEncoder.encode(k, StandardCharsets.UTF_8)).append('=')
                    .append(URLEncoder.encode(v, StandardCharsets.UTF_8));
        });
        return b.toString();
    }

    static Map<String, String> decode(String text) {
        if (text == null || text.isEmpty()) {
            return Map.of();
        }
        Map<String, String> out = new HashMap<>();
        for (String pair : text.split("&", -1)) {
            int eq = pair.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("malformed attributes: a pair without '='");
            }
            out.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                    URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
        }
        return out;
    }
}
