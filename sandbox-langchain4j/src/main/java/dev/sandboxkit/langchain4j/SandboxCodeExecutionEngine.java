package dev.sandboxkit.langchain4j;

import dev.langchain4j.code.CodeExecutionEngine;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.tools.SandboxTool;
import dev.sandboxkit.tools.SandboxTools;
import dev.sandboxkit.tools.ToolResult;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * A LangChain4j {@link CodeExecutionEngine} that runs each piece of code in a fresh single-use sandbox: the code
 * is written to a file in the workspace, run with the configured interpreter, and the sandbox is then hard-killed
 * and its workdir purged, so nothing one execution leaves behind reaches the next.
 *
 * <pre>{@code
 * CodeExecutionEngine engine = SandboxCodeExecutionEngine.builder(manager)
 *         .spec(SandboxSpec.builder().image("python:3.12-slim").build())
 *         .build();                                   // runs "python3 main.py"
 * engine.execute("print(6 * 7)");                     // "42\n"
 * }</pre>
 *
 * <p>The answer is the program's stdout when it exits 0 with nothing on stderr; otherwise it has the form of a
 * {@code run_command} answer (exit code or timeout, then stdout and stderr, long output cut head and tail), so
 * a model reading it sees what went wrong. Thread-safe: each call has its own sandbox.
 */
public final class SandboxCodeExecutionEngine implements CodeExecutionEngine {
    private static final String SUCCESS = "Exit code: 0\n--- stdout ---\n";

    private final SandboxTools tools;
    private final String commandLine;
    private final String fileName;
    private final long timeoutSeconds;

    private SandboxCodeExecutionEngine(SandboxTools tools, String commandLine, String fileName, long timeoutSeconds) {
        this.tools = tools;
        this.commandLine = commandLine;
        this.fileName = fileName;
        this.timeoutSeconds = timeoutSeconds;
    }

    /**
     * Starts an engine on a manager, which it does not close.
     *
     * @param manager where the single-use sandboxes run
     * @return a builder
     */
    public static Builder builder(SandboxManager manager) {
        return new Builder(manager);
    }

    /**
     * Runs the code in a new single-use sandbox and purges it.
     *
     * @param code the program text
     * @return the program's stdout, or a report of how it failed
     * @throws dev.sandboxkit.SandboxException if the sandbox cannot be started or reached
     */
    @Override
    public String execute(String code) {
        Objects.requireNonNull(code, "code");
        String run = UUID.randomUUID().toString();
        try {
            ToolResult written = tools.execute(run, "write_file", Map.of("path", fileName, "content", code));
            if (written.error()) {
                return written.text();
            }
            String answer = tools.execute(run, "run_command", Map.of("command", commandLine + " " + quote(fileName),
                    "timeout_seconds", timeoutSeconds)).text();
            if (answer.startsWith(SUCCESS) && !answer.contains("\n--- stderr ---\n")) {
                return answer.substring(SUCCESS.length());
            }
            return answer.equals("Exit code: 0\n(no output)\n") ? "" : answer;
        } finally {
            tools.release(run);
        }
    }

    static String quote(String arg) {
        return arg.matches("[A-Za-z0-9._/=:@%+-]+") ? arg : "'" + arg.replace("'", "'\\''") + "'";
    }

    /** Builds a {@link SandboxCodeExecutionEngine}. Each option may be set once; {@link #spec} is required. */
    public static final class Builder {
        private final SandboxManager manager;
        private SandboxSpec spec;
        private List<String> command;
        private String fileName;
        private Duration timeout;
        private Integer outputLimit;

        private Builder(SandboxManager manager) {
            this.manager = Objects.requireNonNull(manager, "manager");
        }

        /**
         * The sandbox every execution runs in; it is made single-use ({@link SandboxSpec#ephemeral()}) whatever
         * it says. Required.
         *
         * @param spec an image with the interpreter
         * @return this builder
         */
        public Builder spec(SandboxSpec spec) {
            requireUnset(this.spec == null, "spec");
            this.spec = Objects.requireNonNull(spec, "spec");
            return this;
        }

        /**
         * The interpreter and its arguments; the file holding the code is appended. Default {@code python3}.
         *
         * @param argv for example {@code "node"} or {@code "sh", "-e"}
         * @return this builder
         */
        public Builder command(String... argv) {
            requireUnset(command == null, "command");
            if (argv.length == 0) {
                throw new IllegalArgumentException("command: give the interpreter");
            }
            this.command = List.of(argv);
            return this;
        }

        /**
         * The file the code is written to, in {@code /workspace}. Default {@code main.py}.
         *
         * @param name a file name, for example {@code main.js}
         * @return this builder
         */
        public Builder fileName(String name) {
            requireUnset(fileName == null, "fileName");
            if (!Objects.requireNonNull(name, "name").matches("[A-Za-z0-9._-]+") || name.startsWith(".")) {
                throw new IllegalArgumentException("fileName must be a plain file name: " + name);
            }
            this.fileName = name;
            return this;
        }

        /**
         * How long one execution may run. Default 60 seconds.
         *
         * @param limit whole seconds, at least 1
         * @return this builder
         */
        public Builder timeout(Duration limit) {
            requireUnset(timeout == null, "timeout");
            Objects.requireNonNull(limit, "limit");
            if (limit.toSeconds() < 1 || limit.toNanosPart() != 0) {
                throw new IllegalArgumentException("timeout must be whole seconds, at least 1, got " + limit);
            }
            this.timeout = limit;
            return this;
        }

        /**
         * How much of each output stream the answer keeps (head and tail). Default
         * {@link SandboxTools.Builder#DEFAULT_OUTPUT_LIMIT} (the setting {@code tools.output-limit}) bytes.
         *
         * @param bytes at least 256
         * @return this builder
         */
        public Builder outputLimit(int bytes) {
            requireUnset(outputLimit == null, "outputLimit");
            this.outputLimit = bytes;
            return this;
        }

        /**
         * Builds the engine.
         *
         * @return the engine
         * @throws dev.sandboxkit.SandboxConfigurationException if no spec was set
         */
        public SandboxCodeExecutionEngine build() {
            if (spec == null) {
                throw new dev.sandboxkit.SandboxConfigurationException("SandboxCodeExecutionEngine: spec(...) is required");
            }
            Duration limit = timeout == null ? Duration.ofSeconds(60) : timeout;
            SandboxTools.Builder b = SandboxTools.builder(manager).spec(spec.toBuilder().ephemeral().build())
                    .tools(SandboxTool.RUN_COMMAND, SandboxTool.WRITE_FILE)
                    .resolver(dev.sandboxkit.tools.SessionResolver.prefixed("code-"))
                    .maxTimeout(limit.compareTo(SandboxTools.Builder.DEFAULT_MAX_TIMEOUT) > 0 ? limit
                            : SandboxTools.Builder.DEFAULT_MAX_TIMEOUT);
            if (outputLimit != null) {
                b.outputLimit(outputLimit);
            }
            String line = (command == null ? List.of("python3") : command).stream()
                    .map(SandboxCodeExecutionEngine::quote).collect(Collectors.joining(" "));
            return new SandboxCodeExecutionEngine(b.build(), line, fileName == null ? "main.py" : fileName,
                    limit.toSeconds());
        }

        private static void requireUnset(boolean unset, String option) {
            if (!unset) {
                throw new IllegalStateException(option + " was already set");
            }
        }
    }
}
