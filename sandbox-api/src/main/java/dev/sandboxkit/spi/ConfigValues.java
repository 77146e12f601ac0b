package dev.sandboxkit.spi;

import dev.sandboxkit.SandboxConfigurationException;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one syntax of sandboxkit's settings, whichever door they come through (builder strings, {@code -Dsandboxkit.*},
 * Spring Boot properties, the MCP server's flags and environment, driver settings). Every failure is a
 * {@link SandboxConfigurationException} that names the key.
 *
 * <ul>
 *   <li>Durations: {@code 30s}, {@code 10m}, {@code 1h30m}, {@code 500ms}, {@code 2d}, ISO-8601 ({@code PT30S}), or a
 *       plain number of seconds.</li>
 *   <li>Sizes: {@code 512MB}, {@code 512m}, {@code 16MiB}, {@code 1Gi}, {@code 1g}, {@code 64KB}, or a plain number of
 *       bytes; the units are powers of 1024, as Spring's {@code DataSize} has them ({@code Gi} as Kubernetes writes
 *       it).</li>
 *   <li>Booleans: {@code true} or {@code false}, any case. Lists: comma-separated, blanks dropped.</li>
 * </ul>
 */
public final class ConfigValues {
    private static final Pattern DURATION_PART = Pattern.compile("(\\d+)(ms|s|m|h|d)");
    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*(?:([kmgt])(?:i?b|i)?|b)?");

    private ConfigValues() {
    }

