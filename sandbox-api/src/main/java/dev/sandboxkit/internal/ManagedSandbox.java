package dev.sandboxkit.internal;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ForwardOptions;
import dev.sandboxkit.PortForward;
import dev.sandboxkit.ProcessOptions;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxProcess;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.ShellSession;
import dev.sandboxkit.Terminal;

import java.time.Instant;
import java.util.List;

/**
 * The handle {@code acquire} returns. It names a session incarnation (its creation instant), so a handle
 * taken before a destroy never reaches a new session that reuses the id.
 */
final class ManagedSandbox implements Sandbox {
    /** The session's lifecycle: info, keep-alive, release, destroy. */
    private final LifecycleEngine engine;
    /** What runs in its live sandbox. */
    private final LiveOperations live;
    private final String sessionId;
    private final Instant incarnation;

    ManagedSandbox(LifecycleEngine engine, LiveOperations live, String sessionId, Instant incarnation) {
        this.engine = engine;
        this.live = live;
        this.sessionId = sessionId;
        this.incarnation = incarnation;
    }

    @Override
    public String sessionId() {
        return sessionId;
    }

    @Override
    public ExecResult exec(ExecRequest request) {
        return live.exec(sessionId, request, incarnation);
    }

    @Override
    public SessionInfo info() {
        return engine.session(sessionId)
                .filter(info -> info.createdAt().equals(incarnation))
                .orElseThrow(() -> new SandboxNotFoundException("session " + sessionId + " no longer exists"));
    }

    @Override
    public SandboxFiles files() {
        return live.files(sessionId, incarnation);
    }

    @Override
    public ShellSession shell() {
        return live.openShell(sessionId, incarnation);
    }

    @Override
    public PortForward forward(int containerPort, ForwardOptions options) {
        return live.forward(sessionId, incarnation, containerPort, options);
    }

    @Override
    public SandboxProcess start(ExecRequest request, ProcessOptions options) {
        return live.startProcess(sessionId, incarnation, request, options);
    }

    @Override
    public List<SandboxProcess> processes() {
        info(); // a handle of a destroyed incarnation answers not found, as its other calls do
        return live.processes(sessionId);
    }

    @Override
    public SandboxProcess process(String id) {
        return live.process(sessionId, id);
    }

    @Override
    public Terminal terminal(ExecRequest request) {
        return live.openTerminal(sessionId, request, incarnation);
    }

    @Override
    public void keepAlive() {
        live.keepAlive(sessionId, incarnation);
    }

    @Override
    public void release() {
        engine.release(sessionId, incarnation);
    }

    @Override
    public void destroy() {
        engine.destroy(sessionId, incarnation);
    }

    @Override
    public String toString() {
        return "Sandbox[" + sessionId + "]";
    }
}
