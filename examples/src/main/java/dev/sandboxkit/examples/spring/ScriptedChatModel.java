package dev.sandboxkit.examples.spring;

import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Stands in for an LLM so the example runs without one: it answers "remember ...", "recall" and "run ..." with
 * the tool call a model would make, and reports the tool's answer once the tool loop hands it back. Replace the
 * bean with a real model (spring-ai-starter-model-openai, -ollama, ...) and nothing else changes.
 */
public final class ScriptedChatModel implements ChatModel {
    private final AtomicInteger calls = new AtomicInteger();

    /** Creates the model. */
    public ScriptedChatModel() {
    }

    /**
     * Plans the next step from the last message: a tool call for a user's request, a final answer for a tool's
     * response.
     *
     * @param prompt the conversation so far
     * @return a tool call or the final answer
     */
    @Override
    public ChatResponse call(Prompt prompt) {
        int id = calls.incrementAndGet();
        List<Message> messages = prompt.getInstructions();
        Message last = messages.get(messages.size() - 1);
        AssistantMessage answer;
        if (last instanceof ToolResponseMessage tool) {
            answer = new AssistantMessage("The sandbox answered: " + tool.getResponses().get(0).responseData());
        } else if (last instanceof UserMessage user) {
            String text = user.getText().trim();
            if (text.startsWith("remember ")) {
                answer = toolCall(id, "write_file", "{\"path\":\"memory.txt\",\"content\":" + quote(text.substring(9)) + "}");
            } else if (text.equals("recall")) {
                answer = toolCall(id, "read_file", "{\"path\":\"memory.txt\"}");
            } else if (text.startsWith("run ")) {
                answer = toolCall(id, "run_command", "{\"command\":" + quote(text.substring(4)) + "}");
            } else {
                answer = new AssistantMessage("Ask me to \"remember ...\", to \"recall\", or to \"run ...\".");
            }
        } else {
            answer = new AssistantMessage("Nothing to do.");
        }
        return new ChatResponse(List.of(new Generation(answer)));
    }

    /**
     * Options that can carry tools: the ChatClient only passes tools to models whose options can.
     *
     * @return empty tool-calling options
     */
    @Override
    public ChatOptions getOptions() {
        return ToolCallingChatOptions.builder().build();
    }

    /**
     * How many times the model was called.
     *
     * @return the number of calls
     */
    public int calls() {
        return calls.get();
    }

    private static AssistantMessage toolCall(int id, String tool, String arguments) {
        return AssistantMessage.builder().content("")
                .toolCalls(List.of(new AssistantMessage.ToolCall("call-" + id, "function", tool, arguments))).build();
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
