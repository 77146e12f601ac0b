package dev.sandboxkit.examples;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;

import java.time.Duration;
import java.util.Objects;

/**
 * A toy agent tool, as an agent framework would write one: the model asks for a shell command, the tool
 * runs it in the conversation's sandbox and answers with text the model can read. The sandbox is
 * acquired on every call: the first call creates it, later ones reuse it, and a call after an idle reap
 * resumes it on the same workdir, so files written by earlier calls are still there.
 */
final class ShellTool {
    /** What the model sees of each stream at most; the rest is cut and the cut is said. */
    static final int OUTPUT_LIMIT = 16 * 1024;

    private final SandboxManager manager;
    private final SandboxSpec spec;
    private final Duration timeout;

    ShellTool(SandboxManager manager, SandboxSpec spec, Duration timeout) {
        this.manager = Objects.requireNonNull(manager, "manager");
        this.spec = Objects.requireNonNull(spec, "spec");
        this.timeout = Objects.requireNonNull(timeout, "timeout");
    }

    /**
     * Runs one command for one conversation.
     *
     * @param conversationId the agent's conversation, used as the session id
     * @param command        the shell command the model asked for
     * @return the tool's answer to the model
     */
    String run(String conversationId, String command) {
        ExecResult r = manager.acquire(conversationId, spec)
                .exec(ExecRequest.shell(command).withTimeout(timeout).withOutputLimit(OUTPUT_LIMIT));
        StringBuilder answer = new StringBuilder();
        if (r.timedOut()) {
            answer.append("timed out after ").append(timeout.toSeconds()).append(" s (the command was killed)\n");
        } else {
            answer.append("exit code: ").append(r.exitCode()).append('\n');
        }
        answer.append(r.stdout());
        if (r.stdoutTruncated()) {
            answer.append("\n[stdout cut at ").append(OUTPUT_LIMIT).append(" bytes]\n");
        }
        if (!r.stderr().isEmpty()) {
            answer.append("stderr:\n").append(r.stderr());
            if (r.stderrTruncated()) {
                answer.append("\n[stderr cut at ").append(OUTPUT_LIMIT).append(" bytes]\n");
            }
        }
        return answer.toString();
    }
}
