package dev.sandboxkit.spring.boot.internal;

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
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.SessionInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The manager of {@code sandboxkit.fail-fast=false}: starts the real manager on first use, and again on each use
 * until the backend answers, so the application can start while the engine is down. Until then, every call throws
 * the backend's retryable {@link SandboxUnavailableException}, and {@link #stats()} counts nothing, which is true.
 */
public final class LazySandboxManager implements SandboxManager {
    private static final Logger log = LoggerFactory.getLogger(LazySandboxManager.class);
    private static final ManagerStats NOTHING = ManagerStats.builder().build();

    private final Supplier<SandboxManager> start;
    private final String instanceId;
    private final String driverName;
    private final Duration idleTimeout;
    private volatile SandboxManager delegate;
    private boolean closed;

    LazySandboxManager(Supplier<SandboxManager> start, String instanceId, String driverName, Duration idleTimeout) {
        this.start = start;
        this.instanceId = instanceId;
        this.driverName = driverName;
        this.idleTimeout = idleTimeout;
    }

    /**
     * Starts the manager now if the backend answers; logs why not otherwise.
     *
     * @return whether the manager is running
     */
    boolean tryStart() {
        try {
            delegate();
            return true;
        } catch (SandboxUnavailableException e) {
            log.warn("Sandbox backend unavailable, sandbox manager {} will start on first use: {}", instanceId,
                    e.getMessage());
            return false;
        }
    }

    /**
     * Whether the real manager runs.
     *
     * @return {@code true} once a start succeeded
     */
    public boolean started() {
        return delegate != null;
    }

    private SandboxManager delegate() {
        SandboxManager d = delegate;
        if (d != null) {
            return d;
        }
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("sandbox manager " + instanceId + " is closed");
            }
            if (delegate == null) {
                delegate = start.get();
                log.info("Sandbox manager {} started on first use", instanceId);
            }
            return delegate;
        }
    }

    @Override
    public Sandbox acquire(String sessionId, SandboxSpec spec) {
        return delegate().acquire(sessionId, spec);
    }

    @Override
    public ExecResult exec(String sessionId, ExecRequest request) {
        return delegate().exec(sessionId, request);
    }

    @Override
    public void keepAlive(String sessionId) {
        delegate().keepAlive(sessionId);
    }

    @Override
    public SandboxFiles files(String sessionId) {
        return delegate().files(sessionId);
    }

    @Override
    public SnapshotId snapshot(String sessionId) {
        return delegate().snapshot(sessionId);
    }

    @Override
    public void restore(String sessionId, SnapshotId snapshot) {
        delegate().restore(sessionId, snapshot);
    }

    @Override
    public Sandbox fork(String sessionId, String newSessionId) {
        return delegate().fork(sessionId, newSessionId);
    }

    @Override
    public List<SnapshotInfo> snapshots(String sessionId) {
        return delegate().snapshots(sessionId);
    }

    @Override
    public void keepSnapshot(SnapshotId snapshot, boolean keep) {
        delegate().keepSnapshot(snapshot, keep);
    }

    @Override
    public void deleteSnapshot(SnapshotId snapshot) {
        delegate().deleteSnapshot(snapshot);
    }

    @Override
    public SandboxProcess process(String sessionId, String processId) {
        return delegate().process(sessionId, processId);
    }

    @Override
    public List<SandboxProcess> processes(String sessionId) {
        return delegate().processes(sessionId);
    }

    @Override
    public void updateEgress(String sessionId, dev.sandboxkit.@Nullable EgressPolicy policy) {
        delegate().updateEgress(sessionId, policy);
    }

    @Override
    public dev.sandboxkit.EgressUsage egressUsage(String sessionId) {
        return delegate().egressUsage(sessionId);
    }

    @Override
    public Optional<SessionInfo> session(String sessionId) {
        return delegate().session(sessionId);
    }

    @Override
    public void release(String sessionId) {
        delegate().release(sessionId);
    }

    @Override
    public void destroy(String sessionId) {
        delegate().destroy(sessionId);
    }

    @Override
    public int reconcile() {
        return delegate().reconcile();
    }

    @Override
    public int archiveIdle() {
        return delegate().archiveIdle();
    }

    @Override
    public ManagerStats stats() {
        SandboxManager d = delegate;
        return d == null ? NOTHING : d.stats();
    }

    @Override
    public void ping() {
        delegate().ping();
    }

    /** The configured TTL: known before the manager starts, so the tools' instructions can be rendered. */
    @Override
    public Duration idleTimeout() {
        return idleTimeout;
    }

    @Override
    public String instanceId() {
        return instanceId;
    }

    @Override
    public String driverName() {
        return driverName;
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (delegate != null) {
            delegate.close();
        }
    }

    @Override
    public String toString() {
        return "LazySandboxManager[" + instanceId + ", " + (started() ? "started" : "not started") + "]";
    }
}
