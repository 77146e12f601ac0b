package dev.sandboxkit.tools;

import java.util.Objects;

/**
 * One argument of a tool, as its JSON schema describes it. Adapters whose framework builds schemas itself
 * (LangChain4j's {@code JsonObjectSchema}, say) read these instead of parsing {@link ToolDefinition#inputSchema()}.
 *
 * @param name        the argument's name in the JSON object
 * @param type        its JSON type
 * @param description what it means, written for the model
 * @param required    whether the model must give it
 */
public record ToolParameter(String name, Type type, String description, boolean required) {

    /** The JSON types tool arguments use. */
    public enum Type {
        /** A JSON string. */
        STRING("string"),
        /** A JSON integer. */
        INTEGER("integer"),
        /** A JSON boolean. */
        BOOLEAN("boolean");

        private final String jsonName;

        Type(String jsonName) {
            this.jsonName = jsonName;
        }

        /**
         * The type's name in JSON Schema.
         *
         * @return {@code string}, {@code integer} or {@code boolean}
         */
        public String jsonName() {
            return jsonName;
        }
    }

    /** Validates. */
    public ToolParameter {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(description, "description");
    }
}
