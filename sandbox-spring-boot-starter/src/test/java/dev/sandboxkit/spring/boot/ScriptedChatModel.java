package dev.sandboxkit.spring.boot;

import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * Stands in for the LLM: each call answers with the next planned step (tool calls or a final text) and records
 * the prompt it got, so a test sees exactly what the tools answered the model. Nothing else is simulated.
 */
final class ScriptedChatModel implements ChatModel {
    private final List<Function<Prompt, AssistantMessage>> steps;
    final List<Prompt> prompts = new CopyOnWriteArrayList<>();

    @SafeVarargs
    ScriptedChatModel(Function<Prompt, AssistantMessage>... steps) {
        this.steps = new ArrayList<>();
        for (Function<Prompt, AssistantMessage> step : steps) { // not List.of(steps): javac warns of heap pollution
            this.steps.add(step);
        }
    }

    @Override
    public synchronized ChatResponse call(Prompt prompt) {
        prompts.add(prompt);
        if (steps.isEmpty()) {
            throw new IllegalStateException("the script has no step left for call " + prompts.size());
        }
        return new ChatResponse(List.of(new Generation(steps.remove(0).apply(prompt))));
    }

    /** ChatClient passes tools and tool context to the model only when its options can carry them. */
    @Override
    public ChatOptions getOptions() {
        return ToolCallingChatOptions.builder().build();
    }

    static Function<Prompt, AssistantMessage> toolCall(String name, String argumentsJson) {
        return p -> AssistantMessage.builder().content("")
                .toolCalls(List.of(new AssistantMessage.ToolCall("call-" + name + "-" + p.getInstructions().size(),
                        "function", name, argumentsJson)))
                .build();
    }

    /** Answers with the text of the last tool response, the way a model would report it. */
    static Function<Prompt, AssistantMessage> reportLastToolResponse() {
        return p -> new AssistantMessage("final: " + lastToolResponse(p));
    }

    static String lastToolResponse(Prompt p) {
        Message last = p.getInstructions().get(p.getInstructions().size() - 1);
        if (!(last instanceof ToolResponseMessage response)) {
            throw new IllegalStateException("the last message is " + last.getMessageType() + ", not a tool response");
        }
        return response.getResponses().get(0).responseData();
    }

    /** Every tool response the model was shown, in order. */
    List<String> toolResponses() {
        List<String> out = new ArrayList<>();
        for (Prompt p : prompts) {
            Message last = p.getInstructions().get(p.getInstructions().size() - 1);
            if (last instanceof ToolResponseMessage response) {
                response.getResponses().forEach(r -> out.add(r.responseData()));
            }
        }
        return out;
    }
}
