package dev.sandboxkit.testkit;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.DriverCapability;
import dev.sandboxkit.spi.SandboxDescriptor;
import dev.sandboxkit.spi.SandboxDriver;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A driver that forwards every call, default methods included, to another driver. Subclass it to watch,
 * hold or fail chosen calls of a real or fake driver in a test: a removal that fails once, a workdir deletion
 * that waits on a latch, a listing that is stale by the time it is used.
 *
 * <pre>{@code
 * SandboxDriver flaky = new ForwardingSandboxDriver(new FakeDriver()) {
 *     public void remove(String sandboxId) {
 *         if (failures.getAndDecrement() > 0) throw new SandboxUnavailableException("injected");
 *         super.remove(sandboxId);
 *     }
 * };
 * }</pre>
 *
 * <p>Thread-safe if the delegate is; every method runs on the caller's thread.
 */
public class ForwardingSandboxDriver implements SandboxDriver {
    private final SandboxDriver delegate;

    /**
     * Forwards to {@code delegate}.
     *
     * @param delegate the driver that does the work
     */
    public ForwardingSandboxDriver(SandboxDriver delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /**
     * The driver calls are forwarded to.
     *
     * @return the delegate
     */
    protected SandboxDriver delegate() {
        return delegate;
    }

    /** {@inheritDoc} */
    @Override
    public String name() {
        return delegate.name();
    }

    /** {@inheritDoc} */
    @Override
    public Set<DriverCapability> capabilities() {
        return delegate.capabilities();
    }

    /** {@inheritDoc} */
    @Override
    public void ping() {
        delegate.ping();
    }

    /** {@inheritDoc} */
    @Override
    public String createWorkspace(String sessionId, SandboxSpec spec) {
        return delegate.createWorkspace(sessionId, spec);
    }

    /** {@inheritDoc} */
    @Override
    public void deleteWorkspace(String workspace) {
        delegate.deleteWorkspace(workspace);
    }

    /** {@inheritDoc} */
    @Override
    public String adoptWorkspace(String workspace, String sessionId) {
        return delegate.adoptWorkspace(workspace, sessionId);
    }

    /** {@inheritDoc} */
    @Override
    public String create(CreateRequest request) {
        return delegate.create(request);
    }

    /** {@inheritDoc} */
    @Override
    public ExecResult exec(String sandboxId, ExecRequest request) {
        return delegate.exec(sandboxId, request);
    }

    /** {@inheritDoc} */
    @Override
    public SandboxFiles files(String workspace, SandboxSpec spec, FileLimits limits) {
        return delegate.files(workspace, spec, limits);
    }

    /** {@inheritDoc} */
    @Override
    public void remove(String sandboxId) {
        delegate.remove(sandboxId);
    }

    /** {@inheritDoc} */
    @Override
    public List<SandboxDescriptor> list(Map<String, String> labels) {
        return delegate.list(labels);
    }

    /** {@inheritDoc} */
    @Override
    public void close() {
        delegate.close();
    }
}
