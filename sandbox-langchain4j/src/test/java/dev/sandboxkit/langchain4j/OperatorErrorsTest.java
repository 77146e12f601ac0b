package dev.sandboxkit.langchain4j;

import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.service.AiServices;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.tools.SandboxTools;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Who sees what when the engine is down: the caller, not the model, once the error handler is installed. */
class OperatorErrorsTest {
    private final FakeDriver driver = new FakeDriver();
    private final SandboxManager manager = SandboxManager.builder().driver(driver).build();
    private final SandboxToolProvider tools = SandboxToolProvider.of(
            SandboxTools.builder(manager).spec(SandboxSpec.builder().image("fake:1").build()).build());
    private final ScriptedChatModel model = new ScriptedChatModel();

    @AfterEach
    void close() {
        manager.close();
    }

    @Test
    void withTheErrorHandlerAnEngineOutageReachesTheCaller() {
        Assistant assistant = AiServices.builder(Assistant.class).chatModel(model)
                .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(20))
                .toolProvider(tools).toolExecutionErrorHandler(tools.errorHandler()).build();
        model.thenCall("run_command", "{\"command\":\"ls\"}").thenAnswer("never reached");
        driver.setUnavailable(true);
        assertThatThrownBy(() -> assistant.chat("c", "list")).isInstanceOf(SandboxUnavailableException.class)
                .hasMessageContaining("fake backend is down");
        assertThat(model.toolResults()).as("the model was not told").isEmpty();
    }

    @Test
    void modelFixableFailuresStayWithTheModelEvenWithTheHandler() {
        Assistant assistant = AiServices.builder(Assistant.class).chatModel(model)
                .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(20))
                .toolProvider(tools).toolExecutionErrorHandler(tools.errorHandler()).build();
        model.thenCall("run_command", "{\"cmd\":\"ls\"}").thenAnswer("retrying");
        assertThat(assistant.chat("c", "list")).isEqualTo("retrying");
        assertThat(model.lastToolResult().isError()).isTrue();
        assertThat(model.lastToolResult().text()).startsWith("run_command has no argument \"cmd\"");
        assertThat(driver.execs()).isEmpty();
    }

    @Test
    void memoryIdsMapToSessionsAndNoMemoryIdIsTheDefaultConversation() {
        interface Single {
            String chat(String message);
        }
        Single single = AiServices.builder(Single.class).chatModel(model).toolProvider(tools).build();
        model.thenCall("run_command", "{\"command\":\"true\"}").thenAnswer("ok");
        single.chat("hi");
        assertThat(driver.execs()).extracting(e -> e.sessionId()).containsExactly("conv-default");
    }
}
