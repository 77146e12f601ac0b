package dev.sandboxkit.mcp;

import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parsing of the command line's durations, sizes and paths. */
final class Values {
    private static final Pattern DURATION_PART = Pattern.compile("(\\d+)(ms|s|m|h|d)");
    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*([kmg]?)(i?b)?");

    private Values() {
    }

    /**
     * A duration: {@code 30s}, {@code 10m}, {@code 1h30m}, {@code 500ms}, {@code 2d}, a plain number of seconds,
     * or ISO-8601 ({@code PT30M}).
     */
    static Duration duration(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.startsWith("p")) {
            try {
                return Duration.parse(t.toUpperCase(Locale.ROOT));
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException("not a duration: " + text);
            }
        }
        if (t.chars().allMatch(Character::isDigit) && !t.isEmpty()) {
            return Duration.ofSeconds(Long.parseLong(t));
        }
        Matcher m = DURATION_PART.matcher(t);
        Duration total = Duration.ZERO;
        int at = 0;
        while (at < t.length() && m.find(at) && m.start() == at) {
            long n = Long.parseLong(m.group(1));
            total = total.plus(switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofDays(n);
            });
            at = m.end();
        }
        if (at != t.length() || t.isEmpty()) {
            throw new IllegalArgumentException("not a duration (use 30s, 10m, 1h30m, 500ms or PT30M): " + text);
        }
        return total;
    }

    /** A size in bytes: {@code 512m}, {@code 16MiB}, {@code 1g}, {@code 65536} (k, m, g are powers of 1024). */
    static long size(String text) {
        Matcher m = SIZE.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("not a size (use 512m, 16MiB, 1g or a number of bytes): " + text);
        }
        long n = Long.parseLong(m.group(1));
        int shift = switch (m.group(2)) {
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            default -> 0;
        };
        if (n > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException("size too large: " + text);
        }
        return n << shift;
    }

    /** A path; a leading {@code ~/} is the user's home. */
    static Path path(String text) {
        String t = text.trim();
        if (t.equals("~") || t.startsWith("~/")) {
            return Path.of(System.getProperty("user.home") + t.substring(1)).toAbsolutePath().normalize();
        }
        return Path.of(t).toAbsolutePath().normalize();
    }
}
