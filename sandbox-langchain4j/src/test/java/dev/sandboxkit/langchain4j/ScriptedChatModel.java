package dev.sandboxkit.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Stands in for the LLM: answers each request with the next planned message, a tool call or a final text, and
 * records the tool results it was shown. Everything else in the tests is real.
 */
final class ScriptedChatModel implements ChatModel {
    private final Deque<AiMessage> plan = new ArrayDeque<>();
    private final List<ToolExecutionResultMessage> seen = new ArrayList<>();
    private final List<ChatRequest> requests = new ArrayList<>();
    private final AtomicInteger ids = new AtomicInteger();

    /** The next answer calls a tool. */
    synchronized ScriptedChatModel thenCall(String tool, String argumentsJson) {
        plan.add(AiMessage.from(ToolExecutionRequest.builder().id("call-" + ids.incrementAndGet()).name(tool)
                .arguments(argumentsJson).build()));
        return this;
    }

    /** The next answer is final text. */
    synchronized ScriptedChatModel thenAnswer(String text) {
        plan.add(AiMessage.from(text));
        return this;
    }

    @Override
    public synchronized ChatResponse doChat(ChatRequest request) {
        requests.add(request);
        List<ChatMessage> messages = request.messages();
        ChatMessage last = messages.get(messages.size() - 1);
        if (last instanceof ToolExecutionResultMessage r) {
            seen.add(r);
        }
        AiMessage next = plan.poll();
        if (next == null) {
            throw new AssertionError("the script has no answer left for " + last);
        }
        return ChatResponse.builder().aiMessage(next).build();
    }

    /** The tool results the model was shown, in order. */
    synchronized List<ToolExecutionResultMessage> toolResults() {
        return List.copyOf(seen);
    }

    synchronized ToolExecutionResultMessage lastToolResult() {
        return seen.get(seen.size() - 1);
    }

    synchronized List<ChatRequest> requests() {
        return List.copyOf(requests);
    }

    synchronized boolean finished() {
        return plan.isEmpty();
    }
}
