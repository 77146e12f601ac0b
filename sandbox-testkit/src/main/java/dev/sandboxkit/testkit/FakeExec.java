package dev.sandboxkit.testkit;

import dev.sandboxkit.ExecRequest;

import java.util.List;
import java.util.Map;

/**
 * One exec the {@link FakeDriver} received.
 *
 * @param sessionId the session the sandbox belongs to
 * @param sandboxId the fake sandbox
 * @param request   the request as the driver got it (spec-level env already merged in)
 * @param files     the session's fake workdir: path relative to the workspace to content; mutable and
 *                  shared by every sandbox of the session, so it survives container replacement
 */
public record FakeExec(String sessionId, String sandboxId, ExecRequest request, Map<String, byte[]> files) {

    /**
     * The command line.
     *
     * @return argv
     */
    public List<String> command() {
        return request.command();
    }

    /**
     * The command as one string, arguments joined by spaces; convenient for matching.
     *
     * @return the command line
     */
    public String commandLine() {
        return String.join(" ", request.command());
    }
}
