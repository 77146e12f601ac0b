package dev.sandboxkit.internal;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.ShellSession;
import dev.sandboxkit.ShellSessionEndedException;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;

/**
 * The {@link ShellSession} {@code Sandbox.shell()} returns. Built on plain execs, so it works on every driver
 * whose sandboxes have {@code /bin/sh} (and on Docker's command channel costs about what an exec costs):
 * each command runs {@code shell-command.sh}, which restores the working directory and exported environment
 * the previous command saved in a private directory under {@code /tmp}, runs the script in its own shell and
 * saves them again on exit. A command thus gets every exec guarantee (the timeout kills its process tree,
 * separate streams, caps) and cannot break the session's plumbing. Commands run one at a time and go through
 * {@link LiveOperations}, which counts them as activity and refuses them once the sandbox the session was opened in is
 * no longer the live one (the state died with it).
 */
final class ManagedShellSession implements ShellSession {
    /** Prints the path of a new private state directory; {@code $1} is a random name. */
    static final String OPEN_SCRIPT = resource("shell-open.sh");
    /** Runs one command; {@code $1} state dir, {@code $2} script, {@code $3} the command's own env names. */
    static final String COMMAND_SCRIPT = resource("shell-command.sh");
    static final Duration SETUP_TIMEOUT = Duration.ofSeconds(30);
    private static final Pattern STATE_DIR = Pattern.compile("/(tmp|dev/shm)/\\.sandboxkit-shell-[0-9a-f]+");
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private final LiveOperations live;
    private final String sessionId;
    /** The sandbox the state lives in. */
    final String sandboxId;
    /** The state directory in that sandbox. */
    final String dir;
    /** Serialises commands: the session's state is one working directory and one environment. */
    private final ReentrantLock running = new ReentrantLock(true);
    private volatile boolean closed;

    ManagedShellSession(LiveOperations live, String sessionId, String sandboxId, String dir) {
        this.live = live;
        this.sessionId = sessionId;
        this.sandboxId = sandboxId;
        this.dir = dir;
    }

    /** The exec that creates a session's state directory. */
    static ExecRequest openRequest(String name) {
        return ExecRequest.of(List.of("/bin/sh", "-c", OPEN_SCRIPT, "sh", name)).withTimeout(SETUP_TIMEOUT)
                .withOutputLimit(4096);
    }

    /**
     * The state directory an {@link #openRequest} printed.
     *
     * @throws SandboxExecException if the sandbox could not create it
     */
    static String stateDir(String sessionId, ExecResult opened) {
        if (opened.isSuccess() && STATE_DIR.matcher(opened.stdout()).matches()) {
            return opened.stdout();
        }
        String why = opened.exitCode() == 126 || opened.exitCode() == 127 ? "shell sessions need /bin/sh in the image"
                : "the sandbox could not create the session's state directory";
        throw new SandboxExecException("session " + sessionId + ": " + why + " (" + opened + "): "
                + opened.stderr().strip());
    }

    /** The exec that runs one command of the session, with the caller's env, stdin, timeout, caps and listener. */
    ExecRequest commandRequest(ExecRequest request) {
        if (request.workingDir() != null) {
            throw new IllegalArgumentException("a shell session keeps its own working directory: use cd instead of "
                    + "withWorkingDir");
        }
        StringBuilder names = new StringBuilder();
        for (String name : request.env().keySet()) {
            if (!NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("env names of shell session commands must be shell identifiers: "
                        + name);
            }
            names.append(names.length() == 0 ? "" : " ").append(name);
        }
        return ExecRequest.of(List.of("/bin/sh", "-c", COMMAND_SCRIPT, "sh", dir, script(request.command()),
                        names.toString()))
                .withEnv(request.env()).withStdin(request.stdin()).withTimeout(request.timeout())
                .withStdoutLimit(request.stdoutLimit()).withStderrLimit(request.stderrLimit())
                .withListener(request.listener()).withTty(request.tty());
    }

    /** The exec that discards the state directory. */
    ExecRequest closeRequest() {
        return ExecRequest.of(List.of("/bin/sh", "-c", "rm -rf \"$1\"", "sh", dir)).withTimeout(SETUP_TIMEOUT)
                .withOutputLimit(4096);
    }

    @Override
    public ExecResult exec(ExecRequest request) {
        ExecRequest command = commandRequest(request);
        try {
            running.lockInterruptibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxExecException("interrupted while waiting for the previous command of the shell session");
        }
        try {
            if (closed) {
                throw new ShellSessionEndedException("shell session in " + sessionId + " was closed");
            }
            return live.shellExec(sessionId, this, request, command);
        } finally {
            running.unlock();
        }
    }

    @Override
    public boolean isOpen() {
        if (closed) {
            return false;
        }
        return live.holds(sessionId, sandboxId);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        live.closeShell(sessionId, this);
    }

    @Override
    public String toString() {
        return "ShellSession[" + sessionId + (closed ? ", closed" : "") + "]";
    }

    /** {@code ExecRequest.shell(script)} runs the script itself; any other argv becomes one quoted simple command. */
    static String script(List<String> argv) {
        if (argv.size() == 3 && argv.get(0).equals("/bin/sh") && argv.get(1).equals("-c")) {
            return argv.get(2);
        }
        StringBuilder b = new StringBuilder();
        for (String arg : argv) {
            if (b.length() > 0) {
                b.append(' ');
            }
            b.append('\'').append(arg.replace("'", "'\\''")).append('\'');
        }
        return b.toString();
    }

    /** A script from this package's resources. */
    static String resource(String name) {
        try (InputStream in = ManagedShellSession.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
