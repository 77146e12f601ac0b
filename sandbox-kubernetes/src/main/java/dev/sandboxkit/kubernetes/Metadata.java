package dev.sandboxkit.kubernetes;

import dev.sandboxkit.spi.SandboxLabels;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.Map;

/** Reads back what {@link Manifests} wrote: the label selector of a listing, and an object's creation time. */
final class Metadata {
    private Metadata() {
    }

    /** The label selector for {@code labels}: managed, and a session id in its sanitised label form. */
    static Map<String, String> selector(Map<String, String> labels) {
        Map<String, String> selector = new HashMap<>(labels);
        selector.put(SandboxLabels.MANAGED, "true");
        String exact = labels.get(SandboxLabels.SESSION);
        if (exact != null) {
            selector.put(SandboxLabels.SESSION, Names.sessionLabel(exact));
        }
        return selector;
    }

    /** The creation timestamp, or the epoch when it is missing or malformed. */
    static Instant createdAt(String timestamp) {
        if (timestamp == null) {
            return Instant.EPOCH;
        }
        try {
            return Instant.parse(timestamp);
        } catch (DateTimeParseException e) {
            return Instant.EPOCH;
        }
    }
}
