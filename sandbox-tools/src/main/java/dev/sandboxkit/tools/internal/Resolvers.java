package dev.sandboxkit.tools.internal;

import dev.sandboxkit.tools.SessionResolver;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;
import java.util.regex.Pattern;

/** The default {@link SessionResolver}: readable where the id allows it, hashed where it does not. */
public final class Resolvers {
    private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,31}");
    /** What passes through unchanged: the session-id alphabet without '=', which marks hashed ids. */
    private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:@+-]{0,63}");
    private static final char[] BASE32 = "abcdefghijklmnopqrstuvwxyz234567".toCharArray();
    /** 52 base-32 characters: 260 bits, all of SHA-256. */
    private static final int HASH_CHARS = 52;

    private Resolvers() {
    }

    /**
     * The resolver described on {@link SessionResolver#prefixed(String)}.
     *
     * @param prefix the prefix
     * @return the resolver
     */
    public static SessionResolver prefixed(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        if (!PREFIX.matcher(prefix).matches()) {
            throw new IllegalArgumentException("session prefix must match " + PREFIX + ": \"" + prefix + "\"");
        }
        return conversationId -> {
            String id = String.valueOf(Objects.requireNonNull(conversationId, "conversationId"));
            return PLAIN.matcher(id).matches() ? prefix + id : prefix + "=" + sha256Base32(id);
        };
    }

    static String sha256Base32(String id) {
        byte[] digest;
        try {
            digest = MessageDigest.getInstance("SHA-256").digest(id.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
        StringBuilder b = new StringBuilder(HASH_CHARS);
        int buffer = 0;
        int bits = 0;
        for (byte x : digest) {
            buffer = (buffer << 8) | (x & 0xff);
            bits += 8;
            while (bits >= 5) {
                b.append(BASE32[(buffer >>> (bits - 5)) & 31]);
                bits -= 5;
            }
        }
        if (bits > 0) {
            b.append(BASE32[(buffer << (5 - bits)) & 31]);
        }
        return b.toString();
    }
}
