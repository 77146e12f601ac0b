package dev.sandboxkit.spring.ai;

import dev.sandboxkit.tools.SandboxTools;
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;

/**
 * One sandbox tool as a Spring AI callback. The tool's answer is returned as it is, errors the model can fix
 * included, so the model always sees them; operator failures propagate as the library's exceptions, which
 * Spring AI's tool loop does not catch.
 */
final class SandboxToolCallback implements ToolCallback {
    private final SandboxTools tools;
    private final Conversations conversations;
    private final ToolDefinition definition;

    SandboxToolCallback(SandboxTools tools, Conversations conversations, dev.sandboxkit.tools.ToolDefinition tool) {
        this.tools = tools;
        this.conversations = conversations;
        this.definition = ToolDefinition.builder().name(tool.name()).description(tool.description())
                .inputSchema(tool.inputSchema()).build();
    }

    @Override
    public ToolDefinition getToolDefinition() {
        return definition;
    }

    @Override
    public String call(String toolInput) {
        return call(toolInput, null);
    }

    @Override
    public String call(String toolInput, ToolContext toolContext) {
        Object conversation = conversations.of(toolContext, definition.name());
        return tools.execute(conversation, definition.name(), toolInput).text();
    }

    @Override
    public String toString() {
        return "SandboxToolCallback[" + definition.name() + "]";
    }
}
