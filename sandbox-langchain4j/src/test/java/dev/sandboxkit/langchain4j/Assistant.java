package dev.sandboxkit.langchain4j;

import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.UserMessage;

/** The AI service the tests drive, as an application would declare it. */
interface Assistant {
    String chat(@MemoryId String conversation, @UserMessage String message);
}
