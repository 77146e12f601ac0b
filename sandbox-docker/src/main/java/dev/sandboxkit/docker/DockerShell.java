package dev.sandboxkit.docker;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.spi.DriverShell;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * A shell session on the Docker driver. Every command is an ordinary exec (on the command channel when
 * the sandbox has one, so about as cheap) of {@code shell-command.sh}, which restores the working directory
 * and exported environment the previous command saved in a private directory under {@code /tmp}, runs the
 * script in its own shell and saves them again on exit. So a command gets all exec guarantees (timeout
 * kills its process tree, separate streams, caps) and cannot break the session's plumbing; state that is
 * not exported (shell variables, functions) lasts one command. Commands are serialised by the engine.
 */
final class DockerShell implements DriverShell {
    private static final String OPEN = new String(CommandChannel.resource("shell-open.sh"), StandardCharsets.UTF_8);
    private static final String COMMAND = new String(CommandChannel.resource("shell-command.sh"),
            StandardCharsets.UTF_8);
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Pattern DIR = Pattern.compile("/(tmp|dev/shm)/\\.sandboxkit-shell-[0-9a-f]+");
    private static final Duration SETUP_TIMEOUT = Duration.ofSeconds(30);
    private static final Logger log = LoggerFactory.getLogger(DockerShell.class);

    private final ExecChannels execs;
    private final String containerId;
    private final String dir;
    private final Map<String, String> env;
    private volatile boolean closed;

    private DockerShell(ExecChannels execs, String containerId, String dir, Map<String, String> env) {
        this.execs = execs;
        this.containerId = containerId;
        this.dir = dir;
        this.env = env;
    }

    static DockerShell open(ExecChannels execs, String containerId, Map<String, String> env) {
        String name = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
        ExecResult r = execs.exec(containerId, new ExecRequest(List.of("/bin/sh", "-c", OPEN, "sh", name), Map.of(),
                null, null, SETUP_TIMEOUT, 4096, 4096, null));
        if (r.exitCode() == 126 || r.exitCode() == 127) {
            throw new SandboxConfigurationException("shell sessions need /bin/sh in the image; container "
                    + EngineExec.shortId(containerId) + " answered: " + r.stderr().strip());
        }
        String dir = r.stdout();
        if (!r.isSuccess() || !DIR.matcher(dir).matches()) {
            throw new SandboxExecException("could not set up a shell session in container "
                    + EngineExec.shortId(containerId) + " (" + r + "): " + r.stderr().strip());
        }
        return new DockerShell(execs, containerId, dir, Map.copyOf(env));
    }

    @Override
    public String sandboxId() {
        return containerId;
    }

    @Override
    public ExecResult run(String script, ExecRequest options) {
        if (closed) {
            throw new dev.sandboxkit.ShellSessionEndedException("the shell session was closed");
        }
        StringBuilder names = new StringBuilder();
        for (String name : options.env().keySet()) {
            if (!NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("env names of shell session commands must be shell identifiers: "
                        + name);
            }
            if (!name.equals(EngineExec.MARKER)) {
                names.append(names.length() == 0 ? "" : " ").append(name);
            }
        }
        Map<String, String> merged = new HashMap<>(env);
        merged.putAll(options.env());
        ExecRequest request = new ExecRequest(List.of("/bin/sh", "-c", COMMAND, "sh", dir, script, names.toString()),
                merged, null, options.stdin(), options.timeout(), options.stdoutLimit(), options.stderrLimit(),
                options.listener());
        return execs.exec(containerId, request);
    }

    /** Removes the state directory, unless the sandbox is already gone with it. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (!execs.knows(containerId)) {
            return;
        }
        try {
            execs.exec(containerId, new ExecRequest(List.of("/bin/sh", "-c", "rm -rf \"$1\"", "sh", dir), Map.of(),
                    null, null, SETUP_TIMEOUT, 4096, 4096, null));
        } catch (RuntimeException e) {
            log.debug("Could not remove shell session state {} in {}: {}", dir, EngineExec.shortId(containerId),
                    e.toString());
        }
    }

    @Override
    public String toString() {
        return "DockerShell[" + EngineExec.shortId(containerId) + " " + dir + "]";
    }
}
