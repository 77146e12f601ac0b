package dev.sandboxkit;

import dev.sandboxkit.internal.ManagerSettings;
import dev.sandboxkit.spi.ComputeDriver;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.spi.WorkspaceBackend;
import org.jspecify.annotations.Nullable;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Owns the sandbox lifecycle for many agent sessions, in-process. Thread-safe.
 *
 * <p>Each session id maps to at most one live container. {@link #acquire} creates it, returns the
 * live one, or resumes a reaped one on the same workdir. Containers idle for longer than
 * {@link Builder#idleTimeout(Duration)} are removed by a reaper that runs on the manager's
 * scheduler; the next call on the session starts a fresh container transparently.
 *
 * <pre>{@code
 * try (SandboxManager manager = SandboxManager.builder()
 *         .workspaceRoot(Path.of("/var/lib/sandboxkit"))
 *         .idleTimeout(Duration.ofMinutes(30))
 *         .build()) {
 *     Sandbox sandbox = manager.acquire("chat-42", SandboxSpec.builder().image("python:3.12-slim").build());
 *     ExecResult r = sandbox.exec(ExecRequest.shell("echo hi > note.txt && cat note.txt"));
 * }
 * }</pre>
 */
public interface SandboxManager extends AutoCloseable {

    /**
     * Starts configuring a manager.
     *
     * @return a new builder
     */
    static Builder builder() {
        return new Builder(ManagerSettings.systemProperties());
    }

    /**
     * Starts configuring a manager from a configuration: its settings are the builder's starting point (the
     * builder's own methods may still set each once), and its {@code warm-pool.size} adds a pool of its spec. The
     * configuration is copied; {@code -Dsandboxkit.*} system properties are not read (use
     * {@link SandboxConfig#fromSystemProperties()} as the starting point for that), except driver settings, which a
     * driver may still read from them.
     *
     * @param config the settings
     * @return a new builder
     */
    static Builder builder(SandboxConfig config) {
        return new Builder(config.copy());
    }

    /**
     * Returns the session's sandbox: the live one, a resumed one on the same workdir, or a new one.
     * Concurrent acquires of one session never create two containers. If the session is live with a
     * different spec, its container is replaced (the workdir stays).
     *
     * @param sessionId the caller's session id: 1-128 characters from {@code [A-Za-z0-9._:@+=-]}, starting
     *                  with a letter or digit
     * @param spec      what the container looks like
     * @return a handle on the sandbox
     * @throws IllegalArgumentException     if the session id is invalid
     * @throws SandboxAcquireException      if the sandbox cannot be started, is single-use and already
     *                                      released, is held by another live manager (retryable), or is still
     *                                      being destroyed (retryable: a new session starts once the destroy of
     *                                      the old one has finished)
     * @throws SandboxUnavailableException  if the backend cannot be reached (retryable)
     * @throws SandboxConfigurationException if the session's workdir is on another host (a manager with another
     *                                      workspace root; it moves only through the archive tier): acquire it
     *                                      there; nothing was changed
     * @throws SessionStoreException        if the session store fails (retryable when it is unreachable)
     */
    Sandbox acquire(String sessionId, SandboxSpec spec);

    /**
     * Runs a command in the session's sandbox, resuming it first if it was reaped.
     *
     * @param sessionId the session
     * @param request   what to run
     * @return the result; a non-zero exit code or a timeout is reported here, not thrown. If the container is
     *         removed while the command runs (destroyed, killed for its lifetime, removed from outside), the
     *         result says {@link ExecResult.Termination#KILLED} (or {@code LIFETIME_EXCEEDED})
     * @throws SandboxNotFoundException    if the session does not exist, was destroyed, or is being destroyed
     * @throws SandboxAcquireException     if the session had to be resumed and that failed, for example because
     *                                     another live manager holds it (retryable)
     * @throws SandboxUnavailableException if the backend cannot be reached (retryable)
     * @throws SandboxExecException        if the command could not be started or its output not read
     * @throws SessionStoreException       if resuming needed the store and it failed
     */
    ExecResult exec(String sessionId, ExecRequest request);

    /**
     * Resets the session's idle clock (a heartbeat). Does not resume a suspended session.
     *
     * @param sessionId the session
     * @throws SandboxNotFoundException if the session does not exist or was destroyed
     */
    void keepAlive(String sessionId);

    /**
     * Host-side access to the session's workdir (see {@link SandboxFiles}). Does not start or resume a
     * container: a suspended session's files are reachable too. The session is looked up on each call, so
     * the returned object may be kept.
     *
     * @param sessionId the session
     * @return the files API for the session; its calls throw {@link SandboxNotFoundException} if the session
     *         does not exist or was destroyed, and {@link SandboxConfigurationException} if its workdir is on
     *         another host (use its files there, or archive it first)
     */
    SandboxFiles files(String sessionId);

    /**
     * Copies the session's workdir into a new snapshot, while the sandbox keeps running. What is captured: each
     * file as it is when the copy reaches it, so a file written during the call may be caught before or after
     * that write, and files written by one command may be captured partly; for a consistent snapshot take it
     * between commands. Directories, regular files (content, permission bits) and symbolic links (as links)
     * are copied; FIFOs, sockets and devices are left out; nothing the sandbox planted is followed. Works on a
     * suspended session too (no container is started). The snapshot is deleted with its session unless
     * {@linkplain #keepSnapshot kept}. Needs a driver with {@link dev.sandboxkit.spi.WorkspaceCapability#SNAPSHOTS}.
     *
     * @param sessionId the session
     * @return the new snapshot's id
     * @throws SandboxNotFoundException if the session does not exist, was destroyed, or is being destroyed
     * @throws SandboxUnsupportedException if the driver has no snapshots
     */
    SnapshotId snapshot(String sessionId);

    /**
     * Replaces the session's workdir with a copy of a snapshot (of this session or of another one). A live
     * container is removed first, as a reap would (running commands end {@link ExecResult.Termination#KILLED});
     * the next call resumes the session on the restored workdir. Run it on the manager that holds the session.
     *
     * @param sessionId the session
     * @param snapshot  the snapshot to restore
     * @throws SandboxNotFoundException if the session or the snapshot does not exist
     * @throws SandboxAcquireException  if another live manager holds the session (retryable)
     * @throws SandboxUnsupportedException if the driver has no snapshots
     */
    void restore(String sessionId, SnapshotId snapshot);

    /**
     * Starts a new session whose workdir begins as a copy of another session's, with the same spec. The source
     * keeps running and may keep writing; what the copy captures is as for {@link #snapshot(String)}. The copy is
     * made before the new session's first container starts (its spec's template, if any, is not copied); concurrent
     * forks or acquires of the same new id are serialised, and only one of them creates the session.
     *
     * @param sessionId    the source session
     * @param newSessionId the new session's id; it must not exist yet (or be destroyed)
     * @return a handle on the new session's sandbox
     * @throws SandboxNotFoundException if the source session does not exist or was destroyed
     * @throws SandboxAcquireException  if the new session exists already, or cannot be started
     * @throws SandboxUnsupportedException if the driver has no snapshots
     */
    Sandbox fork(String sessionId, String newSessionId);

    /**
     * The session's snapshots, oldest first.
     *
     * @param sessionId the session (destroyed sessions' kept snapshots are listed too)
     * @return its snapshots
     */
    List<SnapshotInfo> snapshots(String sessionId);

    /**
     * Marks a snapshot to outlive its session, or not: an unkept snapshot is deleted when its session is
     * destroyed; a kept one stays until {@link #deleteSnapshot}.
     *
     * @param snapshot the snapshot
     * @param keep     whether to keep it
     * @throws SandboxNotFoundException if it does not exist
     */
    void keepSnapshot(SnapshotId snapshot, boolean keep);

    /**
     * Deletes a snapshot. Idempotent.
     *
     * @param snapshot the snapshot
     */
    void deleteSnapshot(SnapshotId snapshot);

    /**
     * A snapshot of the session, if the store knows it.
     *
     * @param sessionId the session
     * @return the session's info, or empty
     */
    Optional<SessionInfo> session(String sessionId);

    /**
     * Changes the hosts a session's sandbox may reach through the egress proxy (see
     * {@link SandboxSpec.Builder#egress}). The next connection the sandbox opens is checked against the new policy;
     * open ones go on. The policy is stored with the session: it outlives reaps, resumes and restarts, until the
     * next change or an acquire with a spec whose egress differs (which replaces the container, as any spec
     * change does, and starts from that spec's policy). On a live sandbox whose spec had no egress, the proxy
     * endpoint starts now and its variables reach the commands run from now on.
     *
     * @param sessionId the session
     * @param policy    the new allow-list; {@code null} for no egress (a live sandbox's endpoint then refuses
     *                  everything until its container is replaced)
     * @throws SandboxNotFoundException      if the session does not exist
     * @throws SandboxConfigurationException if the sandbox's image cannot run the proxy endpoint
     * @throws SandboxUnsupportedException   if this implementation has no egress proxy (the managers the builder
     *                                       makes all have one)
     */
    default void updateEgress(String sessionId, @Nullable EgressPolicy policy) {
        throw new SandboxUnsupportedException(getClass().getName() + " has no egress proxy");
    }

    /**
     * What the session's sandbox did through the egress proxy, as this manager counted it since it started.
     *
     * @param sessionId the session
     * @return the counts; zero for a session that made no egress connection here
     * @throws SandboxUnsupportedException if this implementation has no egress proxy
     */
    default EgressUsage egressUsage(String sessionId) {
        throw new SandboxUnsupportedException(getClass().getName() + " has no egress proxy");
    }

    /**
     * Ends a use of the session. An ephemeral one is hard-killed and its workdir purged at once (as
     * {@link #destroy}), and the session can never be used again. For a persistent session nothing is stopped:
     * its container stays until the idle TTL, counted from the last activity (a release is not activity), and its
     * handles stay usable (see {@link Sandbox#release()}).
     *
     * @param sessionId the session
     * @throws SandboxException as {@link #destroy} does, for an ephemeral session whose purge did not finish
     */
    void release(String sessionId);

    /**
     * Removes the session's container and workdir, and returns once both are gone. Idempotent. Later use of the
     * session id through an old handle or {@link #exec} is "not found"; {@link #acquire} starts a new, empty
     * session on a fresh workdir. A destroy and an acquire of one id are linearizable: the acquire either sees
     * the old session (which the destroy then removes) or starts the new one after the destroy.
     *
     * <p>The session is recorded {@link SessionState#DESTROYING} first and {@link SessionState#DESTROYED} only
     * once its container is removed and its workdir deleted. If either fails (the engine is unreachable, the
     * workdir resists deletion), this method throws and the session stays {@code DESTROYING}, unusable, and no
     * longer held by this manager; the janitor retries it every reconcile interval, as does the next destroy or
     * acquire of the id, on any manager that can reach the workdir. A destroy another manager is running is
     * waited for (or taken over once its claim lapses): this method never returns while the session is not gone.
     *
     * @param sessionId the session
     * @throws SandboxUnavailableException   if the backend cannot be reached (retryable)
     * @throws SandboxConfigurationException if the session's workdir is on another host (a manager with another
     *                                       workspace root; it moves only through the archive tier): destroy it
     *                                       there, or archive it first; nothing was changed
     * @throws SandboxTimeoutException       if another manager's destroy of the session did not finish within
     *                                       twice the lease (at least a minute)
     * @throws SandboxException              if the container or the workdir could not be removed
     * @throws SessionStoreException         if the session store fails
     */
    void destroy(String sessionId);

    /**
     * A handle on a session's background process that needs no lease: for another manager or JVM on the same store
     * while the session's container lives, even though the session's owner is a different live manager (whose
     * lease makes {@link #acquire} fail here). Every operation is an exec into the container the store records
     * for the session, so it reads, signals, kills and feeds the process exactly as the owner's handles do, but
     * never starts, resumes or keeps alive anything: when the owner reaps, destroys or suspends the sandbox (its
     * {@code close()} does), the process goes with it and this handle reports {@link ProcessStatus.State#LOST}.
     *
     * @param sessionId the session
     * @param processId the process's {@link SandboxProcess#id()}
     * @return the handle
     * @throws IllegalArgumentException if {@code processId} is not a process id
     */
    SandboxProcess process(String sessionId, String processId);

    /**
     * The background processes in the session's live container, as {@link #process(String, String)} handles
     * (no lease needed), oldest first.
     *
     * @param sessionId the session
     * @return the handles; empty if the session has no live container
     * @throws SandboxNotFoundException if the session does not exist or was destroyed
     */
    List<SandboxProcess> processes(String sessionId);

    /**
     * Runs one orphan sweep now (it also runs when the manager is built and then periodically): lists the
     * managed containers by label, compares them with the store and removes those no live manager accounts
     * for — unknown, suspended or destroyed sessions, containers that are not their session's current one (in
     * any state, exited ones included), and sessions whose owner's lease expired. Containers of other live
     * managers are never touched. ACTIVE sessions whose container is gone become SUSPENDED, and destroys that
     * did not finish (this manager's, or those of managers that are gone) are finished. Every removal is
     * logged with its reason.
     *
     * @return the number of containers removed
     */
    int reconcile();

    /**
     * Runs one archive pass now (it also runs periodically when {@link Builder#archive} is set): every
     * suspended, non-ephemeral session idle for at least the configured age whose workdir is on this host is
     * archived, one at a time, on the calling thread (waiting for a lifecycle step of that session, such as a
     * start or a reap, to finish first).
     *
     * <p>The default returns 0, which is right for a manager without an archive tier; it exists so that
     * implementations written before this method still link. A manager that wraps another should forward it.
     *
     * @return how many sessions were archived; 0 when the archive tier is off
     */
    default int archiveIdle() {
        return 0;
    }

    /**
     * What this manager has done and holds now.
     *
     * @return a snapshot of the counters and gauges
     */
    ManagerStats stats();

    /**
     * Checks that the backend answers (the Docker engine, the Kubernetes API), as a health check would. Starts
     * nothing and touches no session.
     *
     * @throws SandboxUnavailableException if the backend cannot be reached (retryable); the message names it
     */
    void ping();

    /**
     * How long a sandbox may stay idle before it is reaped ({@link Builder#idleTimeout(Duration)}).
     *
     * @return the idle TTL
     */
    Duration idleTimeout();

    /**
     * This manager's instance id, written as the owner label on every container it creates.
     *
     * @return the instance id
     */
    String instanceId();

    /**
     * The name of the driver in use, for example {@code docker}.
     *
     * @return driver name
     */
    String driverName();

    /**
     * Stops the reaper, suspends every session this manager holds (removing its container, keeping
     * its workdir; ephemeral sessions are purged), drains the warm pools, finishes the destroys it owns that had
     * failed, and removes any container still carrying its owner label; then closes what the manager itself
     * created: its scheduler, its driver and its store. Instances passed to the builder are left open. If the
     * backend is unreachable at that moment, what could not be removed is left to the next manager of the fleet
     * that shares the store (see docs/operations.md, "When things fail").
     */
    @Override
    void close();

    /**
     * Configures a {@link SandboxManager}. Each option may be set once; {@link #build()} returns an
     * immutable, running manager. Not thread-safe.
     */
    final class Builder {
        /** The settings: the starting point's, then this builder's own. */
        private final SandboxConfig config;
        /** The options set on this builder, each at most once. */
        private final java.util.Set<String> set = new java.util.HashSet<>();
        private @Nullable ComputeDriver compute;
        private @Nullable WorkspaceBackend workspaces;
        private @Nullable SessionStore store;
        private @Nullable Clock clock;
        private @Nullable ScheduledExecutorService scheduler;
        private final List<SandboxListener> listeners = new ArrayList<>();
        private final Map<SandboxSpec, WarmPool> warmPools = new LinkedHashMap<>();
        private @Nullable Executor ioExecutor;
        private dev.sandboxkit.spi.@Nullable ArchiveStore archiveStore;
        private dev.sandboxkit.spi.@Nullable EgressResolver egressResolver;

        Builder(SandboxConfig config) {
            this.config = config;
        }

        /**
         * Chooses a driver by name ({@code docker}, {@code kubernetes}); otherwise the system property
         * {@code sandboxkit.driver}, then the available driver with the highest priority, is used.
         *
         * @param name driver name
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder driver(String name) {
            once("driver");
            config.setDriver(Objects.requireNonNull(name, "name"));
            return this;
        }

        /**
         * Uses this driver instance. The manager does not close it.
         *
         * @param instance the driver
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder driver(SandboxDriver instance) {
            once("driver");
            this.compute = Objects.requireNonNull(instance, "instance");
            this.workspaces = instance;
            return this;
        }

        /**
         * Uses a driver given as its two halves, written separately or taken from two backends: sandboxes run on
         * {@code compute}, which mounts the workdirs that {@code workspaces} creates. Each half declares its own
         * capabilities ({@link ComputeDriver#computeCapabilities()}, {@link WorkspaceBackend#workspaceCapabilities()});
         * the compute half's name is the driver's name ({@link SandboxManager#driverName()}). The manager closes
         * neither.
         *
         * @param compute    the compute half
         * @param workspaces the workspace half, whose workdir locations {@code compute} can mount
         * @return this builder
         * @throws IllegalStateException if a driver was chosen already
         */
        public Builder driver(ComputeDriver compute, WorkspaceBackend workspaces) {
            once("driver");
            this.compute = Objects.requireNonNull(compute, "compute");
            this.workspaces = Objects.requireNonNull(workspaces, "workspaces");
            return this;
        }

        /**
         * Where per-session workdirs are created (Docker driver). Default: {@code sandboxkit.workspaceRoot}
         * system property, else {@code ${java.io.tmpdir}/sandboxkit}.
         *
         * @param root a host directory
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder workspaceRoot(Path root) {
            once("workspaceRoot");
            config.setWorkspaceRoot(Objects.requireNonNull(root, "root"));
            return this;
        }

        /**
         * How long a sandbox may stay idle before its container is reaped. Default 30 minutes.
         * Acquire, exec and keep-alive reset the clock; a running exec counts as activity.
         *
         * @param ttl idle TTL
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder idleTimeout(Duration ttl) {
            once("idleTimeout");
            config.setIdleTimeout(requirePositive(ttl, "idleTimeout"));
            return this;
        }

        /**
         * How often the reaper looks for idle sandboxes. Default: a quarter of the idle TTL, at most
         * 500 ms (a pass over 10,000 sessions costs well under a millisecond). A sandbox is reaped within
         * TTL + this interval.
         *
         * @param interval reaper period
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder reaperInterval(Duration interval) {
            once("reaperInterval");
            config.setReaperInterval(requirePositive(interval, "reaperInterval"));
            return this;
        }

        /**
         * How long this manager's ownership of its sessions lasts without renewal; renewed every third of
         * it. After a crash, another manager sharing the store may take the sessions over once it has
         * passed. Default 30 seconds.
         *
         * @param lease lease duration
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder leaseDuration(Duration lease) {
            once("leaseDuration");
            config.setLeaseDuration(requirePositive(lease, "leaseDuration"));
            return this;
        }

        /**
         * Where session metadata lives. Default: an in-memory store, closed with the manager.
         *
         * @param sessionStore the store; the manager does not close it
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder store(SessionStore sessionStore) {
            once("store");
            this.store = Objects.requireNonNull(sessionStore, "sessionStore");
            return this;
        }

        /**
         * The clock for idle and lifetime accounting. Default: the system UTC clock.
         *
         * @param time the clock
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder clock(Clock time) {
            once("clock");
            this.clock = Objects.requireNonNull(time, "time");
            return this;
        }

        /**
         * Runs the reaper and other housekeeping on this scheduler; the manager does not shut it down.
         * Default: two named daemon threads owned by the manager.
         *
         * @param executor the scheduler
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder scheduler(ScheduledExecutorService executor) {
            once("scheduler");
            this.scheduler = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /**
         * Runs the port forwards' blocking I/O ({@link Sandbox#forward(int)}) on this executor: one long task per
         * open forward (its accept loop) and two per open connection (one pump each way), each for as long as it
         * lasts. The executor must run that many tasks at once: a bounded pool that is full stalls or refuses
         * connections. The archive tier ({@link #archive}) also deflates each workdir it packs here, one task per
         * archive, while the archiving thread walks the tree; a task refused or not started within 200 ms is done
         * on the archiving thread instead (slower, never stuck). The manager does not shut it down. Default: a pool of named daemon threads
         * ({@code sandboxkit-io-N}) that grows with the forwards, lets idle threads go after 30 s, and is shut
         * down by {@link SandboxManager#close()}.
         *
         * @param executor the executor
         * @return this builder
         * @throws IllegalStateException if this option was set already
         */
        public Builder ioExecutor(Executor executor) {
            once("ioExecutor");
            this.ioExecutor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /**
         * This manager's instance id, used as the owner label. Default: random. Two live managers must
         * never share one.
         *
         * @param id instance id, 1-63 characters from {@code [A-Za-z0-9._-]}
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder instanceId(String id) {
            once("instanceId");
            config.setInstanceId(Objects.requireNonNull(id, "id"));
            return this;
        }

        /**
         * A driver-specific setting, for example {@code docker.host}. Each key may be set once.
         *
         * @param key   setting name
         * @param value setting value
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder driverProperty(String key, String value) {
            once("driverProperty " + Objects.requireNonNull(key, "key"));
            config.set(key, Objects.requireNonNull(value, "value"));
            return this;
        }

        /**
         * Adds a receiver of lifecycle events (see {@link SandboxListener} for the threads that call it). Unlike the
         * other options this one may be given several times: metrics and an application's own listener coexist,
         * each receiving every event, in the order they were added.
         *
         * @param eventListener the listener
         * @return this builder
         */
        public Builder listener(SandboxListener eventListener) {
            listeners.add(Objects.requireNonNull(eventListener, "eventListener"));
            return this;
        }

        /**
         * Keeps pre-started sandboxes for a spec; new sessions acquired with that spec take one. May be called
         * once per distinct spec. The pools are filled in the background and drained on close.
         *
         * @param pool the pool settings
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder warmPool(WarmPool pool) {
            Objects.requireNonNull(pool, "pool");
            requireUnset(!warmPools.containsKey(pool.spec()), "warmPool for this spec");
            warmPools.put(pool.spec(), pool);
            return this;
        }

        /**
         * How often the orphan sweep runs ({@link SandboxManager#reconcile()}). Default 60 seconds.
         *
         * @param interval sweep period
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder reconcileInterval(Duration interval) {
            once("reconcileInterval");
            config.setReconcileInterval(requirePositive(interval, "reconcileInterval"));
            return this;
        }

        /**
         * Limits for the files API ({@link SandboxFiles}): the largest file one call may read, write, upload
         * or download, and the most entries one listing or tar archive may hold. Default
         * {@link FileLimits#DEFAULT} (1 GiB, 100 000 entries).
         *
         * @param maxFileBytes largest single file, in bytes
         * @param maxEntries   most entries per listing or archive
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder fileLimits(long maxFileBytes, int maxEntries) {
            once("fileLimits");
            FileLimits limits = new FileLimits(maxFileBytes, maxEntries);
            config.setMaxFileSize(limits.maxFileBytes());
            config.setMaxFileEntries(limits.maxEntries());
            return this;
        }

        /**
         * The fleet this manager belongs to: a name that partitions the managers on one engine or namespace. Written
         * as a label on every container; the orphan sweep only lists its own fleet's containers. Default
         * {@code default}. Naming a fleet grants no power over other applications' containers: the sweep judges a
         * container only by the records of the session store it was created under (see {@link #orphanGrace}).
         *
         * @param name 1-63 characters from {@code [A-Za-z0-9._-]}
         * @return this builder
         * @throws IllegalStateException if this option was set already
         */
        public Builder fleet(String name) {
            once("fleet");
            config.setFleet(Objects.requireNonNull(name, "name"));
            return this;
        }

        /**
         * How old a container, workdir or snapshot that no live manager accounts for must be before the orphan sweep
         * removes it, when only its age tells an interrupted create from one in progress. Default 10 minutes. It
         * applies only to what this manager's session store accounts for: a container is swept when its owner's lease
         * in this store expired, or (after this grace) when its owner left no presence in this store. Containers of
         * other stores are never swept, except those of an in-memory store whose process is provably gone (it held a
         * lock on a file under the same workspace root).
         *
         * @param grace positive
         * @return this builder
         * @throws IllegalStateException if this option was set already
         */
        public Builder orphanGrace(Duration grace) {
            once("orphanGrace");
            config.setOrphanGrace(requirePositive(grace, "grace"));
            return this;
        }

        /**
         * Turns on the archive tier: a session suspended for at least {@code after} (no container, no call) has
         * its workdir packed into one gzip-compressed tar, put into {@code store} under its SHA-256, and then
         * deleted locally; the next use of the session (acquire, files, snapshot), from any manager on the same
         * session store and any host, fetches it, checks the hash and unpacks it into a fresh workdir before the
         * container starts. That cost is the {@code archive-restore} phase of the
         * {@link SandboxEvent.Resumed} event. Every step is decided by the session store's compare-and-set, and
         * the local copy goes only after the store has confirmed the upload, so a crash at any point leaves the
         * workdir intact somewhere. Failures of the object store surface as retryable
         * {@link SandboxUnavailableException}s. Ephemeral sessions are never archived. Needs a driver with
         * {@link dev.sandboxkit.spi.WorkspaceCapability#WORKSPACE_ARCHIVE}; the pass runs on the scheduler at the
         * orphan sweep's interval (also on demand: {@link SandboxManager#archiveIdle()}). The manager does not close
         * {@code store}. Packed files are spooled in {@code java.io.tmpdir}.
         *
         * @param store where archives go; every manager that may resume the sessions needs the same one
         * @param after how long a session stays suspended before it is archived
         * @return this builder
         * @throws IllegalStateException if this option was set already
         */
        public Builder archive(dev.sandboxkit.spi.ArchiveStore store, Duration after) {
            once("archive");
            this.archiveStore = Objects.requireNonNull(store, "store");
            config.setArchiveAfter(requirePositive(after, "after"));
            return this;
        }

        /**
         * Resolves the names sandboxes ask the egress proxy for (see {@link SandboxSpec.Builder#egress}). By
         * default the system DNS answers, and an answer that is loopback, link-local, any-local or multicast is
         * refused unless a CIDR rule allows it (DNS rebinding); a resolver given here is trusted as it answers: an
         * internal mirror's private address is used as given, and tests map names to {@code 127.0.0.1}.
         *
         * @param resolver the resolver; called on the proxy's I/O threads, once per connection
         * @return this builder
         * @throws IllegalStateException if this option was set already
         */
        public Builder egressResolver(dev.sandboxkit.spi.EgressResolver resolver) {
            once("egressResolver");
            this.egressResolver = Objects.requireNonNull(resolver, "resolver");
            return this;
        }

        /**
         * Builds and starts the manager: resolves the driver, checks it can reach its backend, and
         * schedules the reaper.
         *
         * @return the running manager
         * @throws SandboxConfigurationException if no driver fits; the message lists the candidates
         * @throws SandboxUnavailableException   if the backend cannot be reached
         */
        public SandboxManager build() {
            List<WarmPool> pools = new ArrayList<>(warmPools.values());
            if (config.getWarmPoolSize() > 0) {
                WarmPool configured = config.warmPool(config.spec());
                if (configured != null && !warmPools.containsKey(configured.spec())) {
                    pools.add(configured);
                }
            }
            if (archiveStore == null && config.getArchiveAfter() != null) {
                // Else the setting would quietly do nothing: say where the store comes from.
                throw new SandboxConfigurationException(SandboxConfig.PREFIX + "archive-after is set ("
                        + config.getArchiveAfter() + ") but there is no archive store to archive into: give one with "
                        + "archive(store, after) (in Spring Boot: an ArchiveStore bean, such as sandbox-storage-s3's "
                        + "S3ArchiveStore), or unset archive-after");
            }
            return new ManagerSettings(config.copy(), compute, workspaces, store, clock, scheduler, listeners, pools, ioExecutor,
                    archiveStore, egressResolver).start();
        }

        private void once(String option) {
            requireUnset(set.add(option), option);
        }

        private static void requireUnset(boolean unset, String option) {
            if (!unset) {
                throw new IllegalStateException(option + " was already set");
            }
        }

        private static Duration requirePositive(Duration d, String name) {
            Objects.requireNonNull(d, name);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " must be positive, got: " + d);
            }
            return d;
        }
    }
}
