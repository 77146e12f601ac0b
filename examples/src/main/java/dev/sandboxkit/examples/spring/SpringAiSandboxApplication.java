package dev.sandboxkit.examples.spring;

import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.tools.SandboxTools;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * A Spring Boot application with sandboxed tools: the starter configures the manager and the tools from
 * {@code application.properties} ({@code sandboxkit.spec.image}, {@code sandboxkit.idle-timeout}); a scripted
 * {@link ChatModel} bean stands in for the LLM. {@link #main} runs two conversations, waits for the idle reap,
 * shows that a conversation's files outlive its container, and destroys both sandboxes.
 *
 * <p>Run it with {@code mvn -pl examples exec:java -Dexec.mainClass=dev.sandboxkit.examples.spring.SpringAiSandboxApplication}
 * (the image must exist locally: {@code scripts/build-test-images.sh}).
 */
@SpringBootApplication
public class SpringAiSandboxApplication {

    /**
     * The model. A real application gets its ChatModel from a Spring AI model starter instead.
     *
     * @return the scripted model
     */
    @Bean
    public ScriptedChatModel chatModel() {
        return new ScriptedChatModel();
    }

    /**
     * Runs the demo.
     *
     * @param args Spring Boot arguments, for example {@code --sandboxkit.idle-timeout=5s}
     * @throws InterruptedException if interrupted while waiting for the reap
     */
    public static void main(String[] args) throws InterruptedException {
        SpringApplication app = new SpringApplication(SpringAiSandboxApplication.class);
        app.setWebApplicationType(WebApplicationType.NONE);
        try (ConfigurableApplicationContext context = app.run(args)) {
            SandboxAssistant assistant = context.getBean(SandboxAssistant.class);
            SandboxManager manager = context.getBean(SandboxManager.class);
            SandboxTools tools = context.getBean(SandboxTools.class);
            String session = tools.sessionId("alice");

            print("alice", "remember the build is green", assistant);
            print("bob", "recall", assistant);
            System.out.println("... waiting for alice's sandbox to be reaped after its idle timeout");
            while (manager.session(session).map(SessionInfo::state).orElse(null) != SessionState.SUSPENDED) {
                Thread.sleep(100);
            }
            print("alice", "recall", assistant);
            print("alice", "run ls -l", assistant);
            // The sessions live in memory here, so nothing would find these workdirs after exit: remove them.
            manager.destroy(tools.sessionId("alice"));
            manager.destroy(tools.sessionId("bob"));
        }
    }

    private static void print(String conversation, String message, SandboxAssistant assistant) {
        System.out.println(conversation + "> " + message);
        System.out.println("assistant> " + assistant.ask(conversation, message));
    }
}
