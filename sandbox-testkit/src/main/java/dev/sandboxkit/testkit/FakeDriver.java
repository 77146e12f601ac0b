package dev.sandboxkit.testkit;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ExecStream;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.DriverCapability;
import dev.sandboxkit.spi.SandboxDescriptor;
import dev.sandboxkit.spi.SandboxDriver;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * A driver that runs no containers: it records execs and answers them from a script, so agent-framework
 * code can be unit-tested in milliseconds. Thread-safe.
 *
 * <pre>{@code
 * FakeDriver driver = new FakeDriver()
 *         .when(exec -> exec.commandLine().startsWith("python"), FakeDriver.result(0, "42\n", ""));
 * SandboxManager manager = SandboxManager.builder().driver(driver).build();
 * manager.acquire("s1", spec).exec(ExecRequest.of("python", "-c", "print(42)")).stdout(); // "42\n"
 * driver.execs(); // what ran
 * }</pre>
 *
 * <p>Unscripted execs succeed with exit code 0 and no output. A scripted result's output is fed to the
 * request's listener and capped like a real driver's. The fake sandboxes, their labels and the per-session
 * fake workdirs ({@link FakeExec#files()}) behave like real ones for the lifecycle.
 */
public final class FakeDriver implements SandboxDriver {
    private final Clock clock;
    private final Map<String, Sandbox> sandboxes = new ConcurrentHashMap<>();
    private final Map<String, Map<String, byte[]>> workspaces = new ConcurrentHashMap<>();
    private final List<Rule> rules = new CopyOnWriteArrayList<>();
    private final List<FakeExec> execs = new CopyOnWriteArrayList<>();
    private final AtomicInteger created = new AtomicInteger();
    private final AtomicInteger removed = new AtomicInteger();
    private final AtomicInteger ids = new AtomicInteger();
    private final AtomicReference<RuntimeException> nextCreateFailure = new AtomicReference<>();
    private volatile RuntimeException workspaceDeleteFailure;
    private volatile boolean unavailable;

    /** A fake driver on the system clock. */
    public FakeDriver() {
        this(Clock.systemUTC());
    }

    /**
     * A fake driver that stamps sandboxes with the given clock.
     *
     * @param clock the clock, typically the manager's {@link ManualClock}
     */
    public FakeDriver(Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /**
     * Answers execs that match with a fixed result. Rules are tried in the order added; first match wins.
     *
     * @param matcher which execs
     * @param result  the answer
     * @return this driver
     */
    public FakeDriver when(Predicate<FakeExec> matcher, ExecResult result) {
        return when(matcher, exec -> result);
    }

    /**
     * Answers execs that match by calling a handler, on the thread that called exec. The handler may
     * block (to simulate a long command), read and write {@link FakeExec#files()}, or throw.
     *
     * @param matcher which execs
     * @param handler computes the answer
     * @return this driver
     */
    public FakeDriver when(Predicate<FakeExec> matcher, Function<FakeExec, ExecResult> handler) {
        rules.add(new Rule(Objects.requireNonNull(matcher), Objects.requireNonNull(handler)));
        return this;
    }

    /**
     * A result with the given exit code and UTF-8 output.
     *
     * @param exitCode exit code
     * @param stdout   stdout text
     * @param stderr   stderr text
     * @return the result
     */
    public static ExecResult result(int exitCode, String stdout, String stderr) {
        return new ExecResult(exitCode, stdout.getBytes(StandardCharsets.UTF_8), stderr.getBytes(StandardCharsets.UTF_8),
                false, false, ExecResult.Termination.EXITED, Duration.ZERO);
    }

    /**
     * Every exec received so far, in order.
     *
     * @return the execs
     */
    public List<FakeExec> execs() {
        return List.copyOf(execs);
    }

    /**
     * How many sandboxes were created.
     *
     * @return count
     */
    public int createCount() {
        return created.get();
    }

    /**
     * How many sandboxes were removed (only those that existed count).
     *
     * @return count
     */
    public int removeCount() {
        return removed.get();
    }

    /**
     * Ids of the sandboxes that exist now.
     *
     * @return sandbox ids
     */
    public Set<String> liveSandboxes() {
        return Set.copyOf(sandboxes.keySet());
    }

    /**
     * Whether a workspace still exists.
     *
     * @param workspace location returned by {@link #createWorkspace}
     * @return {@code true} if it exists
     */
    public boolean workspaceExists(String workspace) {
        return workspaces.containsKey(workspace);
    }

    /**
     * Makes the next {@link #create} throw.
     *
     * @param failure what to throw
     */
    public void failNextCreate(RuntimeException failure) {
        nextCreateFailure.set(failure);
    }

    /**
     * Removes a sandbox as if someone outside the manager had removed it.
     *
     * @param sandboxId the sandbox
     */
    public void vanish(String sandboxId) {
        sandboxes.remove(sandboxId);
    }

    /**
     * Makes a sandbox exit as if its PID 1 had died (killed from inside, say): it stays listed, not running, and
     * execs into it fail with {@link SandboxNotFoundException} until it is removed.
     *
     * @param sandboxId the sandbox
     */
    public void exit(String sandboxId) {
        sandboxes.computeIfPresent(sandboxId, (id, s) -> new Sandbox(s.request, new SandboxDescriptor(id,
                s.descriptor.labels(), s.descriptor.createdAt(), false)));
    }

    /**
     * Makes every {@link #deleteWorkspace} throw {@code failure} (a workdir that resists deletion) until called
     * again with {@code null}; the workdir is left in place.
     *
     * @param failure what to throw, or {@code null} to let deletes succeed again
     */
    public void failWorkspaceDeletes(RuntimeException failure) {
        this.workspaceDeleteFailure = failure;
    }

    /**
     * Makes every call fail as if the backend were down (or back up).
     *
     * @param down {@code true} to fail
     */
    public void setUnavailable(boolean down) {
        this.unavailable = down;
    }

    @Override
    public String name() {
        return "fake";
    }

    @Override
    public Set<DriverCapability> capabilities() {
        return Set.of(DriverCapability.STDIN, DriverCapability.STREAMING);
    }

    @Override
    public void ping() {
        checkUp();
    }

    @Override
    public String createWorkspace(String sessionId, SandboxSpec spec) {
        checkUp();
        String location = "fake:" + sessionId;
        workspaces.computeIfAbsent(location, k -> new ConcurrentHashMap<>());
        return location;
    }

    @Override
    public void deleteWorkspace(String workspace) {
        checkUp();
        RuntimeException failure = workspaceDeleteFailure;
        if (failure != null) {
            throw failure;
        }
        workspaces.remove(workspace);
    }

    @Override
    public String create(CreateRequest request) {
        checkUp();
        RuntimeException failure = nextCreateFailure.getAndSet(null);
        if (failure != null) {
            throw failure;
        }
        String id = "fake-" + ids.incrementAndGet();
        workspaces.computeIfAbsent(request.workspace(), k -> new ConcurrentHashMap<>());
        // Like a real backend: the spec's extra labels go on the sandbox next to sandboxkit's own.
        Map<String, String> labels = new HashMap<>(request.spec().labels());
        labels.putAll(request.labels());
        sandboxes.put(id, new Sandbox(request, new SandboxDescriptor(id, labels, clock.instant(), true)));
        created.incrementAndGet();
        return id;
    }

    @Override
    public ExecResult exec(String sandboxId, ExecRequest request) {
        checkUp();
        Sandbox sandbox = sandboxes.get(sandboxId);
        if (sandbox == null || !sandbox.descriptor.running()) {
            throw new SandboxNotFoundException("no running fake sandbox " + sandboxId);
        }
        long start = System.nanoTime();
        FakeExec exec = new FakeExec(sandbox.request.sessionId(), sandboxId, request,
                workspaces.computeIfAbsent(sandbox.request.workspace(), k -> new ConcurrentHashMap<>()));
        execs.add(exec);
        ExecResult scripted = null;
        for (Rule rule : rules) {
            if (rule.matcher.test(exec)) {
                scripted = rule.handler.apply(exec);
                break;
            }
        }
        if (scripted == null) {
            scripted = result(0, "", "");
        }
        if (!sandboxes.containsKey(sandboxId)) {
            scripted = new ExecResult(scripted.exitCode(), scripted.stdoutBytes(), scripted.stderrBytes(),
                    scripted.stdoutTruncated(), scripted.stderrTruncated(), ExecResult.Termination.KILLED, scripted.duration());
        }
        return deliver(request, scripted, Duration.ofNanos(System.nanoTime() - start));
    }

    /** Streams the scripted output to the listener and applies the caps, like a real driver. */
    private static ExecResult deliver(ExecRequest request, ExecResult scripted, Duration took) {
        byte[] out = scripted.stdoutBytes();
        byte[] err = scripted.stderrBytes();
        if (request.listener() != null) {
            if (out.length > 0) {
                request.listener().onOutput(ExecStream.STDOUT, out, 0, out.length);
            }
            if (err.length > 0) {
                request.listener().onOutput(ExecStream.STDERR, err, 0, err.length);
            }
        }
        boolean outCut = scripted.stdoutTruncated() || out.length > request.stdoutLimit();
        boolean errCut = scripted.stderrTruncated() || err.length > request.stderrLimit();
        return new ExecResult(scripted.exitCode(), Arrays.copyOf(out, Math.min(out.length, request.stdoutLimit())),
                Arrays.copyOf(err, Math.min(err.length, request.stderrLimit())), outCut, errCut,
                scripted.termination(), took.plus(scripted.duration()));
    }

    @Override
    public void remove(String sandboxId) {
        checkUp();
        if (sandboxes.remove(sandboxId) != null) {
            removed.incrementAndGet();
        }
    }

    @Override
    public List<SandboxDescriptor> list(Map<String, String> labels) {
        checkUp();
        return sandboxes.values().stream()
                .map(s -> s.descriptor)
                .filter(d -> d.labels().entrySet().containsAll(labels.entrySet()))
                .toList();
    }

    @Override
    public void close() {
        // Nothing to release: fake sandboxes are plain objects.
    }

    private void checkUp() {
        if (unavailable) {
            throw new SandboxUnavailableException("fake backend is down (setUnavailable(true))");
        }
    }

    private record Sandbox(CreateRequest request, SandboxDescriptor descriptor) {
    }

    private record Rule(Predicate<FakeExec> matcher, Function<FakeExec, ExecResult> handler) {
    }
}
