package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDescriptor;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static dev.sandboxkit.testkit.tck.DriverKit.readFileRequest;
import static dev.sandboxkit.testkit.tck.DriverKit.writeFileRequest;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What every conformance group shares: the fixture, made before and cleaned up after each test (a driver from the
 * kit, a manager on it that runs on a {@link ManualClock} and {@link ManualScheduler}, an in-memory store), and the
 * helpers the tests call. Each group ({@code ExecConformance}, {@code WorkdirConformance}, ...) extends it, and a kit
 * runs the group as a {@code @Nested} class that hands it the kit.
 */
abstract class KitSupport {
    static final Duration TTL = Duration.ofMinutes(10);
    static final Duration REAPER_INTERVAL = Duration.ofSeconds(10);
    private static final AtomicInteger SESSION_COUNTER = new AtomicInteger();

    private final DriverKit kit;
    Path workspaceRoot;
    DriverContext context;
    SandboxDriver driver;
    /** What the driver declares, both halves: a test needing an undeclared one is skipped. */
    Set<Enum<?>> capabilities;
    ManualClock clock;
    ManualScheduler scheduler;
    SessionStore store;
    SandboxManager manager;
    final List<String> sessions = new CopyOnWriteArrayList<>();
    private final List<String> workspaces = new CopyOnWriteArrayList<>();

    KitSupport(DriverKit kit) {
        this.kit = kit;
    }

    /** The spec sandboxes are started from: the kit's. */
    SandboxSpec spec() {
        return kit.spec();
    }

    // ------------------------------------------------------------------ set-up and clean-up

    /**
     * Creates the driver and a manager on it. Runs before every test.
     *
     * @throws IOException if the temporary workspace root cannot be created
     */
    @BeforeEach
    final void startDriverAndManager() throws IOException {
        workspaceRoot = Files.createTempDirectory("sandboxkit-tck").toRealPath();
        String instanceId = "tck-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        context = new DriverContext(instanceId, workspaceRoot, Clock.systemUTC(), Map.of());
        driver = kit.createDriver(context);
        assertThat(driver).as("createDriver(..) result").isNotNull();
        Set<Enum<?>> declared = new java.util.HashSet<>(driver.computeCapabilities());
        declared.addAll(driver.workspaceCapabilities());
        capabilities = Set.copyOf(declared);
        clock = new ManualClock();
        scheduler = new ManualScheduler(clock);
        store = SessionStore.inMemory(); // shared by managers of one test, so a re-opened manager can still destroy
        manager = newManager();
    }

    /**
     * Destroys every session the test used, closes the manager and the driver, removes any sandbox left
     * with the test's owner label, and deletes the workspace root. Runs after every test; a failure here
     * fails the test, because a driver that cannot clean up leaks containers.
     */
    @AfterEach
    final void cleanUp() {
        List<Throwable> errors = new ArrayList<>();
        if (manager != null) {
            for (String id : sessions) {
                run(errors, () -> manager.destroy(id));
            }
            run(errors, manager::close);
        }
        if (driver != null) {
            run(errors, () -> driver.list(Map.of(SandboxLabels.OWNER, context.instanceId()))
                    .forEach(d -> driver.remove(d.id())));
            for (String ws : workspaces) {
                run(errors, () -> driver.deleteWorkspace(ws));
            }
            run(errors, driver::close);
        }
        if (store != null) {
            run(errors, store::close);
        }
        if (workspaceRoot != null) {
            run(errors, () -> deleteRecursively(workspaceRoot));
        }
        if (!errors.isEmpty()) {
            AssertionError failure = new AssertionError("clean-up after the test failed: " + errors.get(0), errors.get(0));
            errors.subList(1, errors.size()).forEach(failure::addSuppressed);
            throw failure;
        }
    }

    SandboxManager newManager() {
        return managerBuilder().build();
    }

    SandboxManager.Builder managerBuilder() {
        return SandboxManager.builder()
                .driver(driver)
                .workspaceRoot(workspaceRoot)
                .instanceId(context.instanceId())
                .clock(clock)
                .scheduler(scheduler)
                .store(store)
                // A fleet of its own: the orphan sweep of this manager and of every other manager on the
                // same backend then never consider each other's containers.
                .fleet(context.instanceId())
                .idleTimeout(TTL)
                .reaperInterval(REAPER_INTERVAL);
    }

    // ------------------------------------------------------------------ helpers

    void requireCapability(Enum<?>... required) {
        for (Enum<?> c : required) {
            assumeTrue(capabilities.contains(c), () -> "driver '" + driver.name() + "' does not declare " + c);
        }
    }

    /** A new session id, remembered so that clean-up destroys the session. */
    String newSessionId(String prefix) {
        String id = prefix + "-" + SESSION_COUNTER.incrementAndGet() + "-"
                + UUID.randomUUID().toString().substring(0, 8);
        sessions.add(id);
        return id;
    }

    Sandbox acquire() {
        return manager.acquire(newSessionId("tck"), spec());
    }

    String createWorkspace(String sessionId) {
        String ws = driver.createWorkspace(sessionId, spec());
        workspaces.add(ws);
        return ws;
    }

    /** Creates a sandbox through the SPI only, labelled like the manager would. */
    String createDirectly(String sessionId) {
        return driver.create(new CreateRequest(sessionId, spec(), createWorkspace(sessionId), labels(sessionId)));
    }

    Map<String, String> labels(String sessionId) {
        return Map.of(SandboxLabels.MANAGED, "true", SandboxLabels.SESSION, sessionId,
                SandboxLabels.OWNER, context.instanceId());
    }

    List<String> ids(Map<String, String> selector) {
        return driver.list(selector).stream().map(SandboxDescriptor::id).toList();
    }

    static ExecResult sh(Sandbox sandbox, String script) {
        return sandbox.exec(ExecRequest.shell(script));
    }

    static void assertSucceeded(ExecResult r) {
        assertThat(r.isSuccess()).as("exec succeeded; got %s, stderr: %s", r, r.stderr()).isTrue();
    }

    static void writeFile(Sandbox sandbox, String path, String content) {
        assertSucceeded(sandbox.exec(writeFileRequest(path, content)));
    }

    static String readFile(Sandbox sandbox, String path) {
        ExecResult r = sandbox.exec(readFileRequest(path));
        assertSucceeded(r);
        return r.stdout();
    }

    private interface Step {
        void run() throws Exception;
    }

    private static void run(List<Throwable> errors, Step step) {
        try {
            step.run();
        } catch (Throwable t) {
            errors.add(t);
        }
    }

    static void deleteRecursively(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    static <T> List<T> runConcurrently(int threads, java.util.function.IntFunction<T> task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CyclicBarrier start = new CyclicBarrier(threads);
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                int n = i;
                futures.add(pool.submit(() -> {
                    start.await(30, TimeUnit.SECONDS);
                    return task.apply(n);
                }));
            }
            List<T> results = new ArrayList<>();
            for (Future<T> f : futures) {
                results.add(f.get(120, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
