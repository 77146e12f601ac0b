package dev.sandboxkit.tools;

import dev.sandboxkit.tools.internal.Json;

import java.util.List;
import java.util.Objects;

/**
 * A tool as a model sees it: its name, a description written for the model, and its arguments.
 *
 * @param tool        which tool this is
 * @param description what it does and how to call it, for the model
 * @param parameters  its arguments, in the order the schema lists them
 */
public record ToolDefinition(SandboxTool tool, String description, List<ToolParameter> parameters) {

    /** Validates and copies. */
    public ToolDefinition {
        Objects.requireNonNull(tool, "tool");
        Objects.requireNonNull(description, "description");
        parameters = List.copyOf(parameters);
    }

    /**
     * The name the model calls.
     *
     * @return for example {@code run_command}
     */
    public String name() {
        return tool.toolName();
    }

    /**
     * The JSON Schema of the arguments object: {@code {"type":"object","properties":{...},"required":[...],
     * "additionalProperties":false}}.
     *
     * @return the schema as JSON text
     */
    public String inputSchema() {
        StringBuilder b = new StringBuilder("{\"type\":\"object\",\"properties\":{");
        StringBuilder required = new StringBuilder();
        for (int i = 0; i < parameters.size(); i++) {
            ToolParameter p = parameters.get(i);
            if (i > 0) {
                b.append(',');
            }
            b.append(Json.quote(p.name())).append(":{\"type\":\"").append(p.type().jsonName())
                    .append("\",\"description\":").append(Json.quote(p.description())).append('}');
            if (p.required()) {
                required.append(required.length() == 0 ? "" : ",").append(Json.quote(p.name()));
            }
        }
        return b.append("},\"required\":[").append(required).append("],\"additionalProperties\":false}").toString();
    }
}
