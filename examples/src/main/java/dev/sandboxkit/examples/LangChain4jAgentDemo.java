package dev.sandboxkit.examples;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.UserMessage;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.langchain4j.SandboxToolProvider;
import dev.sandboxkit.tools.SandboxTools;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

/**
 * A LangChain4j agent with sandboxed tools, end to end on the local Docker engine: over two turns of one
 * conversation it writes a script, runs it, and reports on the result, while its sandbox is reaped for idleness
 * between the turns and resumed on the same workspace without the agent noticing. A scripted chat model plays the
 * LLM (it plans the tool calls a real model would make), so the demo needs no API key; everything else is real.
 *
 * <p>Run it with {@code mvn -q -pl examples exec:java -Dexec.mainClass=dev.sandboxkit.examples.LangChain4jAgentDemo}
 * after {@code scripts/setup-env.sh}. Settings: {@code -Dimage=...}, {@code -Dttl=PT2S}.
 */
public final class LangChain4jAgentDemo {

    /** The AI service: one chat memory, and so one sandbox, per conversation id. */
    interface Agent {
        String chat(@MemoryId String conversation, @UserMessage String request);
    }

    private LangChain4jAgentDemo() {
    }

    /**
     * Runs the demo.
     *
     * @param args unused
     * @throws Exception if a step fails
     */
    public static void main(String[] args) throws Exception {
        Path root = Files.createTempDirectory("sandboxkit-lc4j-demo");
        Duration ttl = Duration.parse(System.getProperty("ttl", "PT2S"));
        try (SandboxManager manager = SandboxManager.builder().driver("docker").workspaceRoot(root)
                .idleTimeout(ttl).reaperInterval(Duration.ofMillis(200)).build()) {
            SandboxSpec spec = SandboxSpec.builder().image(System.getProperty("image", "sandboxkit-test:latest"))
                    .pullPolicy(PullPolicy.IF_MISSING).build();
            String report = run(manager, spec, System.out);
            System.out.println("report.md, as the application collects it:\n" + report.indent(2));
        }
    }

    /**
     * The two turns of the conversation.
     *
     * @param manager a Docker manager with a short idle TTL
     * @param spec    the sandbox spec
     * @param out     where the steps are printed
     * @return the report the agent left in its workspace, read by the application
     * @throws InterruptedException if interrupted while waiting for the reap
     */
    static String run(SandboxManager manager, SandboxSpec spec, PrintStream out) throws InterruptedException {
        // The three lines a LangChain4j application adds: the tool set, its provider, and the AI service wiring.
        SandboxToolProvider tools = SandboxToolProvider.of(SandboxTools.builder(manager).spec(spec).build());
        PlannedModel model = new PlannedModel(out);
        Agent agent = AiServices.builder(Agent.class)
                .chatModel(model)
                .chatMemoryProvider(id -> MessageWindowChatMemory.builder().id(id).maxMessages(50).build())
                .systemMessageProvider(id -> tools.tools().instructions())
                .toolProvider(tools)
                .toolExecutionErrorHandler(tools.errorHandler())
                .build();

        String conversation = "primes-report";
        model.plan(call("write_file", "{\"path\":\"primes.sh\",\"content\":\"n=2\\nwhile [ $n -le 50 ]; do\\n"
                        + "  d=2; p=1\\n  while [ $((d * d)) -le $n ]; do [ $((n % d)) -eq 0 ] && p=0; d=$((d + 1)); done\\n"
                        + "  [ $p -eq 1 ] && echo $n\\n  n=$((n + 1))\\ndone\\n\"}"),
                call("run_command", "{\"command\":\"sh primes.sh > primes.txt && wc -l < primes.txt\"}"),
                answer("I wrote primes.sh and saved its output to primes.txt."));
        out.println("user  > Find the primes up to 50 and keep them.");
        out.println("agent > " + agent.chat(conversation, "Find the primes up to 50 and keep them."));

        String session = tools.tools().sessionId(conversation);
        String container = manager.session(session).orElseThrow().sandboxId();
        long t = System.nanoTime();
        while (manager.session(session).orElseThrow().state() != SessionState.SUSPENDED) {
            Thread.sleep(50);
        }
        out.printf("        (idle: the sandbox %s was reaped after %d ms; the workspace stays on disk)%n",
                container.substring(0, 12), (System.nanoTime() - t) / 1_000_000);

        model.plan(call("read_file", "{\"path\":\"primes.txt\"}"),
                call("write_file", "{\"path\":\"report.md\",\"content\":\"# Primes up to 50\\n\\n15 primes, the largest 47.\\n\"}"),
                call("run_command", "{\"command\":\"ls\"}"),
                answer("The report is in report.md."));
        out.println("user  > Write a short report on them.");
        out.println("agent > " + agent.chat(conversation, "Write a short report on them."));
        out.printf("        (the second turn ran in a fresh sandbox %s on the same workspace)%n",
                manager.session(session).orElseThrow().sandboxId().substring(0, 12));

        String report = new String(tools.tools().sandbox(conversation).files().readBytes("report.md"),
                StandardCharsets.UTF_8);
        manager.destroy(session);
        return report;
    }

    private static AiMessage call(String tool, String argumentsJson) {
        return AiMessage.from(ToolExecutionRequest.builder().id(tool + "-" + System.nanoTime()).name(tool)
                .arguments(argumentsJson).build());
    }

    private static AiMessage answer(String text) {
        return AiMessage.from(text);
    }

    /**
     * Plays the LLM: answers with the planned messages in order and prints the tool calls and results it sees.
     * It checks that the sandbox told it what it expects, as a real model would read the results.
     */
    static final class PlannedModel implements ChatModel {
        private final Deque<AiMessage> plan = new ArrayDeque<>();
        private final PrintStream out;

        PlannedModel(PrintStream out) {
            this.out = out;
        }

        void plan(AiMessage... messages) {
            plan.addAll(List.of(messages));
        }

        @Override
        public ChatResponse doChat(ChatRequest request) {
            List<ChatMessage> messages = request.messages();
            if (!(messages.get(0) instanceof SystemMessage system) || !system.text().contains("/workspace")) {
                throw new IllegalStateException("the agent should get the sandbox instructions as its system message");
            }
            if (messages.get(messages.size() - 1) instanceof ToolExecutionResultMessage r) {
                out.println("  tool < " + (Boolean.TRUE.equals(r.isError()) ? "ERROR " : "") + r.text().strip()
                        .replace("\n", "\n         "));
                if (Boolean.TRUE.equals(r.isError())) {
                    throw new IllegalStateException("a planned tool call failed: " + r.text());
                }
            }
            AiMessage next = plan.remove();
            if (next.hasToolExecutionRequests()) {
                ToolExecutionRequest call = next.toolExecutionRequests().get(0);
                out.println("  tool > " + call.name() + " " + abbreviate(call.arguments()));
            }
            return ChatResponse.builder().aiMessage(next).build();
        }

        private static String abbreviate(String s) {
            String one = s.replace("\\n", "⏎");
            return one.length() > 90 ? one.substring(0, 87) + "..." : one;
        }
    }
}
