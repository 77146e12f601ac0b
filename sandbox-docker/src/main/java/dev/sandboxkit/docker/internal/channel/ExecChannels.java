package dev.sandboxkit.docker.internal.channel;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.docker.internal.engine.EngineClient;
import dev.sandboxkit.docker.internal.engine.EngineErrors;
import dev.sandboxkit.docker.internal.engine.EngineExec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Pattern;

/**
 * Chooses the exec path of every command: the sandbox's command channel (see {@link CommandChannel}) when
 * its {@link ExecMode} allows and it can carry the request, otherwise a plain engine exec
 * ({@link EngineExec}). Holds one {@link ChannelPool} per sandbox, dropped when the sandbox is removed.
 * Starts no threads: every channel is read by the thread whose command it carries. Thread-safe.
 *
 * <p>Fallback rule: a sandbox whose first channel fails to start (no {@code /bin/sh}, no writable
 * {@code /tmp} or {@code /dev/shm}, no {@code mkfifo}, a supervisor that does not report ready) is marked and
 * uses plain execs from then on ({@link ExecMode#AUTO}), or fails its execs ({@link ExecMode#CHANNEL}).
 * Requests a channel does not carry run plain in every mode: stdin over {@value #MAX_STDIN} bytes (it is
 * staged in the sandbox's tmpfs first) or stdin at all when the image's {@code dd} lacks
 * {@code iflag=count_bytes,fullblock}; a request line over {@value #MAX_LINE} bytes (the shell reads it a
 * byte at a time); env names that are not shell identifiers; an exec while {@value #MAX_CHANNELS} channels
 * are busy. A command whose channel died before it started is retried on a fresh channel, then plain.
 */
public final class ExecChannels implements AutoCloseable {
    public static final int MAX_CHANNELS = 8;
    static final int MAX_STDIN = 4 * 1024 * 1024;
    static final int MAX_LINE = 64 * 1024;
    /** How often an exec looks for channels idle past the timeout (the manager's orphan sweep looks too). */
    private static final long SWEEP_MILLIS = 1000;
    private static final int ATTEMPTS = 3;
    private static final Duration KILL_TIMEOUT = Duration.ofSeconds(5);
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    /** Read-only in some shells (bash as sh): exporting them would fail the command. */
    private static final Set<String> SHELL_RESERVED = Set.of("PPID", "UID", "EUID", "SHELLOPTS", "BASHOPTS",
            "BASH_VERSINFO", "GROUPS");
    private static final String KILL_SCRIPT = new String(CommandChannel.resource("channel-kill.sh"),
            StandardCharsets.UTF_8);
    private static final Logger log = LoggerFactory.getLogger(ExecChannels.class);

    private final EngineClient client;
    private final EngineExec plain;
    private final boolean setsid;
    /** Idle time after which a channel is closed, or 0 for never. */
    private final long idleMillis;
    private final Clock clock;
    private final AtomicLong nextSweep = new AtomicLong();
    private final ConcurrentHashMap<String, ChannelPool> pools = new ConcurrentHashMap<>();
    private volatile boolean closed;
    /** Commands run on a channel and as plain execs (tests and the benchmark read them). */
    final LongAdder channelExecs = new LongAdder();
    final LongAdder plainExecs = new LongAdder();

    /**
     * The exec router of one driver.
     *
     * @param client the engine client the channels run on
     * @param plain  the plain exec path, for requests a channel does not carry and for kills
     * @param setsid whether channel commands get a session of their own (one more exec each)
     * @param idle   how long a channel may stay idle before {@link #closeIdle} closes it; zero for never
     * @param clock  the manager's clock, for idle times
     */
    public ExecChannels(EngineClient client, EngineExec plain, boolean setsid, Duration idle, Clock clock) {
        this.client = client;
        this.plain = plain;
        this.setsid = setsid;
        this.idleMillis = idle.toMillis();
        this.clock = clock;
    }

    /**
     * Records a sandbox the driver created, with the exec mode its spec asks for.
     *
     * @param containerId the new container
     * @param mode        its spec's exec mode
     * @param maxChannels the most channels to open in it, 1 to {@value #MAX_CHANNELS} (see the driver on runtimes)
     */
    public void created(String containerId, ExecMode mode, int maxChannels) {
        pools.put(containerId, new ChannelPool(containerId, mode, Math.max(1, Math.min(MAX_CHANNELS, maxChannels))));
    }

