package dev.sandboxkit.spring.boot.internal;

import dev.sandboxkit.SandboxConfigurationException;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.util.unit.DataSize;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.regex.Pattern;

/** Property checks whose failures name the property, so a bad value is found from the startup error alone. */
final class Check {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,63}");

    private Check() {
    }

    static SandboxConfigurationException invalid(String property, String problem) {
        return new SandboxConfigurationException("Invalid property " + property + ": " + problem);
    }

    static SandboxConfigurationException invalid(String property, String problem, Throwable cause) {
        return new SandboxConfigurationException("Invalid property " + property + ": " + problem, cause);
    }

    static Duration positive(Duration value, String property) {
        if (value == null) {
            throw invalid(property, "it is required");
        }
        if (value.isNegative() || value.isZero()) {
            throw invalid(property, "it must be positive, got " + show(value));
        }
        return value;
    }

    static Duration wholeSeconds(Duration value, String property) {
        positive(value, property);
        if (value.toNanosPart() != 0) {
            throw invalid(property, "it must be whole seconds, got " + show(value));
        }
        return value;
    }

    static long bytes(DataSize value, String property, long min) {
        if (value == null) {
            throw invalid(property, "it is required");
        }
        if (value.toBytes() < min) {
            throw invalid(property, "it must be at least " + min + " bytes, got " + value);
        }
        return value.toBytes();
    }

    static int intBytes(DataSize value, String property, long min) {
        long bytes = bytes(value, property, min);
        if (bytes > Integer.MAX_VALUE) {
            throw invalid(property, "it must be at most " + Integer.MAX_VALUE + " bytes, got " + value);
        }
        return (int) bytes;
    }

    static long atLeast(long value, long min, String property) {
        if (value < min) {
            throw invalid(property, "it must be at least " + min + ", got " + value);
        }
        return value;
    }

    static String name(String value, String property) {
        if (value == null || !NAME.matcher(value).matches()) {
            throw invalid(property, "it must be 1-63 characters from [A-Za-z0-9._-], got "
                    + (value == null ? "nothing" : "\"" + value + "\""));
        }
        return value;
    }

    /** A duration the way it is written in properties: {@code -5s}, {@code 90m}, {@code 1500ms}. */
    static String show(Duration value) {
        for (ChronoUnit unit : new ChronoUnit[] {ChronoUnit.DAYS, ChronoUnit.HOURS, ChronoUnit.MINUTES, ChronoUnit.SECONDS}) {
            if (!value.isZero() && value.toNanos() % unit.getDuration().toNanos() == 0) {
                return DurationStyle.SIMPLE.print(value, unit);
            }
        }
        return DurationStyle.SIMPLE.print(value);
    }
}
