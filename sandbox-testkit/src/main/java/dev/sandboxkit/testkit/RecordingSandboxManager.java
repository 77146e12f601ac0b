package dev.sandboxkit.testkit;

import org.jspecify.annotations.Nullable;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ManagerStats;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxProcess;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SnapshotId;
import dev.sandboxkit.SnapshotInfo;
import dev.sandboxkit.SessionInfo;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The manager a test sees: delegates to the shared manager and remembers every session id the test
 * acquires, so the extension can destroy exactly those afterwards. Closing it is a no-op, because the
 * extension owns the real manager and other tests may still use it.
 */
final class RecordingSandboxManager implements SandboxManager {
    private final SandboxManager delegate;
    private final Consumer<String> onAcquire;
    private final Set<String> acquired = ConcurrentHashMap.newKeySet();

    RecordingSandboxManager(SandboxManager delegate, Consumer<String> onAcquire) {
        this.delegate = delegate;
        this.onAcquire = onAcquire;
    }

    /** The session ids acquired through this view, in no particular order. */
    List<String> acquiredSessions() {
        return List.copyOf(acquired);
    }

    @Override
    public Sandbox acquire(String sessionId, SandboxSpec spec) {
        // Recorded before the call: a failed acquire may still have left something that destroy cleans.
        acquired.add(sessionId);
        onAcquire.accept(sessionId);
        return delegate.acquire(sessionId, spec);
    }

    @Override
    public ExecResult exec(String sessionId, ExecRequest request) {
        return delegate.exec(sessionId, request);
    }

    @Override
    public SandboxFiles files(String sessionId) {
        return delegate.files(sessionId);
    }

    @Override
    public SnapshotId snapshot(String sessionId) {
        return delegate.snapshot(sessionId);
    }

    @Override
    public void restore(String sessionId, SnapshotId snapshot) {
        delegate.restore(sessionId, snapshot);
    }

    @Override
    public Sandbox fork(String sessionId, String newSessionId) {
        acquired.add(newSessionId);
        onAcquire.accept(newSessionId);
        return delegate.fork(sessionId, newSessionId);
    }

    @Override
    public List<SnapshotInfo> snapshots(String sessionId) {
        return delegate.snapshots(sessionId);
    }

    @Override
    public void keepSnapshot(SnapshotId snapshot, boolean keep) {
        delegate.keepSnapshot(snapshot, keep);
    }

    @Override
    public void deleteSnapshot(SnapshotId snapshot) {
        delegate.deleteSnapshot(snapshot);
    }

    @Override
    public void keepAlive(String sessionId) {
        delegate.keepAlive(sessionId);
    }

    @Override
    public SandboxProcess process(String sessionId, String processId) {
        return delegate.process(sessionId, processId);
    }

    @Override
    public List<SandboxProcess> processes(String sessionId) {
        return delegate.processes(sessionId);
    }

    @Override
    public void updateEgress(String sessionId, dev.sandboxkit.@Nullable EgressPolicy policy) {
        delegate.updateEgress(sessionId, policy);
    }

    @Override
    public dev.sandboxkit.EgressUsage egressUsage(String sessionId) {
        return delegate.egressUsage(sessionId);
    }

    @Override
    public Optional<SessionInfo> session(String sessionId) {
        return delegate.session(sessionId);
    }

    @Override
    public void release(String sessionId) {
        delegate.release(sessionId);
    }

    @Override
    public void destroy(String sessionId) {
        delegate.destroy(sessionId);
    }

    @Override
    public int reconcile() {
        return delegate.reconcile();
    }

    @Override
    public int archiveIdle() {
        return delegate.archiveIdle();
    }

    @Override
    public ManagerStats stats() {
        return delegate.stats();
    }

    @Override
    public void ping() {
        delegate.ping();
    }

    @Override
    public Duration idleTimeout() {
        return delegate.idleTimeout();
    }

    @Override
    public String instanceId() {
        return delegate.instanceId();
    }

    @Override
    public String driverName() {
        return delegate.driverName();
    }

    /** Does nothing: the extension closes the real manager after the scope that declared it. */
    @Override
    public void close() {
    }

    @Override
    public String toString() {
        return "SandboxManager[" + delegate.driverName() + ", " + delegate.instanceId() + ", test view]";
    }
}
