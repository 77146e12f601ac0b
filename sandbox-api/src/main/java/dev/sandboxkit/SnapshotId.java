package dev.sandboxkit;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Names one workdir snapshot taken by {@link SandboxManager#snapshot(String)}. Opaque to callers: keep it,
 * print it, pass it back.
 *
 * @param value the id: {@code snap-} followed by 1 to 64 characters from {@code [a-z0-9-]}
 */
public record SnapshotId(String value) {
    private static final Pattern FORM = Pattern.compile("snap-[a-z0-9-]{1,64}");
    private static final SecureRandom RANDOM = new SecureRandom();

    /**
     * Validates.
     *
     * @throws IllegalArgumentException if the value does not have the form of a snapshot id
     */
    public SnapshotId {
        Objects.requireNonNull(value, "value");
        if (!FORM.matcher(value).matches()) {
            throw new IllegalArgumentException("not a snapshot id: " + value);
        }
    }

    /**
     * A fresh, random id.
     *
     * @return a new id
     */
    public static SnapshotId random() {
        byte[] bytes = new byte[10];
        RANDOM.nextBytes(bytes);
        return new SnapshotId("snap-" + HexFormat.of().formatHex(bytes));
    }

    @Override
    public String toString() {
        return value;
    }
}