    /**
     * Parses a duration.
     *
     * @param key  the setting, for the message
     * @param text the value
     * @return the duration
     * @throws SandboxConfigurationException if it is not one
     */
    public static Duration duration(String key, String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.startsWith("p") || t.startsWith("-p")) {
            try {
                return Duration.parse(t.toUpperCase(Locale.ROOT));
            } catch (DateTimeParseException e) {
                throw invalid(key, text, "a duration (30s, 10m, 1h30m, 500ms, PT30S)");
            }
        }
        if (!t.isEmpty() && t.chars().allMatch(Character::isDigit)) {
            return Duration.ofSeconds(parseLong(key, t));
        }
        Matcher m = DURATION_PART.matcher(t);
        Duration total = Duration.ZERO;
        int at = 0;
        while (at < t.length() && m.find(at) && m.start() == at) {
            long n = parseLong(key, m.group(1));
            total = total.plus(switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofDays(n);
            });
            at = m.end();
        }
        if (t.isEmpty() || at != t.length()) {
            throw invalid(key, text, "a duration (30s, 10m, 1h30m, 500ms, PT30S)");
        }
        return total;
    }

    /**
     * Parses a size in bytes.
     *
     * @param key  the setting, for the message
     * @param text the value
     * @return the number of bytes
     * @throws SandboxConfigurationException if it is not one
     */
    public static long size(String key, String text) {
        Matcher m = SIZE.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw invalid(key, text, "a size (512MB, 16MiB, 1Gi, 1g or a number of bytes)");
        }
        long n = parseLong(key, m.group(1));
        int shift = m.group(2) == null ? 0 : switch (m.group(2)) {
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            default -> 40;
        };
        if (n > (Long.MAX_VALUE >> shift)) {
            throw invalid(key, text, "a size below 8 EiB");
        }
        return n << shift;
    }

    /**
     * Parses a boolean.
     *
     * @param key  the setting, for the message
     * @param text {@code true} or {@code false}, any case
     * @return the value
     * @throws SandboxConfigurationException if it is neither
     */
    public static boolean bool(String key, String text) {
        String t = text.trim();
        if (t.equalsIgnoreCase("true")) {
            return true;
        }
        if (t.equalsIgnoreCase("false")) {
            return false;
        }
        throw invalid(key, text, "true or false");
    }

    /**
     * Parses a whole number.
     *
     * @param key  the setting, for the message
     * @param text the value
     * @return the number
     * @throws SandboxConfigurationException if it is not one
     */
    public static long integer(String key, String text) {
        return parseLong(key, text.trim());
    }

    /**
     * Parses a finite number.
     *
     * @param key  the setting, for the message
     * @param text the value, for example {@code 0.5}
     * @return the number
     * @throws SandboxConfigurationException if it is not one
     */
    public static double number(String key, String text) {
        try {
            double v = Double.parseDouble(text.trim());
            if (Double.isFinite(v)) {
                return v;
            }
        } catch (NumberFormatException e) {
            // the message below
        }
        throw invalid(key, text, "a number");
    }

    /**
     * Parses a comma-separated list.
     *
     * @param text the value
     * @return its trimmed, non-blank elements
     */
    public static List<String> list(String text) {
        List<String> out = new ArrayList<>();
        for (String part : text.split(",")) {
            if (!part.isBlank()) {
                out.add(part.trim());
            }
        }
        return out;
    }

    /**
     * Parses an enum constant: any case, {@code -} for {@code _} ({@code if-missing} is {@code IF_MISSING}).
     *
     * @param key  the setting, for the message
     * @param type the enum
     * @param text the value
     * @param <E>  the enum
     * @return the constant
     * @throws SandboxConfigurationException if none matches
     */
    public static <E extends Enum<E>> E enumValue(String key, Class<E> type, String text) {
        String t = text.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        for (E e : type.getEnumConstants()) {
            if (e.name().equals(t)) {
                return e;
            }
        }
        List<String> names = new ArrayList<>();
        for (E e : type.getEnumConstants()) {
            names.add(e.name().toLowerCase(Locale.ROOT).replace('_', '-'));
        }
        throw invalid(key, text, "one of " + String.join(", ", names));
    }

    /**
     * The canonical text of a duration: the largest whole unit ({@code 30m}, {@code 90s}, {@code 500ms}).
     *
     * @param d the duration
     * @return its text
     */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms % 86_400_000 == 0 && ms != 0) {
            return ms / 86_400_000 + "d";
        }
        if (ms % 3_600_000 == 0 && ms != 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0 && ms != 0) {
            return ms / 60_000 + "m";
        }
        if (ms % 1000 == 0) {
            return ms / 1000 + "s";
        }
        return ms + "ms";
    }

    /**
     * The canonical text of a size: the largest whole binary unit ({@code 512MB}, {@code 1GB}, {@code 20000B}).
     *
     * @param bytes the size
     * @return its text
     */
    public static String formatSize(long bytes) {
        String[] units = {"B", "KB", "MB", "GB", "TB"};
        int u = 0;
        long n = bytes;
        while (u < units.length - 1 && n != 0 && n % 1024 == 0) {
            n /= 1024;
            u++;
        }
        return n + units[u];
    }

    /**
     * The error for a value that does not parse, naming the key.
     *
     * @param key      the setting
     * @param text     the value given
     * @param expected what it should be
     * @return the exception to throw
     */
    public static SandboxConfigurationException invalid(String key, String text, String expected) {
        return new SandboxConfigurationException(key + ": expected " + expected + ", got '" + text + "'");
    }

    /**
     * The candidate a mistyped name most likely meant, for a "did you mean" hint: the nearest by edits (case
     * ignored), if it is at most {@code max(2, wanted.length() / 4)} edits away.
     *
     * @param wanted     the name given
     * @param candidates the names that exist
     * @return the nearest candidate, if one is near enough
     */
    public static Optional<String> nearest(String wanted, Collection<String> candidates) {
        String w = wanted.toLowerCase(Locale.ROOT);
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String c : candidates) {
            int d = distance(w, c.toLowerCase(Locale.ROOT));
            if (d < bestDistance) {
                bestDistance = d;
                best = c;
            }
        }
        return bestDistance <= Math.max(2, wanted.length() / 4) ? Optional.ofNullable(best) : Optional.empty();
    }

    /** Levenshtein distance: edits from one name to the other. */
    private static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    private static long parseLong(String key, String text) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw invalid(key, text, "a whole number");
        }
    }
}
