package dev.sandboxkit.internal;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.ShellSession;
import dev.sandboxkit.ShellSessionEndedException;
import dev.sandboxkit.spi.DriverShell;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The {@link ShellSession} {@code Sandbox.shell()} returns: a driver shell bound to the sandbox it was opened
 * in. Commands run one at a time and go through the engine, which counts them as activity and refuses them
 * once the session's sandbox is no longer the live one (the state died with it).
 */
final class ManagedShellSession implements ShellSession {
    private static final Logger log = LoggerFactory.getLogger(ManagedShellSession.class);

    private final LifecycleEngine engine;
    private final String sessionId;
    private final DriverShell shell;
    /** Serialises commands: the session's state is one working directory and one environment. */
    private final ReentrantLock running = new ReentrantLock(true);
    private volatile boolean closed;

    ManagedShellSession(LifecycleEngine engine, String sessionId, DriverShell shell) {
        this.engine = engine;
        this.sessionId = sessionId;
        this.shell = shell;
    }

    @Override
    public ExecResult exec(ExecRequest request) {
        if (request.workingDir() != null) {
            throw new IllegalArgumentException("a shell session keeps its own working directory: use cd instead of "
                    + "withWorkingDir");
        }
        String script = script(request.command());
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
            return engine.shellExec(sessionId, shell, script, request);
        } finally {
            running.unlock();
        }
    }

    @Override
    public boolean isOpen() {
        if (closed) {
            return false;
        }
        SessionEntry e = engine.sessions.get(sessionId);
        return e != null && shell.sandboxId().equals(e.sandboxId());
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            shell.close();
        } catch (RuntimeException e) {
            log.debug("Session {}: closing a shell session failed: {}", sessionId, e.toString());
        }
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
}
