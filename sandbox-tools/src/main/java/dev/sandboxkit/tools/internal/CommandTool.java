package dev.sandboxkit.tools.internal;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ExecStream;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.tools.ToolResult;

import java.time.Duration;

/** run_command: one exec, its output kept head and tail as it streams, rendered for the model. */
final class CommandTool {
    private final ToolSettings settings;

    CommandTool(ToolSettings settings) {
        this.settings = settings;
    }

    ToolResult run(Sandbox sandbox, Args args) {
        String command = args.string("command");
        if (command.isBlank()) {
            throw new ToolFailure("\"command\" is empty: give the shell command to run.");
        }
        if (command.indexOf('\0') >= 0) {
            throw new ToolFailure("\"command\" contains a NUL character, which no shell command can hold.");
        }
        long maxSeconds = settings.maxTimeout().toSeconds();
        Long asked = args.integer("timeout_seconds");
        if (asked != null && asked < 1) {
            throw new ToolFailure("\"timeout_seconds\" must be at least 1, got " + asked + ".");
        }
        Duration timeout = asked == null ? settings.defaultTimeout() : Duration.ofSeconds(Math.min(asked, maxSeconds));
        int half = settings.outputLimit() / 2;
        HeadTail out = new HeadTail(half, settings.outputLimit() - half);
        HeadTail err = new HeadTail(half, settings.outputLimit() - half);
        ExecRequest request = ExecRequest.shell(command).withTimeout(timeout).withOutputLimit(0)
                .withListener((stream, b, off, len) -> (stream == ExecStream.STDOUT ? out : err).write(b, off, len));
        String workdir = args.string("workdir");
        if (workdir != null && !workdir.isEmpty()) {
            try {
                request = request.withWorkingDir(workdir);
            } catch (IllegalArgumentException e) {
                throw new ToolFailure("\"workdir\" must be a directory inside /workspace (relative to it, or absolute "
                        + "under it, without '..'): \"" + workdir + "\".");
            }
        }
        ExecResult r = sandbox.exec(request);
        StringBuilder b = new StringBuilder();
        switch (r.termination()) {
            case TIMED_OUT -> b.append("Timed out: the command was still running after ").append(timeout.toSeconds())
                    .append(" s and was killed.").append(asked != null && asked > maxSeconds
                            ? " (timeout_seconds is capped at " + maxSeconds + ".)" : "")
                    .append(" Run long jobs in the background with their output redirected to a file, or raise "
                            + "timeout_seconds.\n");
            case KILLED -> b.append("The sandbox was stopped while the command ran, so it did not finish (exit code ")
                    .append(r.exitCode()).append("). Files in /workspace are kept; run the command again if needed.\n");
            case LIFETIME_EXCEEDED -> b.append("The sandbox reached its maximum lifetime and was stopped while the "
                    + "command ran (exit code ").append(r.exitCode()).append("). Files in /workspace are kept; the next "
                    + "command runs in a fresh sandbox.\n");
            case EXITED -> b.append("Exit code: ").append(r.exitCode()).append('\n');
        }
        section(b, "stdout", out);
        section(b, "stderr", err);
        if (out.total() == 0 && err.total() == 0) {
            b.append("(no output)\n");
        }
        return ToolResult.ok(b.toString());
    }

    private static void section(StringBuilder b, String name, HeadTail stream) {
        if (stream.total() == 0) {
            return;
        }
        String text = stream.render();
        b.append("--- ").append(name).append(" ---\n").append(text);
        if (!text.endsWith("\n")) {
            b.append('\n');
        }
    }
}
