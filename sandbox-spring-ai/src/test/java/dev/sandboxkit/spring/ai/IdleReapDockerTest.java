package dev.sandboxkit.spring.ai;

import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.testkit.SandboxTest;
import dev.sandboxkit.tools.SandboxTools;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.MessageChatMemoryAdvisor;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;

import static dev.sandboxkit.spring.ai.ScriptedChatModel.reportLastToolResponse;
import static dev.sandboxkit.spring.ai.ScriptedChatModel.toolCall;
import static org.assertj.core.api.Assertions.assertThat;

/** Two turns of one conversation with an idle reap between them: the second turn finds the first turn's file. */
@SandboxTest(driver = "docker", idleTimeout = "PT1S")
class IdleReapDockerTest {

    @Test
    void filesPersistAcrossAnIdleReapBetweenTwoTurns(SandboxManager manager, SandboxSpec spec) throws Exception {
        SandboxTools tools = SandboxTools.builder(manager).spec(spec).build();
        ScriptedChatModel model = new ScriptedChatModel(
                toolCall("run_command", "{\"command\":\"echo 'turn 1 was here' > progress.txt; echo $$ > /tmp/pid\"}"),
                reportLastToolResponse(),
                toolCall("run_command", "{\"command\":\"cat progress.txt; ls /tmp/pid 2>&1 || true\"}"),
                reportLastToolResponse());
        ChatClient chat = ChatClient.builder(model)
                .defaultAdvisors(MessageChatMemoryAdvisor.builder(MessageWindowChatMemory.builder().build()).build(),
                        new SandboxConversationAdvisor())
                .defaultTools(SandboxToolCallbackProvider.of(tools)).build();
        String session = tools.sessionId("reaped");

        chat.prompt().user("start").advisors(a -> a.param(ChatMemory.CONVERSATION_ID, "reaped")).call().content();
        String firstContainer = manager.session(session).map(SessionInfo::sandboxId).orElseThrow();
        awaitState(manager, session, SessionState.SUSPENDED);
        String answer = chat.prompt().user("continue").advisors(a -> a.param(ChatMemory.CONVERSATION_ID, "reaped"))
                .call().content();

        // /workspace survived; /tmp (a tmpfs of the old container) did not, as the model was told.
        assertThat(answer).startsWith("final: Exit code: 0\n--- stdout ---\nturn 1 was here\n")
                .contains("/tmp/pid: No such file or directory");
        SessionInfo after = manager.session(session).orElseThrow();
        assertThat(after.state()).isEqualTo(SessionState.ACTIVE);
        assertThat(after.sandboxId()).isNotEqualTo(firstContainer);
    }

    static void awaitState(SandboxManager manager, String session, SessionState state) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (manager.session(session).map(SessionInfo::state).orElse(null) != state) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("session " + session + " did not become " + state + " within 20 s: "
                        + manager.session(session));
            }
            Thread.sleep(50);
        }
    }
}
