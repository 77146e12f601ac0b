package dev.sandboxkit.readme;

import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;

import java.util.List;

/**
 * Stands in for the LLM: "remember X" becomes a {@code write_file} of memory.txt, "recall" a {@code read_file} of
 * it, and a tool's response is reported as the final answer.
 */
final class StandInChatModel implements ChatModel {

    @Override
    public ChatResponse call(Prompt prompt) {
        List<Message> messages = prompt.getInstructions();
        Message last = messages.get(messages.size() - 1);
        AssistantMessage answer;
        if (last instanceof ToolResponseMessage tool) {
            answer = new AssistantMessage("The sandbox answered: " + tool.getResponses().get(0).responseData());
        } else if (last.getText().startsWith("remember ")) {
            // The remembered text has no quote or backslash in this application, so it needs no JSON escaping.
            answer = toolCall("write_file", "{\"path\":\"memory.txt\",\"content\":\"" + last.getText().substring(9) + "\"}");
        } else {
            answer = toolCall("read_file", "{\"path\":\"memory.txt\"}");
        }
        return new ChatResponse(List.of(new Generation(answer)));
    }

    /** The ChatClient passes tools only to a model whose options can carry them. */
    @Override
    public ChatOptions getOptions() {
        return ToolCallingChatOptions.builder().build();
    }

    private static AssistantMessage toolCall(String tool, String arguments) {
        return AssistantMessage.builder().content("")
                .toolCalls(List.of(new AssistantMessage.ToolCall("call-" + tool, "function", tool, arguments))).build();
    }
}
