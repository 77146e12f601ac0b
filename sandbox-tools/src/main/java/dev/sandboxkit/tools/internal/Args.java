package dev.sandboxkit.tools.internal;

import dev.sandboxkit.tools.ToolDefinition;
import dev.sandboxkit.tools.ToolParameter;

import java.math.BigDecimal;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A tool call's arguments, checked against the tool's parameters. Models are forgiven what is harmless (a
 * {@code null} for an optional argument, {@code "30"} for 30, {@code "true"} for true) and told precisely what
 * is not, naming the argument and what it must be.
 */
final class Args {
    private final ToolDefinition tool;
    private final Map<String, ?> values;

    private Args(ToolDefinition tool, Map<String, ?> values) {
        this.tool = tool;
        this.values = values;
    }

    static Args of(ToolDefinition tool, Map<String, ?> values) {
        for (String key : values.keySet()) {
            if (tool.parameters().stream().noneMatch(p -> p.name().equals(key))) {
                throw new ToolFailure(tool.name() + " has no argument \"" + key + "\"; its arguments are: "
                        + tool.parameters().stream().map(ToolParameter::name).collect(Collectors.joining(", ")) + ".");
            }
        }
        for (ToolParameter p : tool.parameters()) {
            if (p.required() && values.get(p.name()) == null) {
                throw new ToolFailure(tool.name() + " needs the argument \"" + p.name() + "\" (" + p.type().jsonName()
                        + "): " + p.description());
            }
        }
        return new Args(tool, values);
    }

    String string(String name) {
        Object v = values.get(name);
        if (v == null) {
            return null;
        }
        if (!(v instanceof String s)) {
            throw wrongType(name, "a string");
        }
        return s;
    }

    String string(String name, String fallback) {
        String s = string(name);
        return s == null ? fallback : s;
    }

    Long integer(String name) {
        Object v = values.get(name);
        if (v == null) {
            return null;
        }
        try {
            if (v instanceof Number n) {
                return new BigDecimal(n.toString()).longValueExact();
            }
            if (v instanceof String s && !s.isBlank()) {
                return new BigDecimal(s.trim()).longValueExact();
            }
        } catch (ArithmeticException | NumberFormatException e) {
            // fall through to the message
        }
        throw wrongType(name, "a whole number");
    }

    long integer(String name, long fallback, long min, long max) {
        Long v = integer(name);
        if (v == null) {
            return fallback;
        }
        if (v < min || v > max) {
            throw new ToolFailure("\"" + name + "\" must be between " + min + " and " + max + ", got " + v + ".");
        }
        return v;
    }

    boolean bool(String name, boolean fallback) {
        Object v = values.get(name);
        if (v == null) {
            return fallback;
        }
        if (v instanceof Boolean b) {
            return b;
        }
        if (v instanceof String s && (s.equalsIgnoreCase("true") || s.equalsIgnoreCase("false"))) {
            return Boolean.parseBoolean(s);
        }
        throw wrongType(name, "true or false");
    }

    private ToolFailure wrongType(String name, String what) {
        return new ToolFailure("\"" + name + "\" of " + tool.name() + " must be " + what + ".");
    }
}