    /**
     * Runs a command on the sandbox's command channel or as a plain exec (see the class documentation).
     *
     * @param containerId the container
     * @param request     the command
     * @return the result
     * @throws SandboxNotFoundException if the container is gone and the command did not start
     * @throws SandboxExecException     if the command could not be run or its outcome cannot be known
     */
    public ExecResult exec(String containerId, ExecRequest request) {
        try {
            return route(containerId, request);
        } finally {
            // After the command: its own channel was just used and stays, others idle past the timeout go.
            maybeCloseIdle();
        }
    }

    private ExecResult route(String containerId, ExecRequest request) {
        ChannelPool pool = pools.get(containerId);
        if (pool == null) {
            // Not created by this driver instance (or already removed): probe like any other sandbox.
            pool = pools.computeIfAbsent(containerId, id -> new ChannelPool(id, ExecMode.AUTO, MAX_CHANNELS));
        }
        if (closed || pool.mode == ExecMode.PLAIN || !carriable(request)) {
            return plain(containerId, request);
        }
        byte[] line = CommandChannel.encode(request);
        if (line.length > MAX_LINE) {
            return plain(containerId, request);
        }
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            CommandChannel channel;
            try {
                channel = acquire(pool);
            } catch (SandboxNotFoundException e) {
                forget(pool);
                throw e;
            }
            if (channel == null) {
                return plain(containerId, request);
            }
            if (!channel.canCarry(request)) {
                pool.release(channel, clock.millis());
                return plain(containerId, request);
            }
            try {
                ExecResult result = channel.run(request, line, this::kill);
                channelExecs.increment();
                return result;
            } catch (CommandChannel.NotStarted e) {
                log.debug("Container {}: {} on {}; retrying", EngineExec.shortId(containerId), e.getMessage(), channel);
            } catch (SandboxNotFoundException e) {
                forget(pool);
                throw e;
            } finally {
                pool.release(channel, clock.millis());
            }
        }
        return plain(containerId, request);
    }

    /** An idle live channel, a newly opened one, or {@code null} for a plain exec. */
    private CommandChannel acquire(ChannelPool pool) {
        while (true) {
            CommandChannel idle = pool.takeIdle();
            if (idle != null) {
                if (idle.usable()) {
                    return idle;
                }
                // Its supervisor died (killed from inside the sandbox, say): clean up after it, open another.
                log.info("Container {}: command channel {} died while idle; opening a new one",
                        EngineExec.shortId(pool.containerId), idle.id);
                pool.discard(idle);
                kill(pool.containerId, List.of("p:" + idle.id, "d:" + idle.dir));
                continue;
            }
            String why = pool.unavailable();
            if (why != null) {
                if (pool.mode == ExecMode.CHANNEL) {
                    throw new SandboxExecException("the command channel cannot run in container "
                            + EngineExec.shortId(pool.containerId) + " (" + why + ") and its spec asks for "
                            + "ExecMode.CHANNEL; use AUTO or PLAIN");
                }
                return null;
            }
            if (!pool.reserve(pool.maxChannels)) {
                if (pool.removed()) {
                    throw removed(pool);
                }
                return null;
            }
            CommandChannel opened;
            try {
                opened = CommandChannel.open(client, pool.containerId, setsid);
            } catch (CommandChannel.Unavailable e) {
                pool.openFailed();
                // A channel that could not start in a container being removed says nothing about the image.
                if (client.containerGone(pool.containerId, !EngineErrors.commandFailure(e.getMessage()),
                        pool::removed)) {
                    throw removed(pool);
                }
                pool.markUnavailable(e.getMessage());
                log.info("Container {}: command channel unavailable ({}); {}", EngineExec.shortId(pool.containerId),
                        e.getMessage(), pool.mode == ExecMode.CHANNEL ? "failing its execs (ExecMode.CHANNEL)"
                                : "using plain execs");
                continue;
            } catch (InterruptedIOException e) {
                pool.openFailed();
                if (e instanceof java.net.SocketTimeoutException && !Thread.currentThread().isInterrupted()) {
                    // A slow engine under load, not an interrupt: this command runs plain (the next one tries a
                    // channel again); a spec that asks for the channel gets the retryable unavailable error.
                    if (client.containerGone(pool.containerId, true, pool::removed)) {
                        throw removed(pool);
                    }
                    if (pool.mode == ExecMode.CHANNEL) {
                        throw client.host().unreachable(e);
                    }
                    log.info("Container {}: opening a command channel timed out ({}); this exec runs plain",
                            EngineExec.shortId(pool.containerId), e.getMessage());
                    return null;
                }
                throw new SandboxExecException("interrupted while opening a command channel in "
                        + EngineExec.shortId(pool.containerId), e);
            } catch (IOException e) {
                pool.openFailed();
                if (client.containerGone(pool.containerId, true, pool::removed)) {
                    throw removed(pool); // the engine dropped the stream of a dying container
                }
                throw client.host().unreachable(e);
            } catch (RuntimeException | Error e) {
                pool.openFailed();
                throw e;
            }
            if (!pool.opened(opened)) {
                opened.close();
                throw removed(pool);
            }
            log.debug("Container {}: opened command channel {} (setsid={}, stdin={})",
                    EngineExec.shortId(pool.containerId), opened.id, opened.setsid, opened.stdinSupported);
            return opened;
        }
    }

    /**
     * Forgets the pool of a container found gone and closes its channels: a command still running on one
     * must not wait on an engine that may never end its stream (gVisor keeps it open), and the driver's
     * {@link #containerRemoved} will no longer find the pool to close it.
     */
    private void forget(ChannelPool pool) {
        if (pools.remove(pool.containerId, pool)) {
            pool.closeAll();
        }
    }

    private static SandboxNotFoundException removed(ChannelPool pool) {
        return new SandboxNotFoundException("container " + EngineExec.shortId(pool.containerId)
                + " is gone or being removed");
    }

    /** Whether a channel could carry the request at all (per-sandbox limits are checked later). */
    private static boolean carriable(ExecRequest request) {
        // A terminal is the exec's own (the channel's commands share its pipes): always a plain exec.
        if (request.tty() != null || request.stdinLength() > MAX_STDIN) {
            return false;
        }
        for (String name : request.env().keySet()) {
            if (!name.equals(CommandChannel.MARKER) && (!NAME.matcher(name).matches() || SHELL_RESERVED.contains(name))) {
                return false;
            }
        }
        return true;
    }

    private ExecResult plain(String containerId, ExecRequest request) {
        plainExecs.increment();
        return plain.exec(containerId, request);
    }

    /**
     * Kills by marker with a plain exec ({@code channel-kill.sh}). Best effort, never throws; keeps the
     * caller's interrupt status but does not let it cut the kill short.
     */
    void kill(String containerId, List<String> markers) {
        boolean interrupted = Thread.interrupted();
        try {
            List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", KILL_SCRIPT, "sh"));
            argv.addAll(markers);
            ExecResult r = plain.execFromRoot(containerId, ExecRequest.of(argv).withTimeout(KILL_TIMEOUT).withOutputLimit(4096));
            if (!r.isSuccess()) {
                log.debug("Kill in {} ended with {}: {}", EngineExec.shortId(containerId), r, r.stderr());
            }
        } catch (SandboxNotFoundException e) {
            // the container is gone, and its processes with it
        } catch (RuntimeException e) {
            log.debug("Kill in {} failed: {}", EngineExec.shortId(containerId), e.toString());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Called before a sandbox is removed: commands on its channels will report KILLED.
     *
     * @param containerId the container
     */
    public void containerRemoving(String containerId) {
        ChannelPool pool = pools.get(containerId);
        if (pool != null) {
            pool.removing();
        }
    }

    /**
     * Called once a sandbox is removed: closes its channels, which wakes their readers.
     *
     * @param containerId the container
     */
    public void containerRemoved(String containerId) {
        ChannelPool pool = pools.remove(containerId);
        if (pool != null) {
            pool.closeAll();
        }
    }

    /** Runs {@link #closeIdle} at most once per {@value #SWEEP_MILLIS} ms of execs. */
    private void maybeCloseIdle() {
        if (idleMillis <= 0) {
            return;
        }
        long now = clock.millis();
        long next = nextSweep.get();
        if (now - next >= 0 && nextSweep.compareAndSet(next, now + SWEEP_MILLIS)) {
            closeIdle();
        }
    }

    /**
     * Closes every channel idle for longer than the idle timeout: its supervisor reads end of file and exits,
     * and the socket (and the selector's descriptors) go. The sandbox's next exec opens a channel again. Called
     * by execs (at most once a second) and by the driver's {@code list}, which the manager's orphan sweep calls
     * periodically; starts no thread.
     */
    public void closeIdle() {
        if (idleMillis <= 0) {
            return;
        }
        long before = clock.millis() - idleMillis;
        for (ChannelPool pool : pools.values()) {
            for (CommandChannel c : pool.takeIdleSince(before)) {
                log.debug("Container {}: closing command channel {}, idle for over {} ms",
                        EngineExec.shortId(pool.containerId), c.id, idleMillis);
                c.close();
            }
        }
    }

    /** The sandbox's pool, for tests. */
    ChannelPool pool(String containerId) {
        return pools.get(containerId);
    }

    /** Closes every channel: idle supervisors exit and stop their relays; sandboxes keep running. */
    @Override
    public void close() {
        closed = true;
        for (ChannelPool pool : pools.values()) {
            pool.closeAll();
        }
        pools.clear();
    }
}
