package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ExecStream;
import dev.sandboxkit.FollowResult;
import dev.sandboxkit.ProcessOptions;
import dev.sandboxkit.ProcessOutput;
import dev.sandboxkit.ProcessStatus;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxProcess;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SnapshotId;
import dev.sandboxkit.SnapshotInfo;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.ShellSession;
import dev.sandboxkit.ShellSessionEndedException;
import dev.sandboxkit.SandboxUnsupportedException;
import dev.sandboxkit.Terminal;
import dev.sandboxkit.TerminalSize;
import dev.sandboxkit.WorkspaceTemplate;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.DriverCapability;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDescriptor;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
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
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The conformance kit for {@link SandboxDriver} implementations. Extend it in a test class and return
 * a new driver from {@link #createDriver(DriverContext)}:
 *
 * <pre>{@code
 * class MyDriverTckTest extends SandboxDriverTck {
 *     @Override
 *     protected SandboxDriver createDriver(DriverContext context) {
 *         return new MyDriver(context);
 *     }
 * }
 * }</pre>
 *
 * <p>Most tests drive a real {@link SandboxManager} built on the driver instance, the way applications
 * use it; the lifecycle group also calls the SPI directly. The manager runs on a {@link ManualClock}
 * and {@link ManualScheduler}, so idle reaping happens exactly when a test moves time, without
 * sleeping; the driver itself gets the system clock because drivers measure real time (exec timeouts,
 * readiness).
 *
 * <p>Optional behaviour is tested only when the driver declares the matching {@link DriverCapability};
 * a test for an undeclared capability is skipped (an assumption), never silently passed. Tests that
 * need a real shell in the sandbox require {@link DriverCapability#REAL_PROCESSES}. The commands used
 * are those of a minimal POSIX userland (BusyBox is enough): {@code sh}, {@code printf}, {@code cat},
 * {@code head}, {@code ls}, {@code ps}, {@code sleep}, {@code wc}, {@code yes}, and for terminals {@code tty} and
 * {@code stty}.
 *
 * <p>Every test cleans up what it created: sessions are destroyed, the manager is closed, sandboxes
 * still carrying the test's owner label are removed and the workspace root is deleted. A new owner
 * instance id is used for every test, so runs never see each other's sandboxes.
 */
public abstract class SandboxDriverTck {
    /** System property naming the image the kit runs; the sandboxes need only a POSIX shell. */
    public static final String IMAGE_PROPERTY = "sandboxkit.test.image";
    /** The image used when {@value #IMAGE_PROPERTY} is not set: built by {@code scripts/build-test-images.sh}. */
    public static final String DEFAULT_IMAGE = "sandboxkit-test:latest";

    private static final Duration TTL = Duration.ofMinutes(10);
    private static final Duration REAPER_INTERVAL = Duration.ofSeconds(10);
    /** Slack allowed on top of an exec timeout before the call must have returned. */
    private static final Duration TIMEOUT_SLACK = Duration.ofSeconds(5);
    private static final String WRITE_SCRIPT = "printf '%s' \"$1\" > \"$2\"";
    private static final AtomicInteger SESSION_COUNTER = new AtomicInteger();
    /** How long a terminal test waits for output to appear or end. */
    private static final int TRANSCRIPT_SECONDS = 30;

    private Path workspaceRoot;
    private DriverContext context;
    private SandboxDriver driver;
    private Set<DriverCapability> capabilities;
    private ManualClock clock;
    private ManualScheduler scheduler;
    private SessionStore store;
    private SandboxManager manager;
    private final List<String> sessions = new CopyOnWriteArrayList<>();
    private final List<String> workspaces = new CopyOnWriteArrayList<>();

    /** For subclasses. */
    protected SandboxDriverTck() {
    }

    /**
     * Creates the driver under test. Called once per test, on the test thread, before the test runs;
     * the kit closes the driver after the test.
     *
     * @param context the settings a manager would give the driver: a fresh owner instance id, a
     *                temporary workspace root, the system clock and no properties
     * @return a new driver
     */
    protected abstract SandboxDriver createDriver(DriverContext context);

    /**
     * The spec sandboxes are started from. Default: the image from the system property
     * {@value #IMAGE_PROPERTY} (else {@value #DEFAULT_IMAGE}), never pulled, hardened defaults otherwise.
     * Called on the test thread.
     *
     * @return the spec
     */
    protected SandboxSpec spec() {
        return SandboxSpec.builder()
                .image(System.getProperty(IMAGE_PROPERTY, DEFAULT_IMAGE))
                .pullPolicy(PullPolicy.NEVER)
                .build();
    }

    /**
     * The command the kit runs to write a text file in the workdir: {@code printf '%s' "$1" > "$2"} under
     * {@code /bin/sh}. Drivers without a shell (fakes) may script an answer to exactly this command.
     *
     * @param path    path relative to the working directory
     * @param content file content
     * @return the request
     */
    protected static ExecRequest writeFileRequest(String path, String content) {
        return ExecRequest.of("/bin/sh", "-c", WRITE_SCRIPT, "sh", content, path);
    }

    /**
     * Whether an exec is the kit's write-file command, for drivers that script it.
     *
     * @param command the exec's argv
     * @return {@code true} if it is {@link #writeFileRequest}'s command; then argv[4] is the content and argv[5] the path
     */
    protected static boolean isWriteFileCommand(List<String> command) {
        return command.size() == 6 && command.get(0).equals("/bin/sh") && command.get(2).equals(WRITE_SCRIPT);
    }

    /**
     * The command the kit runs to read a file in the workdir: {@code cat path}. A missing file must give a
     * non-zero exit code.
     *
     * @param path path relative to the working directory
     * @return the request
     */
    protected static ExecRequest readFileRequest(String path) {
        return ExecRequest.of("cat", path);
    }

    // ------------------------------------------------------------------ set-up and clean-up

    /**
     * Creates the driver and a manager on it. Runs before every test.
     *
     * @throws IOException if the temporary workspace root cannot be created
     */
    @BeforeEach
    protected final void startDriverAndManager() throws IOException {
        workspaceRoot = Files.createTempDirectory("sandboxkit-tck").toRealPath();
        String instanceId = "tck-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        context = new DriverContext(instanceId, workspaceRoot, Clock.systemUTC(), Map.of());
        driver = createDriver(context);
        assertThat(driver).as("createDriver(..) result").isNotNull();
        capabilities = Set.copyOf(driver.capabilities());
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
    protected final void cleanUp() {
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

    private SandboxManager newManager() {
        return managerBuilder().build();
    }

    private SandboxManager.Builder managerBuilder() {
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

    private void requireCapability(DriverCapability... required) {
        for (DriverCapability c : required) {
            assumeTrue(capabilities.contains(c), () -> "driver '" + driver.name() + "' does not declare " + c);
        }
    }

    /** A new session id, remembered so that clean-up destroys the session. */
    private String newSessionId(String prefix) {
        String id = prefix + "-" + SESSION_COUNTER.incrementAndGet() + "-"
                + UUID.randomUUID().toString().substring(0, 8);
        sessions.add(id);
        return id;
    }

    private Sandbox acquire() {
        return manager.acquire(newSessionId("tck"), spec());
    }

    private String createWorkspace(String sessionId) {
        String ws = driver.createWorkspace(sessionId, spec());
        workspaces.add(ws);
        return ws;
    }

    /** Creates a sandbox through the SPI only, labelled like the manager would. */
    private String createDirectly(String sessionId) {
        return driver.create(new CreateRequest(sessionId, spec(), createWorkspace(sessionId), labels(sessionId)));
    }

    private Map<String, String> labels(String sessionId) {
        return Map.of(SandboxLabels.MANAGED, "true", SandboxLabels.SESSION, sessionId,
                SandboxLabels.OWNER, context.instanceId());
    }

    private List<String> ids(Map<String, String> selector) {
        return driver.list(selector).stream().map(SandboxDescriptor::id).toList();
    }

    private static ExecResult sh(Sandbox sandbox, String script) {
        return sandbox.exec(ExecRequest.shell(script));
    }

    private static void assertSucceeded(ExecResult r) {
        assertThat(r.isSuccess()).as("exec succeeded; got %s, stderr: %s", r, r.stderr()).isTrue();
    }

    private static void writeFile(Sandbox sandbox, String path, String content) {
        assertSucceeded(sandbox.exec(writeFileRequest(path, content)));
    }

    private static String readFile(Sandbox sandbox, String path) {
        ExecResult r = sandbox.exec(readFileRequest(path));
        assertSucceeded(r);
        return r.stdout();
    }

    private static long millisSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
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

    private static void deleteRecursively(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static <T> List<T> runConcurrently(int threads, java.util.function.IntFunction<T> task) throws Exception {
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

    // ------------------------------------------------------------------ lifecycle

    @Nested
    @DisplayName("lifecycle")
    class Lifecycle {
        @Test
        @DisplayName("ping succeeds and the driver names itself")
        void pingAndName() {
            driver.ping();
            assertThat(driver.name()).isNotBlank();
            assertThat(manager.driverName()).isEqualTo(driver.name());
        }

        @Test
        @DisplayName("create returns a sandbox that accepts execs at once and is listed with its labels")
        void createThenExecAndList() {
            String session = newSessionId("tck-direct");
            String id = createDirectly(session);

            assertThat(driver.exec(id, ExecRequest.of("true")).exitCode()).isZero();
            List<SandboxDescriptor> found = driver.list(Map.of(SandboxLabels.SESSION, session));
            assertThat(found).singleElement().satisfies(d -> {
                assertThat(d.id()).isEqualTo(id);
                assertThat(d.running()).isTrue();
                assertThat(d.labels()).containsAllEntriesOf(labels(session));
            });
        }

        @Test
        @DisplayName("list returns exactly the sandboxes that carry every given label")
        void listByLabels() {
            String a = newSessionId("tck-list-a");
            String b = newSessionId("tck-list-b");
            String idA = createDirectly(a);
            String idB = createDirectly(b);
            String owner = context.instanceId();

            assertThat(ids(Map.of(SandboxLabels.OWNER, owner))).containsExactlyInAnyOrder(idA, idB);
            assertThat(ids(Map.of(SandboxLabels.MANAGED, "true", SandboxLabels.OWNER, owner)))
                    .containsExactlyInAnyOrder(idA, idB);
            assertThat(ids(Map.of(SandboxLabels.SESSION, a))).containsExactly(idA);
            assertThat(ids(labels(b))).containsExactly(idB);
            assertThat(ids(Map.of(SandboxLabels.SESSION, a, SandboxLabels.OWNER, "tck-someone-else"))).isEmpty();
            assertThat(ids(Map.of(SandboxLabels.OWNER, "tck-nobody-" + UUID.randomUUID()))).isEmpty();
        }

        @Test
        @DisplayName("remove is idempotent, and exec on a removed sandbox is 'not found'")
        void removeIdempotent() {
            String session = newSessionId("tck-remove");
            String id = createDirectly(session);

            driver.remove(id);
            driver.remove(id);

            assertThat(ids(Map.of(SandboxLabels.SESSION, session))).isEmpty();
            assertThatThrownBy(() -> driver.exec(id, ExecRequest.of("true")))
                    .isInstanceOf(SandboxNotFoundException.class);
        }

        @Test
        @DisplayName("createWorkspace and deleteWorkspace are idempotent")
        void workspaceIdempotent() {
            String session = newSessionId("tck-ws");
            String first = createWorkspace(session);
            String second = createWorkspace(session);
            assertThat(second).isEqualTo(first);
            if (capabilities.contains(DriverCapability.HOST_WORKSPACE)) {
                assertThat(Path.of(first)).isDirectory();
                assertThat(Path.of(first).toAbsolutePath().normalize()).startsWith(workspaceRoot);
            }

            driver.deleteWorkspace(first);
            driver.deleteWorkspace(first);

            if (capabilities.contains(DriverCapability.HOST_WORKSPACE)) {
                assertThat(Path.of(first)).doesNotExist();
            }
        }

        @Test
        @DisplayName("acquire creates one sandbox for the session and returns it again while it lives")
        void acquireReuses() {
            String session = newSessionId("tck-acquire");
            Sandbox first = manager.acquire(session, spec());
            Sandbox second = manager.acquire(session, spec());

            SessionInfo info = second.info();
            assertThat(info.state()).isEqualTo(SessionState.ACTIVE);
            assertThat(info.sandboxId()).isNotNull().isEqualTo(first.info().sandboxId());
            assertThat(ids(Map.of(SandboxLabels.SESSION, session))).containsExactly(info.sandboxId());
        }

        @Test
        @DisplayName("destroy removes the sandbox, is idempotent, and the session is then 'not found'")
        void destroyIdempotent() {
            Sandbox sandbox = acquire();
            String session = sandbox.sessionId();

            sandbox.destroy();
            manager.destroy(session);

            assertThat(ids(Map.of(SandboxLabels.SESSION, session))).isEmpty();
            assertThat(manager.session(session).orElseThrow().state()).isEqualTo(SessionState.DESTROYED);
            assertThatThrownBy(() -> sandbox.exec("true")).isInstanceOf(SandboxNotFoundException.class);
        }

        @Test
        @DisplayName("closing the manager removes every sandbox it started")
        void closeRemovesSandboxes() {
            acquire();
            acquire();
            assertThat(ids(Map.of(SandboxLabels.OWNER, context.instanceId()))).hasSize(2);

            manager.close();

            assertThat(ids(Map.of(SandboxLabels.OWNER, context.instanceId()))).isEmpty();
            manager = newManager(); // so that clean-up can destroy the suspended sessions and their workdirs
        }
    }

    // ------------------------------------------------------------------ exec

    @Nested
    @DisplayName("exec")
    class Exec {
        @Test
        @DisplayName("reports exit codes as data")
        void exitCodes() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = acquire();

            ExecResult ok = sandbox.exec("true");
            ExecResult three = sh(sandbox, "exit 3");
            ExecResult big = sh(sandbox, "exit 255");

            assertThat(ok.exitCode()).isZero();
            assertThat(ok.isSuccess()).isTrue();
            assertThat(three.exitCode()).isEqualTo(3);
            assertThat(three.termination()).isEqualTo(ExecResult.Termination.EXITED);
            assertThat(three.isSuccess()).isFalse();
            assertThat(big.exitCode()).isEqualTo(255);
        }

        @Test
        @DisplayName("keeps stdout and stderr apart")
        void separateStderr() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            ExecResult r = sh(acquire(), "echo out; echo err >&2; echo out2; echo err2 >&2");

            assertThat(r.stdout()).isEqualTo("out\nout2\n");
            assertThat(r.stderr()).isEqualTo("err\nerr2\n");
        }

        @Test
        @DisplayName("gives per-exec env to that exec only, on top of the spec's env")
        void perExecEnv() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            String session = newSessionId("tck-env");
            Sandbox sandbox = manager.acquire(session,
                    spec().toBuilder().env("TCK_SPEC", "from-spec").env("TCK_BOTH", "spec").build());
            String show = "echo \"${TCK_SPEC:-unset} ${TCK_BOTH:-unset} ${TCK_SECRET:-unset}\"";

            ExecResult with = sandbox.exec(ExecRequest.shell(show)
                    .withEnv(Map.of("TCK_SECRET", "s3cr3t value", "TCK_BOTH", "exec")));
            ExecResult after = sandbox.exec(ExecRequest.shell(show));

            assertThat(with.stdout()).isEqualTo("from-spec exec s3cr3t value\n");
            assertThat(after.stdout()).isEqualTo("from-spec spec unset\n");
        }

        @Test
        @DisplayName("runs in the workspace by default, or in the requested working directory")
        void workingDir() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = acquire();
            assertSucceeded(sh(sandbox, "mkdir -p sub/dir"));

            assertThat(sandbox.exec("pwd").stdout()).isEqualTo(SandboxSpec.WORKSPACE + "\n");
            assertThat(sandbox.exec(ExecRequest.of("pwd").withWorkingDir("sub/dir")).stdout())
                    .isEqualTo(SandboxSpec.WORKSPACE + "/sub/dir\n");
            assertThat(sandbox.exec(ExecRequest.of("pwd").withWorkingDir(SandboxSpec.WORKSPACE + "/sub")).stdout())
                    .isEqualTo(SandboxSpec.WORKSPACE + "/sub\n");
        }

        @Test
        @DisplayName("feeds stdin and then closes it, so a command reading to EOF finishes")
        void stdinThenEof() {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.STDIN);
            Sandbox sandbox = acquire();
            byte[] all = new byte[256];
            for (int i = 0; i < all.length; i++) {
                all[i] = (byte) i;
            }
            byte[] large = new byte[1024 * 1024 + 7];
            Arrays.fill(large, (byte) 'x');

            assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
                ExecResult text = sandbox.exec(ExecRequest.of("cat").withStdin("hello\nwörld").withTimeout(Duration.ofSeconds(20)));
                ExecResult binary = sandbox.exec(ExecRequest.of("cat").withStdin(all).withTimeout(Duration.ofSeconds(20)));
                ExecResult counted = sandbox.exec(ExecRequest.of("wc", "-c").withStdin(large).withTimeout(Duration.ofSeconds(20)));
                ExecResult empty = sandbox.exec(ExecRequest.of("cat").withStdin(new byte[0]).withTimeout(Duration.ofSeconds(20)));

                assertThat(text.timedOut()).as("cat saw EOF").isFalse();
                assertThat(text.stdout()).isEqualTo("hello\nwörld");
                assertThat(binary.stdoutBytes()).isEqualTo(all);
                assertThat(counted.stdout().trim()).isEqualTo(String.valueOf(large.length));
                assertThat(empty.timedOut()).isFalse();
                assertThat(empty.stdoutBytes()).isEmpty();
            });
        }

        @Test
        @DisplayName("gives a command that reads stdin, when none is given, EOF at once")
        void noStdinMeansEof() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = acquire();

            assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
                ExecResult r = sandbox.exec(ExecRequest.of("cat").withTimeout(Duration.ofSeconds(10)));
                assertThat(r.timedOut()).as("cat without stdin must not wait for input").isFalse();
                assertThat(r.exitCode()).isZero();
            });
        }

        @Test
        @DisplayName("kills a command that runs past its timeout, keeps its earlier output, and the sandbox stays usable")
        void timeout() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = acquire();
            Duration limit = Duration.ofSeconds(1);

            long t0 = System.nanoTime();
            ExecResult r = assertTimeoutPreemptively(limit.plus(TIMEOUT_SLACK).plusSeconds(10), () ->
                    sandbox.exec(ExecRequest.shell("echo started; sleep 300").withTimeout(limit)));
            long took = millisSince(t0);

            assertThat(r.timedOut()).as("result %s", r).isTrue();
            assertThat(r.termination()).isEqualTo(ExecResult.Termination.TIMED_OUT);
            assertThat(r.stdout()).isEqualTo("started\n");
            assertThat(r.stderr()).as("the kill must not add text to stderr").isEmpty();
            assertThat(took).isGreaterThanOrEqualTo(limit.toMillis() - 50)
                    .isLessThan(limit.plus(TIMEOUT_SLACK).toMillis());
            assertThat(sandbox.exec("echo", "still here").stdout()).isEqualTo("still here\n");
        }

        @Test
        @DisplayName("a command killed by a signal exits with 128 + the signal number and nothing is added to its output")
        void killedBySignal() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = acquire();

            ExecResult r = sandbox.exec(ExecRequest.shell("echo before; echo err >&2; kill -9 $$; echo after"));

            assertThat(r.exitCode()).as("result %s", r).isEqualTo(137);
            assertThat(r.timedOut()).isFalse();
            assertThat(r.stdout()).isEqualTo("before\n");
            assertThat(r.stderr()).isEqualTo("err\n");
        }

        @Test
        @DisplayName("on timeout, kills the command's children too")
        void timeoutKillsChildren() {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.KILL_PROCESS_GROUP);
            Sandbox sandbox = acquire();
            Duration limit = Duration.ofSeconds(1);

            long t0 = System.nanoTime();
            ExecResult r = assertTimeoutPreemptively(limit.plus(TIMEOUT_SLACK).plusSeconds(10), () ->
                    sandbox.exec(ExecRequest.shell("sleep 300 & sleep 300").withTimeout(limit)));
            long took = millisSince(t0);

            assertThat(r.timedOut()).as("result %s", r).isTrue();
            assertThat(took).isLessThan(limit.plus(TIMEOUT_SLACK).toMillis());
            // The kill may take a moment to land: look for survivors for up to three seconds.
            String ps = "";
            for (int i = 0; i < 30; i++) {
                ps = sandbox.exec("ps").stdout();
                if (!ps.contains("sleep 300")) {
                    break;
                }
                sleep(100);
            }
            assertThat(ps).as("processes left after the timeout").doesNotContain("sleep 300");
            assertThat(sandbox.exec("true").isSuccess()).isTrue();
        }

        @Test
        @DisplayName("caps each stream at its limit and marks it truncated only when it was longer")
        void outputCaps() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = acquire();
            List<String> command = List.of("/bin/sh", "-c", "head -c 5000 /dev/zero; yes b | head -c 3000 >&2");

            ExecResult capped = sandbox.exec(ExecRequest.of(command).withStdoutLimit(1000).withStderrLimit(2000));
            ExecResult exact = sandbox.exec(ExecRequest.of(command).withStdoutLimit(5000).withStderrLimit(3000));
            ExecResult zero = sandbox.exec(ExecRequest.of(command).withOutputLimit(0));

            assertThat(capped.stdoutBytes()).hasSize(1000).containsOnly((byte) 0);
            assertThat(capped.stdoutTruncated()).isTrue();
            assertThat(capped.stderr()).hasSize(2000).startsWith("b\nb\n");
            assertThat(capped.stderrTruncated()).isTrue();
            assertThat(capped.exitCode()).isZero();

            assertThat(exact.stdoutBytes()).hasSize(5000);
            assertThat(exact.stderr()).hasSize(3000);
            assertThat(exact.stdoutTruncated()).isFalse();
            assertThat(exact.stderrTruncated()).isFalse();

            assertThat(zero.stdoutBytes()).isEmpty();
            assertThat(zero.stderrBytes()).isEmpty();
            assertThat(zero.stdoutTruncated()).isTrue();
            assertThat(zero.stderrTruncated()).isTrue();
        }

        @Test
        @DisplayName("streams a 50 MiB output to the listener, one call at a time, while the result stays capped")
        void largeOutputStreams() {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.STREAMING);
            Sandbox sandbox = acquire();
            long size = 50L * 1024 * 1024;
            AtomicLong stdout = new AtomicLong();
            AtomicLong nonZero = new AtomicLong();
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger overlaps = new AtomicInteger();

            ExecResult r = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> sandbox.exec(
                    ExecRequest.of("head", "-c", String.valueOf(size), "/dev/zero").withTimeout(Duration.ofSeconds(50))
                            .withListener((stream, bytes, offset, length) -> {
                                if (inside.incrementAndGet() != 1) {
                                    overlaps.incrementAndGet();
                                }
                                if (stream == ExecStream.STDOUT) {
                                    stdout.addAndGet(length);
                                    for (int i = offset; i < offset + length; i++) {
                                        if (bytes[i] != 0) {
                                            nonZero.incrementAndGet();
                                        }
                                    }
                                }
                                inside.decrementAndGet();
                            })));

            assertThat(r.exitCode()).isZero();
            assertThat(stdout.get()).as("bytes seen by the listener").isEqualTo(size);
            assertThat(nonZero.get()).isZero();
            assertThat(overlaps.get()).as("concurrent listener calls").isZero();
            assertThat(r.stdoutBytes()).hasSize(ExecRequest.DEFAULT_OUTPUT_LIMIT);
            assertThat(r.stdoutTruncated()).isTrue();
        }

        @Test
        @DisplayName("delivers output to the listener while the command is still running")
        void streamsWhileRunning() {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.STREAMING);
            Sandbox sandbox = acquire();
            AtomicLong firstChunkAt = new AtomicLong();
            ByteArrayOutputStream seen = new ByteArrayOutputStream();

            ExecResult r = sandbox.exec(ExecRequest.shell("echo first; sleep 1; echo second")
                    .withTimeout(Duration.ofSeconds(20))
                    .withListener((stream, bytes, offset, length) -> {
                        firstChunkAt.compareAndSet(0, System.nanoTime());
                        synchronized (seen) {
                            seen.write(bytes, offset, length);
                        }
                    }));
            long returnedAt = System.nanoTime();

            assertThat(r.stdout()).isEqualTo("first\nsecond\n");
            synchronized (seen) {
                assertThat(seen.toString(StandardCharsets.UTF_8)).isEqualTo("first\nsecond\n");
            }
            assertThat((returnedAt - firstChunkAt.get()) / 1_000_000)
                    .as("ms between the first chunk and the end of the exec").isGreaterThanOrEqualTo(500);
        }

        @Test
        @DisplayName("returns every byte value unchanged")
        void binaryOutput() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            StringBuilder format = new StringBuilder();
            byte[] expected = new byte[256];
            for (int i = 0; i < 256; i++) {
                format.append(String.format("\\%03o", i));
                expected[i] = (byte) i;
            }

            ExecResult r = acquire().exec(ExecRequest.of("/bin/sh", "-c", "printf \"$1\"; printf \"$1\" >&2", "sh",
                    format.toString()));

            assertThat(r.stdoutBytes()).isEqualTo(expected);
            assertThat(r.stderrBytes()).isEqualTo(expected);
        }

        @Test
        @DisplayName("returns UTF-8 text unchanged, also across chunk boundaries")
        void utf8Output() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            String text = "héllo wörld ✓ 日本語 🙂";
            Sandbox sandbox = acquire();

            ExecResult small = sandbox.exec("printf", "%s", text);
            ExecResult large = sandbox.exec(ExecRequest.of("/bin/sh", "-c",
                    "i=0; while [ $i -lt 3000 ]; do printf '%s' \"$1\"; i=$((i+1)); done", "sh", text));

            assertThat(small.stdout()).isEqualTo(text);
            assertThat(large.stdout()).isEqualTo(text.repeat(3000));
        }

        @Test
        @DisplayName("reports a missing program as exit code 127 and one that cannot run as 126, with a message, not as an exception")
        void missingBinary() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = acquire();
            writeFile(sandbox, "data.txt", "not a program");

            ExecResult absolute = sandbox.exec("/no/such/program", "arg");
            ExecResult onPath = sandbox.exec("no-such-program-tck");
            ExecResult notExecutable = sandbox.exec(SandboxSpec.WORKSPACE + "/data.txt");
            ExecResult directory = sandbox.exec(SandboxSpec.WORKSPACE);

            assertCannotStart(absolute, 127, "/no/such/program");
            assertCannotStart(onPath, 127, "no-such-program-tck");
            assertCannotStart(notExecutable, 126, "data.txt");
            assertCannotStart(directory, 126, SandboxSpec.WORKSPACE);
            assertThat(sandbox.exec("true").isSuccess()).isTrue();
        }

        @Test
        @DisplayName("a working directory that is missing or that the sandbox user cannot enter gives exit code 126 and runs nothing")
        void workingDirThatCannotBeEntered() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = acquire();
            assertSucceeded(sh(sandbox, "mkdir -p locked/inner && touch locked/inner/ran && chmod 000 locked"));
            try {
                ExecResult missing = sandbox.exec(ExecRequest.of("touch", "ran").withWorkingDir("no-such-dir"));
                assertCannotStart(missing, 126, SandboxSpec.WORKSPACE + "/no-such-dir");
                assertThat(sh(sandbox, "ls").stdout()).doesNotContain("ran");

                assumeTrue(!sh(sandbox, "cd locked 2>/dev/null && echo entered").stdout().contains("entered"),
                        "the sandbox user can enter a mode 0000 directory (root with CAP_DAC_OVERRIDE)");
                ExecResult locked = sandbox.exec(ExecRequest.of("pwd").withWorkingDir("locked"));
                ExecResult below = sandbox.exec(ExecRequest.of("rm", "ran").withWorkingDir("locked/inner"));

                assertCannotStart(locked, 126, SandboxSpec.WORKSPACE + "/locked");
                assertCannotStart(below, 126, SandboxSpec.WORKSPACE + "/locked/inner");
            } finally {
                assertSucceeded(sh(sandbox, "chmod 755 locked"));
            }
            assertThat(sh(sandbox, "ls locked/inner").stdout()).as("the command must not have run").contains("ran");
        }

        @Test
        @DisplayName("an argument list the kernel refuses (E2BIG) gives exit code 126, as a shell reports it")
        void argumentListTooLong() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = acquire();
            // One argument over MAX_ARG_STRLEN (128 KiB), and a total over ARG_MAX (a quarter of the stack
            // limit: 2 MiB under the usual 8 MiB).
            String longArgument = "x".repeat(128 * 1024 + 1);
            List<String> manyArguments = new ArrayList<>(List.of("echo"));
            String chunk = "y".repeat(64 * 1024);
            for (int i = 0; i < 48; i++) {
                manyArguments.add(chunk);
            }

            // Output limits above the echoed size, so a list that runs shows whole (the default limit is 1 MiB).
            ExecResult tooLong = sandbox.exec(ExecRequest.of("echo", longArgument)
                    .withOutputLimit(4 * 1024 * 1024).withTimeout(Duration.ofSeconds(60)));
            ExecResult tooMany = sandbox.exec(ExecRequest.of(manyArguments)
                    .withOutputLimit(4 * 1024 * 1024).withTimeout(Duration.ofSeconds(60)));
            ExecResult fits = sandbox.exec(ExecRequest.of("echo", "y".repeat(100 * 1024)).withTimeout(Duration.ofSeconds(60)));

            // A kernel that refuses the list (Linux: E2BIG) gives 126 with the reason; one without those limits (gVisor
            // has no per-argument cap) runs the command, and then its output must be whole. Never anything else.
            assertRefusedOrWhole(tooLong, longArgument.length() + 1);
            assertRefusedOrWhole(tooMany, 48 * (chunk.length() + 1));
            assertThat(fits.exitCode()).as("stderr: %s", fits.stderr()).isZero();
            assertThat(fits.stdout()).hasSize(100 * 1024 + 1);
        }

        private void assertRefusedOrWhole(ExecResult r, int wholeOutput) {
            if (r.exitCode() == 0) {
                assertThat(r.stdout()).as("a long argument list that ran").hasSize(wholeOutput);
                return;
            }
            assertThat(r.exitCode()).as("result %s, stderr: %s", r, r.stderr()).isEqualTo(126);
            assertThat(r.stdout()).isEmpty();
            assertThat(r.stderr()).containsIgnoringCase("argument list too long");
        }

        @Test
        @DisplayName("execs racing the removal of their sandbox end with their result, KILLED, or 'not found' when they did not start")
        void execsRacingRemoval() throws Exception {
            requireCapability(DriverCapability.REAL_PROCESSES);
            ExecutorService pool = Executors.newCachedThreadPool();
            try {
                for (int round = 0; round < 3; round++) {
                    String id = createDirectly(newSessionId("tck-race"));
                    String marker = "running-" + round;
                    Future<ExecResult> running = pool.submit(() -> driver.exec(id,
                            ExecRequest.shell("echo before; touch " + marker + "; sleep 60")
                                    .withTimeout(Duration.ofSeconds(90))));
                    awaitFile(id, marker);
                    CyclicBarrier go = new CyclicBarrier(5);
                    List<Future<String>> racing = new ArrayList<>();
                    for (int i = 0; i < 4; i++) {
                        long offset = 10L * i;
                        racing.add(pool.submit(() -> {
                            go.await(30, TimeUnit.SECONDS);
                            Thread.sleep(offset);
                            return raceOutcome(id);
                        }));
                    }
                    go.await(30, TimeUnit.SECONDS);
                    Thread.sleep(15);
                    driver.remove(id);

                    ExecResult killed = running.get(60, TimeUnit.SECONDS);
                    assertThat(killed.termination()).as("result %s, stderr: %s", killed, killed.stderr())
                            .isEqualTo(ExecResult.Termination.KILLED);
                    assertThat(killed.stdout()).isEqualTo("before\n");
                    for (Future<String> f : racing) {
                        assertThat(f.get(60, TimeUnit.SECONDS)).isIn("EXITED", "KILLED", "NOT_FOUND");
                    }
                    assertThatThrownBy(() -> driver.exec(id, ExecRequest.of("true")))
                            .isInstanceOf(SandboxNotFoundException.class);
                }
            } finally {
                pool.shutdownNow();
            }
        }

        private String raceOutcome(String id) {
            try {
                ExecResult r = driver.exec(id, ExecRequest.of("echo", "short").withTimeout(Duration.ofSeconds(30)));
                if (r.termination() == ExecResult.Termination.KILLED) {
                    return "KILLED";
                }
                return r.exitCode() == 0 && r.stdout().equals("short\n") ? "EXITED"
                        : r + " stdout: " + r.stdout() + " stderr: " + r.stderr();
            } catch (SandboxNotFoundException e) {
                return "NOT_FOUND";
            } catch (RuntimeException e) {
                return e.toString();
            }
        }

        private void awaitFile(String id, String file) {
            for (int i = 0; i < 300; i++) {
                if (driver.exec(id, ExecRequest.of("test", "-e", file)).exitCode() == 0) {
                    return;
                }
                sleep(20);
            }
            throw new AssertionError(file + " did not appear");
        }
    }

    private static void assertCannotStart(ExecResult r, int exitCode, String named) {
        assertThat(r.exitCode()).as("result %s, stderr: %s", r, r.stderr()).isEqualTo(exitCode);
        assertThat(r.termination()).isEqualTo(ExecResult.Termination.EXITED);
        assertThat(r.stdout()).isEmpty();
        assertThat(r.stderr()).as("the message names %s", named).contains(named);
    }

    // ------------------------------------------------------------------ shell sessions

    @Nested
    @DisplayName("shell sessions")
    class ShellSessions {
        @Test
        @DisplayName("cd and export carry over between commands; a plain exec does not see them")
        void cdAndExportPersist() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = acquire();
            try (ShellSession shell = sandbox.shell()) {
                assertSucceeded(shell.exec("mkdir -p sub/dir && cd sub"));
                assertSucceeded(shell.exec("export GREETING='hello world' QUOTE=\"it's\""));
                assertSucceeded(shell.exec(ExecRequest.of("cd", "dir")));

                ExecResult r = shell.exec("pwd; echo \"$GREETING|$QUOTE\"");

                assertThat(r.stdout()).isEqualTo(SandboxSpec.WORKSPACE + "/sub/dir\nhello world|it's\n");
                assertThat(sh(sandbox, "pwd; echo \"${GREETING-unset}\"").stdout()).isEqualTo(SandboxSpec.WORKSPACE + "\nunset\n");
                assertSucceeded(shell.exec("unset GREETING"));
                assertThat(shell.exec("echo \"${GREETING-unset}\"").stdout()).isEqualTo("unset\n");
            }
        }

        @Test
        @DisplayName("a command's own env is visible to it only and never saved; non-exported variables last one command")
        void perCommandEnv() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            try (ShellSession shell = acquire().shell()) {
                ExecResult with = shell.exec(ExecRequest.shell("echo \"$TOKEN\"; export KEPT=yes; plain=1")
                        .withEnv("TOKEN", "s3cret"));
                assertThat(with.stdout()).isEqualTo("s3cret\n");

                ExecResult after = shell.exec("echo \"${TOKEN-unset} ${KEPT-unset} ${plain-unset}\"");

                assertThat(after.stdout()).isEqualTo("unset yes unset\n");
            }
        }

        @Test
        @DisplayName("the spec's env is there from the start and export overrides it")
        void specEnv() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = manager.acquire(newSessionId("tck-shell"), spec().toBuilder().env("FROM_SPEC", "spec").build());
            try (ShellSession shell = sandbox.shell()) {
                assertThat(shell.exec("echo $FROM_SPEC").stdout()).isEqualTo("spec\n");
                assertSucceeded(shell.exec("export FROM_SPEC=mine"));
                assertThat(shell.exec("echo $FROM_SPEC").stdout()).isEqualTo("mine\n");
            }
        }

        @Test
        @DisplayName("exit ends the command, not the session; exit codes, streams and syntax errors work as for exec")
        void exitCodesAndStreams() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            try (ShellSession shell = acquire().shell()) {
                ExecResult exit = shell.exec("cd /tmp; echo out; echo err >&2; exit 3");
                assertThat(exit.exitCode()).isEqualTo(3);
                assertThat(exit.stdout()).isEqualTo("out\n");
                assertThat(exit.stderr()).isEqualTo("err\n");
                assertThat(shell.exec("echo \"x").exitCode()).as("a syntax error").isNotZero();
                assertThat(shell.exec("pwd").stdout()).isEqualTo("/tmp\n");
                assertThat(shell.isOpen()).isTrue();
            }
        }

        @Test
        @DisplayName("a command reads its stdin up to EOF")
        void stdin() {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.STDIN);
            try (ShellSession shell = acquire().shell()) {
                assertThat(shell.exec(ExecRequest.shell("cat; echo .").withStdin("in")).stdout()).isEqualTo("in.\n");
            }
        }

        @Test
        @DisplayName("a timeout kills the command and its children and keeps the state from before it")
        void timeoutKeepsEarlierState() {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.KILL_PROCESS_GROUP);
            try (ShellSession shell = acquire().shell()) {
                assertSucceeded(shell.exec("mkdir -p a && cd a && export V=1"));

                ExecResult slow = shell.exec(ExecRequest.shell("cd /; export V=2; sleep 300 & sleep 300")
                        .withTimeout(Duration.ofSeconds(1)));

                assertThat(slow.timedOut()).isTrue();
                assertThat(slow.stderr()).isEmpty();
                assertThat(shell.exec("pwd; echo $V").stdout()).isEqualTo(SandboxSpec.WORKSPACE + "/a\n1\n");
                String ps = "";
                for (int i = 0; i < 30 && (ps = shell.exec("ps").stdout()).contains("sleep 300"); i++) {
                    sleep(100);
                }
                assertThat(ps).doesNotContain("sleep 300");
            }
        }

        @Test
        @DisplayName("two sessions in one sandbox are independent")
        void independentSessions() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = acquire();
            try (ShellSession one = sandbox.shell(); ShellSession two = sandbox.shell()) {
                assertSucceeded(one.exec("cd /tmp && export WHO=one"));
                assertSucceeded(two.exec("cd " + SandboxSpec.WORKSPACE + " && export WHO=two"));
                assertThat(one.exec("pwd; echo $WHO").stdout()).isEqualTo("/tmp\none\n");
                assertThat(two.exec("pwd; echo $WHO").stdout()).isEqualTo(SandboxSpec.WORKSPACE + "\ntwo\n");
            }
        }

        @Test
        @DisplayName("close discards the state in the sandbox; the closed session refuses commands")
        void closeDiscardsState() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = acquire();
            ShellSession shell = sandbox.shell();
            assertSucceeded(shell.exec("cd /tmp"));
            assertThat(sh(sandbox, "ls -a /tmp /dev/shm").stdout()).contains(".sandboxkit-shell-");

            shell.close();
            shell.close();

            assertThat(shell.isOpen()).isFalse();
            assertThatThrownBy(() -> shell.exec("pwd")).isInstanceOf(ShellSessionEndedException.class);
            assertThat(sh(sandbox, "ls -a /tmp /dev/shm").stdout()).doesNotContain(".sandboxkit-shell-");
        }

        @Test
        @DisplayName("an idle reap ends the session; a new one starts in the resumed sandbox with fresh state")
        void reapEndsTheSession() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = acquire();
            ShellSession shell = sandbox.shell();
            assertSucceeded(shell.exec("cd /tmp"));

            scheduler.advance(TTL.plus(REAPER_INTERVAL));

            assertThat(sandbox.info().state()).isEqualTo(SessionState.SUSPENDED);
            assertThat(shell.isOpen()).isFalse();
            assertThatThrownBy(() -> shell.exec("pwd")).isInstanceOf(ShellSessionEndedException.class);
            shell.close();
            try (ShellSession fresh = sandbox.shell()) {
                assertThat(fresh.exec("pwd").stdout()).isEqualTo(SandboxSpec.WORKSPACE + "\n");
            }
            assertThat(sandbox.info().state()).isEqualTo(SessionState.ACTIVE);
        }

        @Test
        @DisplayName("destroying the sandbox ends its sessions")
        void destroyEndsTheSession() {
            requireCapability(DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = acquire();
            ShellSession shell = sandbox.shell();
            assertSucceeded(shell.exec("true"));

            sandbox.destroy();

            assertThat(shell.isOpen()).isFalse();
            assertThatThrownBy(() -> shell.exec("pwd")).isInstanceOf(ShellSessionEndedException.class);
            shell.close();
        }
    }

    // ------------------------------------------------------------------ background processes

    /** The counter of issue #19: one line every 100 ms, forever. */
    private static final String COUNTER = "i=0; while true; do echo $i; i=$((i+1)); sleep 0.1; done";
    private static final Duration PROCESS_WAIT = Duration.ofSeconds(20);

    /** Reads a stream from 0 until its text satisfies the condition (real time: the process runs for real). */
    private static String awaitOutput(SandboxProcess p, ExecStream stream, java.util.function.Predicate<String> done) {
        long deadline = System.nanoTime() + PROCESS_WAIT.toNanos();
        String text = "";
        while (System.nanoTime() < deadline) {
            text = p.output(stream, 0, 1024 * 1024).text();
            if (done.test(text)) {
                return text;
            }
            sleep(50);
        }
        throw new AssertionError("output of " + p + " never matched; last: " + text);
    }

    /** Waits until {@code ps} in the sandbox shows nothing of background processes. */
    private static String awaitNothingLeft(Sandbox sandbox) {
        String ps = "";
        for (int i = 0; i < 100; i++) {
            ps = sh(sandbox, "ps -o pid,args").stdout();
            if (!ps.contains("sandboxkit-proc") && !ps.contains("999999999") && !ps.contains("while true")
                    && !ps.contains("sleep 300")) {
                return ps;
            }
            sleep(50);
        }
        return ps;
    }

    @Nested
    @DisplayName("background processes")
    class BackgroundProcesses {
        @Test
        @DisplayName("issue #19's counter: incremental output, reattach by id (handle and manager), kill of the group, nothing left")
        void counterReattachKill() {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.BACKGROUND_PROCESSES);
            Sandbox sandbox = acquire();
            SandboxProcess p = sandbox.start(ExecRequest.shell(COUNTER));
            assertThat(p.status().isRunning()).isTrue();

            awaitOutput(p, ExecStream.STDOUT, t -> t.split("\n").length >= 6);
            ProcessOutput first = p.output(ExecStream.STDOUT, 0, 4);
            ProcessOutput next = p.output(ExecStream.STDOUT, first.nextOffset(), 4);

            assertThat(first.text()).isEqualTo("0\n1\n");
            assertThat(first.droppedBytes()).isZero();
            assertThat(first.firstAvailableOffset()).isZero();
            assertThat(next.offset()).isEqualTo(4);
            assertThat(next.text()).isEqualTo("2\n3\n");
            assertThat(next.endOffset()).isGreaterThanOrEqualTo(12);
            assertThat(next.isComplete()).isFalse();

            p.close(); // detach: the process keeps running
            SandboxProcess again = sandbox.process(p.id());
            SandboxProcess viaManager = manager.process(sandbox.sessionId(), p.id());
            assertThat(again.status().isRunning()).isTrue();
            assertThat(viaManager.output(ExecStream.STDOUT, 4, 2).text()).isEqualTo("2\n");
            assertThat(sandbox.processes()).extracting(SandboxProcess::id).containsExactly(p.id());
            assertThat(manager.processes(sandbox.sessionId())).extracting(SandboxProcess::id).containsExactly(p.id());

            assertThat(viaManager.kill()).isTrue();

            assertThat(again.waitFor(PROCESS_WAIT)).isEqualTo(ProcessStatus.signaled(9));
            assertThat(p.status()).isEqualTo(ProcessStatus.signaled(9));
            assertThat(awaitNothingLeft(sandbox)).doesNotContain("sandboxkit-proc", "999999999", "while true");
            assertThat(again.output(ExecStream.STDOUT, 0, 16).text()).as("output outlives the process")
                    .startsWith("0\n1\n2\n");
            again.remove();
            assertThat(again.status().state()).isEqualTo(ProcessStatus.State.LOST);
            assertThat(sandbox.processes()).isEmpty();
        }

        @Test
        @DisplayName("exit codes, SIGTERM and SIGINT to the group, waitFor timeouts, the request's timeout, a missing program")
        void exitCodesSignalsAndTimeouts() {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.BACKGROUND_PROCESSES);
            Sandbox sandbox = acquire();
            SandboxProcess three = sandbox.start(ExecRequest.shell("echo bye >&2; exit 3"));
            SandboxProcess term = sandbox.start(ExecRequest.shell("sleep 300 & sleep 300"));
            SandboxProcess interrupt = sandbox.start(ExecRequest.of("sleep", "300"));
            SandboxProcess limited = sandbox.start(ExecRequest.of("sleep", "300").withTimeout(Duration.ofSeconds(1)));
            SandboxProcess missing = sandbox.start(ExecRequest.of("no-such-program-x"));

            assertThat(three.waitFor(PROCESS_WAIT)).isEqualTo(ProcessStatus.exited(3));
            assertThat(three.output(ExecStream.STDERR, 0, 100).text()).isEqualTo("bye\n");
            assertThat(term.waitFor(Duration.ofMillis(300))).as("still running after a short wait")
                    .isEqualTo(ProcessStatus.running());
            assertThat(term.signal(15)).isTrue();
            assertThat(term.waitFor(PROCESS_WAIT)).isEqualTo(ProcessStatus.signaled(15));
            assertThat(interrupt.signal(2)).isTrue();
            assertThat(interrupt.waitFor(PROCESS_WAIT)).as("SIGINT is not ignored").isEqualTo(ProcessStatus.signaled(2));
            assertThat(limited.waitFor(PROCESS_WAIT)).isEqualTo(ProcessStatus.signaled(9));
            assertThat(missing.waitFor(PROCESS_WAIT)).isEqualTo(ProcessStatus.exited(127));
            assertThat(missing.output(ExecStream.STDERR, 0, 1000).text()).contains("no-such-program-x");
            assertThat(awaitNothingLeft(sandbox)).as("the group kill took the background sleep too")
                    .doesNotContain("sleep 300");
            assertThat(term.signal(15)).as("nothing left to signal").isFalse();
            assertThatThrownBy(() -> sandbox.start(ExecRequest.of("true").withListener((st, b, o, l) -> { })))
                    .isInstanceOf(IllegalArgumentException.class);
            // A terminal needs script(1) in the image: the process gets one, or the start says it is unsupported.
            SandboxProcess onTerminal = null;
            try {
                onTerminal = sandbox.start(ExecRequest.of("sleep", "300").withTty(TerminalSize.DEFAULT));
            } catch (SandboxUnsupportedException noScript) {
                assertThat(noScript).hasMessageContaining("script(1)");
            }
            if (onTerminal != null) {
                assertThat(onTerminal.hasTerminal()).isTrue();
                assertThat(onTerminal.kill()).isTrue();
                assertThat(onTerminal.waitFor(PROCESS_WAIT)).isEqualTo(ProcessStatus.signaled(9));
            }
            assertThatThrownBy(() -> sandbox.process("../../etc")).isInstanceOf(IllegalArgumentException.class);
        }

        @Test
        @DisplayName("stdin: writes, closeStdin for EOF, the request's stdin; env and working directory apply")
        void stdinEnvAndWorkingDir() {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.BACKGROUND_PROCESSES);
            Sandbox sandbox = acquire();
            assertSucceeded(sh(sandbox, "mkdir -p sub"));
            SandboxProcess cat = sandbox.start(ExecRequest.shell("cat; echo \"eof $X $(pwd)\"").withEnv("X", "y")
                    .withWorkingDir("sub"));
            cat.writeStdin("hello\n".getBytes(StandardCharsets.UTF_8));
            cat.writeStdin("world\n".getBytes(StandardCharsets.UTF_8));
            assertThat(cat.waitFor(Duration.ofMillis(200)).isRunning()).as("no EOF before closeStdin").isTrue();

            cat.closeStdin();

            assertThat(cat.waitFor(PROCESS_WAIT)).isEqualTo(ProcessStatus.exited(0));
            assertThat(awaitOutput(cat, ExecStream.STDOUT, t -> t.contains("eof")))
                    .isEqualTo("hello\nworld\neof y " + SandboxSpec.WORKSPACE + "/sub\n");
            assertThatThrownBy(() -> cat.writeStdin(new byte[]{1})).isInstanceOf(SandboxExecException.class)
                    .hasMessageContaining("ended");
            SandboxProcess given = sandbox.start(ExecRequest.of("cat").withStdin("given"));
            assertThat(given.waitFor(PROCESS_WAIT)).isEqualTo(ProcessStatus.exited(0));
            assertThat(awaitOutput(given, ExecStream.STDOUT, t -> t.equals("given"))).isEqualTo("given");
        }

        @Test
        @DisplayName("follow delivers both streams on the calling thread until the end; close() ends a follow")
        void follow() {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.BACKGROUND_PROCESSES);
            Sandbox sandbox = acquire();
            SandboxProcess p = sandbox.start(ExecRequest.shell("echo out; echo err >&2; sleep 0.3; echo done"));
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            Thread caller = Thread.currentThread();
            List<Thread> threads = new CopyOnWriteArrayList<>();

            FollowResult r = p.follow((stream, b, o, l) -> {
                threads.add(Thread.currentThread());
                (stream == ExecStream.STDOUT ? out : err).write(b, o, l);
            });

            assertThat(r.status()).isEqualTo(ProcessStatus.exited(0));
            assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("out\ndone\n");
            assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("err\n");
            assertThat(r.nextOffset(ExecStream.STDOUT)).isEqualTo(9);
            assertThat(r.droppedBytes(ExecStream.STDOUT)).isZero();
            assertThat(threads).containsOnly(caller);

            SandboxProcess counter = sandbox.start(ExecRequest.shell(COUNTER));
            FollowResult closed = counter.follow((stream, b, o, l) -> counter.close());
            assertThat(closed.status().isRunning()).isTrue();
            assertThat(closed.nextOffset(ExecStream.STDOUT)).isPositive();
            counter.kill();
        }

        @Test
        @DisplayName("output is bounded in the sandbox: the oldest bytes go, and reads say how many")
        void boundedOutput() {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.BACKGROUND_PROCESSES);
            Sandbox sandbox = acquire();
            int retained = ProcessOptions.MIN_RETAINED_BYTES;
            SandboxProcess p = sandbox.start(ExecRequest.shell("yes 0123456789abcdef | head -c 1048576"),
                    ProcessOptions.defaults().withRetainedBytes(retained));

            assertThat(p.waitFor(PROCESS_WAIT)).isEqualTo(ProcessStatus.exited(0));
            ProcessOutput o = awaitOutputEnd(p);

            assertThat(o.endOffset()).isEqualTo(1048576);
            assertThat(o.firstAvailableOffset()).isBetween(1048576L - retained, 1048576L - retained * 3L / 4);
            assertThat(o.droppedBytes()).isEqualTo(o.firstAvailableOffset());
            assertThat(o.offset()).isEqualTo(o.firstAvailableOffset());
            assertThat(o.length()).isEqualTo((int) (1048576 - o.firstAvailableOffset()));
            assertThat(o.isComplete()).isTrue();
            assertThat(sh(sandbox, "du -sk /tmp/.sandboxkit/proc/" + p.id() + "/out | cut -f1").stdout().strip())
                    .as("KiB kept in the sandbox").satisfies(k -> assertThat(Integer.parseInt(k)).isLessThanOrEqualTo(
                            retained / 1024 + 8));
        }

        private ProcessOutput awaitOutputEnd(SandboxProcess p) {
            for (int i = 0; i < 100; i++) {
                ProcessOutput o = p.output(ExecStream.STDOUT, 0, 1024 * 1024);
                if (o.isComplete()) {
                    return o;
                }
                sleep(50);
            }
            throw new AssertionError("the output of " + p + " never completed");
        }

        @Test
        @DisplayName("TTL: a running process holds off the reaper; one that does not count does not; the reap kills it, the handle says so, and it stays lost after the resume")
        void idleTtlAndReap() {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.BACKGROUND_PROCESSES);
            Sandbox sandbox = acquire();
            String firstContainer = sandbox.info().sandboxId();
            SandboxProcess counting = sandbox.start(ExecRequest.shell(COUNTER));

            scheduler.advance(TTL.plus(REAPER_INTERVAL));

            assertThat(sandbox.info().state()).as("held off by the running process").isEqualTo(SessionState.ACTIVE);
            assertThat(counting.status().isRunning()).isTrue();
            SandboxProcess server = sandbox.start(ExecRequest.shell(COUNTER),
                    ProcessOptions.defaults().withCountsAsActivity(false));
            counting.kill();
            assertThat(counting.waitFor(PROCESS_WAIT).isRunning()).isFalse();

            scheduler.advance(TTL.plus(REAPER_INTERVAL));

            assertThat(sandbox.info().state()).as("reaped though the server runs").isEqualTo(SessionState.SUSPENDED);
            ProcessStatus lost = server.status();
            assertThat(lost.state()).isEqualTo(ProcessStatus.State.LOST);
            assertThat(lost.reason()).contains("reaped");
            assertThat(manager.process(sandbox.sessionId(), server.id()).status().state())
                    .isEqualTo(ProcessStatus.State.LOST);
            assertThat(sandbox.processes()).isEmpty();

            assertSucceeded(sh(sandbox, "true")); // resumes in a fresh container
            assertThat(sandbox.info().sandboxId()).isNotEqualTo(firstContainer);

            assertThat(server.status().state()).isEqualTo(ProcessStatus.State.LOST);
            assertThat(sandbox.process(server.id()).waitFor(Duration.ofSeconds(1)).reason()).contains("reaped");
            assertThat(server.output(ExecStream.STDOUT, 0, 100).status().state()).isEqualTo(ProcessStatus.State.LOST);
            assertThat(server.signal(15)).isFalse();
            assertThat(sandbox.processes()).isEmpty();
        }

        @Test
        @DisplayName("destroying the sandbox kills its processes and their handles say so")
        void destroy() {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.BACKGROUND_PROCESSES);
            Sandbox sandbox = acquire();
            SandboxProcess p = sandbox.start(ExecRequest.shell(COUNTER));
            String sessionId = sandbox.sessionId();

            sandbox.destroy();

            assertThat(p.status().state()).isEqualTo(ProcessStatus.State.LOST);
            assertThat(p.status().reason()).contains("destroyed");
            assertThat(manager.process(sessionId, p.id()).status().reason()).contains("destroyed");
            assertThatThrownBy(sandbox::processes).isInstanceOf(SandboxNotFoundException.class);
            assertThatThrownBy(() -> manager.processes(sessionId)).isInstanceOf(SandboxNotFoundException.class);
        }
    }

    // ------------------------------------------------------------------ terminals

    /** Tagged, so that a driver's terminal conformance can be run alone: {@code -Dgroups=terminals}. */
    @Nested
    @Tag("terminals")
    @DisplayName("terminals (PTY)")
    class Terminals {
        private final TerminalSize size = TerminalSize.of(100, 30);

        @Test
        @DisplayName("an exec with a tty runs on a terminal; the output arrives merged on stdout")
        void ttyExec() {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.TTY);
            Sandbox sandbox = acquire();

            // Not `tty`: gVisor cannot name the terminal (ttyname fails) although it is one.
            String probe = "[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo terminal";
            ExecResult tty = sandbox.exec(ExecRequest.shell(probe).withTty(size));
            ExecResult stty = sandbox.exec(ExecRequest.of("stty", "size").withTty(size));
            ExecResult merged = sandbox.exec(ExecRequest.shell("echo out; echo err >&2; exit 3").withTty(size));
            ExecResult plain = sandbox.exec(ExecRequest.shell(probe));

            assertThat(tty.stdout()).isEqualTo("terminal\r\n");
            assertThat(stty.stdout()).isEqualTo("30 100\r\n");
            assertThat(merged.exitCode()).isEqualTo(3);
            assertThat(merged.stdout()).isEqualTo("out\r\nerr\r\n");
            assertThat(merged.stderr()).isEmpty();
            assertThat(plain.stdout()).as("without a tty").isEmpty();
        }

        @Test
        @DisplayName("an exec with a tty gets its stdin bytes typed at the terminal")
        void ttyExecStdin() {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.TTY);
            Sandbox sandbox = acquire();

            ExecResult r = sandbox.exec(ExecRequest.shell("read l; echo \"got $l\"").withStdin("hello\n")
                    .withTty(size).withTimeout(Duration.ofSeconds(30)));

            assertThat(r.exitCode()).isZero();
            assertThat(r.stdout()).contains("got hello\r\n");
        }

        @Test
        @DisplayName("a shell reading lines round-trips what is typed; Ctrl-D ends it with its exit code")
        void interactiveSession() throws Exception {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.TTY);
            Sandbox sandbox = acquire();
            try (Terminal t = sandbox.terminal(ExecRequest.shell("while read l; do echo \"got $l\"; done; exit 7")
                    .withTty(size)); Transcript out = new Transcript(t)) {
                type(t, "one\r");
                out.await("got one\r\n");
                type(t, "two words\n");
                out.await("got two words\r\n");
                type(t, "\u0004");

                assertThat(out.awaitEnd()).startsWith("one\r\ngot one\r\n");
                ExecResult status = t.waitFor(Duration.ofSeconds(30)).orElseThrow();
                assertThat(status.exitCode()).isEqualTo(7);
                assertThat(status.termination()).isEqualTo(ExecResult.Termination.EXITED);
            }
        }

        @Test
        @DisplayName("stty size reports the requested size and follows a resize")
        void resize() throws Exception {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.TTY);
            Sandbox sandbox = acquire();
            try (Terminal t = sandbox.terminal(ExecRequest.shell(
                    "stty size; while read l; do stty size; [ \"$l\" = q ] && exit 0; done").withTty(size));
                 Transcript out = new Transcript(t)) {
                out.await("30 100\r\n");

                t.resize(TerminalSize.of(132, 43));
                // Podman's conmon applies a resize a moment after the call returns (Terminal#resize): ask again.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TRANSCRIPT_SECONDS);
                do {
                    type(t, "\r");
                } while (!out.shows("43 132\r\n", 200) && System.nanoTime() < deadline);
                type(t, "q\r");

                out.await("43 132\r\n");
                assertThat(t.size()).isEqualTo(TerminalSize.of(132, 43));
                assertThat(t.waitFor(Duration.ofSeconds(30)).orElseThrow().exitCode()).isZero();
            }
        }

        @Test
        @DisplayName("Ctrl-C on the input interrupts the program in the foreground")
        void ctrlC() throws Exception {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.TTY);
            Sandbox sandbox = acquire();
            try (Terminal t = sandbox.terminal(ExecRequest.shell("echo ready; exec sleep 100").withTty(size));
                 Transcript out = new Transcript(t)) {
                out.await("ready\r\n");
                assertThat(t.waitFor(Duration.ZERO)).as("still running").isEmpty();

                type(t, "\u0003");

                out.awaitEnd();
                ExecResult status = t.waitFor(Duration.ofSeconds(30)).orElseThrow();
                assertThat(status.exitCode()).as("killed by SIGINT").isEqualTo(130);
                assertThat(status.termination()).isEqualTo(ExecResult.Termination.EXITED);
            }
        }

        @Test
        @DisplayName("closing a terminal kills what runs on it and ends its output")
        void closeKills() throws Exception {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.TTY);
            Sandbox sandbox = acquire();
            Terminal t = sandbox.terminal(ExecRequest.shell("sleep 4242 & echo ready; wait").withTty(size));
            try (Transcript out = new Transcript(t)) {
                out.await("ready\r\n");

                t.close();

                out.awaitEnd();
                assertThat(t.waitFor(Duration.ofSeconds(30)).orElseThrow().termination())
                        .isEqualTo(ExecResult.Termination.KILLED);
            }
            assertEventually(() -> sh(sandbox, "ps -o args").stdout(), ps -> !ps.contains("sleep 4242"));
            t.close(); // idempotent
        }

        @Test
        @DisplayName("a program that cannot start shows why on the terminal and exits 127")
        void missingProgram() throws Exception {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.TTY);
            Sandbox sandbox = acquire();
            try (Terminal t = sandbox.terminal(ExecRequest.of("no-such-program").withTty(size));
                 Transcript out = new Transcript(t)) {
                assertThat(out.awaitEnd()).contains("no-such-program");
                assertThat(t.waitFor(Duration.ofSeconds(30)).orElseThrow().exitCode()).isEqualTo(127);
            }
        }

        @Test
        @DisplayName("the request's timeout kills the program and the status says TIMED_OUT")
        void timeout() throws Exception {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.TTY);
            Sandbox sandbox = acquire();
            try (Terminal t = sandbox.terminal(ExecRequest.of("sleep", "100").withTty(size)
                    .withTimeout(Duration.ofSeconds(1)))) {
                ExecResult status = t.waitFor(Duration.ofSeconds(60)).orElseThrow();

                assertThat(status.termination()).isEqualTo(ExecResult.Termination.TIMED_OUT);
            }
        }

        @Test
        @DisplayName("a terminal racing a destroy ends with the end of its output and KILLED, not a hang")
        void destroyEndsIt() throws Exception {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.TTY);
            Sandbox sandbox = acquire();
            assertEndedBy(sandbox, sandbox::destroy);
        }

        @Test
        @DisplayName("the idle reaper waits for a running terminal and reaps once it is closed")
        void holdsOffTheReaper() throws Exception {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.TTY);
            Sandbox sandbox = acquire();
            Terminal t = sandbox.terminal(ExecRequest.shell("echo ready; read l").withTty(size));
            try (Transcript out = new Transcript(t)) {
                out.await("ready\r\n");

                scheduler.advance(TTL.plus(REAPER_INTERVAL));
                assertThat(sandbox.info().state()).isEqualTo(SessionState.ACTIVE);

                t.close();
                scheduler.advance(TTL.plus(REAPER_INTERVAL));
                assertThat(sandbox.info().state()).isEqualTo(SessionState.SUSPENDED);
                out.awaitEnd();
            }
        }

        @Test
        @DisplayName("closing the manager ends its terminals")
        void managerCloseEndsIt() throws Exception {
            requireCapability(DriverCapability.REAL_PROCESSES, DriverCapability.TTY);
            try {
                assertEndedBy(acquire(), manager::close);
            } finally {
                manager = newManager(); // for the clean-up
            }
        }

        /** Runs {@code end} under a running terminal: its output must end, and its status say KILLED. */
        private void assertEndedBy(Sandbox sandbox, Runnable end) throws Exception {
            try (Terminal t = sandbox.terminal(ExecRequest.shell("echo ready; sleep 1000").withTty(size));
                 Transcript out = new Transcript(t)) {
                out.await("ready\r\n");

                end.run();

                out.awaitEnd();
                assertThat(t.waitFor(Duration.ofSeconds(30)).orElseThrow().termination())
                        .isEqualTo(ExecResult.Termination.KILLED);
            }
        }

        @Test
        @DisplayName("without the TTY capability a terminal or a tty exec is refused as unsupported")
        void unsupported() {
            assumeTrue(!capabilities.contains(DriverCapability.TTY), "the driver declares TTY");
            Sandbox sandbox = acquire();

            assertThatThrownBy(() -> sandbox.terminal(ExecRequest.of("sh").withTty(size)))
                    .isInstanceOf(SandboxUnsupportedException.class);
            assertThatThrownBy(() -> sandbox.exec(ExecRequest.of("tty").withTty(size)))
                    .isInstanceOf(SandboxUnsupportedException.class);
        }

        @Test
        @DisplayName("a terminal needs a size")
        void needsASize() {
            Sandbox sandbox = acquire();

            assertThatThrownBy(() -> sandbox.terminal(ExecRequest.of("sh")))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    private static void type(Terminal t, String keys) throws IOException {
        t.input().write(keys.getBytes(StandardCharsets.UTF_8));
    }

    /** Polls until the value satisfies the condition, for up to 30 s. */
    private static <T> void assertEventually(java.util.function.Supplier<T> value,
                                             java.util.function.Predicate<T> condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        T last = value.get();
        while (!condition.test(last) && System.nanoTime() < deadline) {
            sleep(100);
            last = value.get();
        }
        assertThat(condition.test(last)).as("condition never held; last value: %s", last).isTrue();
    }

    /**
     * Everything a terminal displays, read on a thread of the test's own (the library starts none): tests wait
     * for text to appear, or for the end of the output, each for at most {@value #TRANSCRIPT_SECONDS} s.
     */
    private static final class Transcript implements AutoCloseable {
        private final StringBuffer text = new StringBuffer();
        private final java.util.concurrent.CountDownLatch end = new java.util.concurrent.CountDownLatch(1);
        private final Thread reader;

        Transcript(Terminal terminal) {
            reader = new Thread(() -> {
                byte[] buffer = new byte[4096];
                try {
                    int n;
                    while ((n = terminal.output().read(buffer)) >= 0) {
                        text.append(new String(buffer, 0, n, StandardCharsets.UTF_8));
                    }
                } catch (IOException e) {
                    text.append("<read failed: ").append(e).append('>');
                } finally {
                    end.countDown();
                }
            }, "tck-terminal-reader");
            reader.setDaemon(true);
            reader.start();
        }

        void await(String expected) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TRANSCRIPT_SECONDS);
            while (text.indexOf(expected) < 0 && System.nanoTime() < deadline && end.getCount() > 0) {
                sleep(10);
            }
            assertThat(text.toString()).as("terminal output").contains(expected);
        }

        /** Whether the text appears within the given milliseconds. */
        boolean shows(String expected, long millis) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
            while (text.indexOf(expected) < 0 && System.nanoTime() < deadline && end.getCount() > 0) {
                sleep(10);
            }
            return text.indexOf(expected) >= 0;
        }

        String awaitEnd() throws InterruptedException {
            assertThat(end.await(TRANSCRIPT_SECONDS, TimeUnit.SECONDS))
                    .as("the output ended; so far: %s", text).isTrue();
            return text.toString();
        }

        @Override
        public void close() throws InterruptedException {
            reader.interrupt();
            reader.join(TimeUnit.SECONDS.toMillis(TRANSCRIPT_SECONDS));
        }
    }

    // ------------------------------------------------------------------ workdir

    @Nested
    @DisplayName("workdir")
    class Workdir {
        @Test
        @DisplayName("files survive an idle reap: the next exec resumes in a new sandbox on the same workdir")
        void survivesReap() {
            Sandbox sandbox = acquire();
            String first = sandbox.info().sandboxId();
            writeFile(sandbox, "note.txt", "written before the reap");

            scheduler.advance(TTL.plus(REAPER_INTERVAL));

            assertThat(sandbox.info().state()).isEqualTo(SessionState.SUSPENDED);
            assertThat(ids(Map.of(SandboxLabels.SESSION, sandbox.sessionId()))).as("sandboxes after the reap").isEmpty();
            assertThat(readFile(sandbox, "note.txt")).isEqualTo("written before the reap");
            String second = sandbox.info().sandboxId();
            assertThat(second).isNotNull().isNotEqualTo(first);
            assertThat(ids(Map.of(SandboxLabels.SESSION, sandbox.sessionId()))).containsExactly(second);
        }

        @Test
        @DisplayName("files survive a replacement caused by a changed spec")
        void survivesSpecChange() {
            String session = newSessionId("tck-respec");
            Sandbox before = manager.acquire(session, spec());
            String first = before.info().sandboxId();
            writeFile(before, "note.txt", "kept");

            Sandbox after = manager.acquire(session, spec().toBuilder().label("tck.revision", "2").build());

            assertThat(after.info().sandboxId()).isNotEqualTo(first);
            assertThat(ids(Map.of(SandboxLabels.SESSION, session))).containsExactly(after.info().sandboxId());
            assertThat(readFile(after, "note.txt")).isEqualTo("kept");
        }

        @Test
        @DisplayName("the workdir is a host directory holding what the sandbox wrote")
        void hostWorkspace() throws IOException {
            requireCapability(DriverCapability.HOST_WORKSPACE);
            Sandbox sandbox = acquire();
            writeFile(sandbox, "from-inside.txt", "visible on the host");

            Path dir = Path.of(sandbox.info().workspace());
            assertThat(dir.toAbsolutePath().normalize()).startsWith(workspaceRoot);
            assertThat(Files.readString(dir.resolve("from-inside.txt"))).isEqualTo("visible on the host");
        }

        @Test
        @DisplayName("another session does not see the first one's files")
        void sessionsAreIsolated() {
            Sandbox one = acquire();
            writeFile(one, "private.txt", "one's");

            Sandbox two = acquire();

            assertThat(two.exec(readFileRequest("private.txt")).exitCode()).isNotZero();
            if (capabilities.contains(DriverCapability.REAL_PROCESSES)) {
                ExecResult listing = two.exec("ls", "-A", SandboxSpec.WORKSPACE);
                assertThat(listing.exitCode()).isZero();
                assertThat(listing.stdout()).as("a new session's workdir").isEmpty();
            }
        }

        @Test
        @DisplayName("a session id acquired again after destroy starts with an empty workdir")
        void destroyEmptiesWorkdir() {
            String session = newSessionId("tck-reuse");
            Sandbox old = manager.acquire(session, spec());
            writeFile(old, "old.txt", "from the first incarnation");

            old.destroy();
            clock.advance(Duration.ofSeconds(1)); // a new incarnation has a later creation instant
            Sandbox fresh = manager.acquire(session, spec());

            assertThat(fresh.exec(readFileRequest("old.txt")).exitCode()).isNotZero();
        }

        @Test
        @DisplayName("files API: what the host writes the sandbox reads and back, also while the session is suspended")
        void filesApi() {
            requireCapability(DriverCapability.FILES);
            Sandbox sandbox = acquire();
            sandbox.files().write("dir/from-host.txt", "host".getBytes(StandardCharsets.UTF_8));
            assertThat(readFile(sandbox, "dir/from-host.txt")).isEqualTo("host");
            writeFile(sandbox, "from-sandbox.txt", "sandbox");
            assertThat(sandbox.files().readBytes("/workspace/from-sandbox.txt"))
                    .isEqualTo("sandbox".getBytes(StandardCharsets.UTF_8));

            scheduler.advance(TTL.plus(REAPER_INTERVAL));
            assertThat(sandbox.info().state()).isEqualTo(SessionState.SUSPENDED);
            sandbox.files().write("while-suspended.txt", "later".getBytes(StandardCharsets.UTF_8));
            assertThat(sandbox.files().list("")).extracting(dev.sandboxkit.FileInfo::name)
                    .contains("dir", "from-sandbox.txt", "while-suspended.txt");
            assertThat(sandbox.info().state()).as("the files API starts no sandbox").isEqualTo(SessionState.SUSPENDED);
            assertThat(readFile(sandbox, "while-suspended.txt")).isEqualTo("later");
        }

        @Test
        @DisplayName("files API never follows a link the sandbox planted, and replaces a link it writes over")
        void filesApiNeverFollowsLinks() {
            requireCapability(DriverCapability.FILES, DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = acquire();
            assertSucceeded(sandbox.exec(ExecRequest.shell("cd /workspace && ln -s / root && ln -s /etc/passwd pw")));
            assertThatThrownBy(() -> sandbox.files().readBytes("root/etc/passwd"))
                    .isInstanceOf(dev.sandboxkit.SandboxFileException.class);
            assertThatThrownBy(() -> sandbox.files().readBytes("pw"))
                    .isInstanceOf(dev.sandboxkit.SandboxFileException.class);
            sandbox.files().write("pw", "mine".getBytes(StandardCharsets.UTF_8));
            assertThat(sandbox.files().stat("pw").type()).isEqualTo(dev.sandboxkit.FileType.FILE);
            assertThat(readFile(sandbox, "pw")).isEqualTo("mine");
        }
    }

    // ------------------------------------------------------------------ snapshots

    @Nested
    @DisplayName("workdir snapshots")
    class Snapshots {
        @Test
        @DisplayName("snapshot, change, restore: the workdir comes back and the next exec resumes on it")
        void restoreRoundTrip() {
            requireCapability(DriverCapability.SNAPSHOTS);
            Sandbox sandbox = acquire();
            writeFile(sandbox, "kept.txt", "before");
            SnapshotId id = manager.snapshot(sandbox.sessionId());
            writeFile(sandbox, "kept.txt", "after");
            writeFile(sandbox, "added.txt", "later");

            manager.restore(sandbox.sessionId(), id);

            assertThat(readFile(sandbox, "kept.txt")).isEqualTo("before");
            assertThat(sandbox.exec(readFileRequest("added.txt")).exitCode()).isNotZero();
            assertThat(ids(Map.of(SandboxLabels.SESSION, sandbox.sessionId()))).hasSize(1);
        }

        @Test
        @DisplayName("a fork starts as a copy and then lives on its own")
        void forkCopies() {
            requireCapability(DriverCapability.SNAPSHOTS);
            Sandbox source = acquire();
            writeFile(source, "shared.txt", "from the source");
            String target = newSessionId("tck-fork");

            Sandbox fork = manager.fork(source.sessionId(), target);

            assertThat(readFile(fork, "shared.txt")).isEqualTo("from the source");
            writeFile(fork, "shared.txt", "changed in the fork");
            assertThat(readFile(source, "shared.txt")).isEqualTo("from the source");
        }

        @Test
        @DisplayName("snapshots are labelled with their session and go with it unless kept")
        void deletedWithTheirSession() {
            requireCapability(DriverCapability.SNAPSHOTS);
            Sandbox sandbox = acquire();
            writeFile(sandbox, "f.txt", "x");
            SnapshotId dropped = manager.snapshot(sandbox.sessionId());
            SnapshotId kept = manager.snapshot(sandbox.sessionId());
            manager.keepSnapshot(kept, true);
            assertThat(manager.snapshots(sandbox.sessionId())).extracting(SnapshotInfo::id)
                    .containsExactlyInAnyOrder(dropped, kept);

            sandbox.destroy();

            assertThat(manager.snapshots(sandbox.sessionId())).extracting(SnapshotInfo::id).containsExactly(kept);
            manager.deleteSnapshot(kept);
            assertThat(manager.snapshots(sandbox.sessionId())).isEmpty();
        }
    }

    // ------------------------------------------------------------------ templates

    @Nested
    @DisplayName("workdir templates")
    class Templates {
        @Test
        @DisplayName("a directory template seeds a new session once; a resume keeps the session's changes")
        void directoryTemplateSeedsOnce() throws IOException {
            requireCapability(DriverCapability.DIRECTORY_TEMPLATES);
            Path template = Files.createTempDirectory("sandboxkit-tck-template");
            try {
                Files.writeString(template.resolve("a.txt"), "from the template");
                Files.createDirectories(template.resolve("sub"));
                Files.writeString(template.resolve("sub/b.txt"), "nested");
                Files.createSymbolicLink(template.resolve("link"), Path.of("/etc/passwd"));
                Sandbox sandbox = manager.acquire(newSessionId("tck-tmpl"), spec().toBuilder()
                        .template(WorkspaceTemplate.directory(template)).build());

                assertThat(readFile(sandbox, "a.txt")).isEqualTo("from the template");
                assertThat(readFile(sandbox, "sub/b.txt")).isEqualTo("nested");
                if (capabilities.contains(DriverCapability.REAL_PROCESSES)) {
                    assertThat(sh(sandbox, "readlink link").stdout()).as("a link is copied as a link")
                            .isEqualTo("/etc/passwd\n");
                }
                writeFile(sandbox, "a.txt", "changed in the session");

                scheduler.advance(TTL.plus(REAPER_INTERVAL));
                assertThat(sandbox.info().state()).isEqualTo(SessionState.SUSPENDED);

                assertThat(readFile(sandbox, "a.txt")).as("not copied again on resume").isEqualTo("changed in the session");
            } finally {
                deleteRecursively(template);
            }
        }

        @Test
        @DisplayName("a kept snapshot seeds new sessions after its own session is gone")
        void snapshotTemplate() {
            requireCapability(DriverCapability.SNAPSHOTS);
            Sandbox golden = acquire();
            writeFile(golden, "seed.txt", "golden");
            SnapshotId id = manager.snapshot(golden.sessionId());
            manager.keepSnapshot(id, true);
            golden.destroy();
            try {
                Sandbox sandbox = manager.acquire(newSessionId("tck-tmpl-snap"), spec().toBuilder()
                        .template(WorkspaceTemplate.snapshot(id)).build());
                assertThat(readFile(sandbox, "seed.txt")).isEqualTo("golden");
            } finally {
                manager.deleteSnapshot(id);
            }
        }

        @Test
        @DisplayName("a missing template fails the acquire with a configuration error and creates no session")
        void missingTemplate() {
            requireCapability(DriverCapability.SNAPSHOTS);
            String session = newSessionId("tck-tmpl-missing");
            SandboxSpec missing = spec().toBuilder().template(WorkspaceTemplate.snapshot(SnapshotId.random())).build();

            assertThatThrownBy(() -> manager.acquire(session, missing))
                    .isInstanceOf(SandboxConfigurationException.class);

            assertThat(manager.session(session)).isEmpty();
            assertThat(ids(Map.of(SandboxLabels.SESSION, session))).isEmpty();
        }

        @Test
        @DisplayName("a directory template on a driver without DIRECTORY_TEMPLATES is a configuration error")
        void directoryTemplateUnsupported() {
            assumeTrue(!capabilities.contains(DriverCapability.DIRECTORY_TEMPLATES),
                    "the driver declares DIRECTORY_TEMPLATES");
            String session = newSessionId("tck-tmpl-unsupported");
            SandboxSpec spec = spec().toBuilder().template(WorkspaceTemplate.directory(workspaceRoot)).build();

            assertThatThrownBy(() -> manager.acquire(session, spec)).isInstanceOf(SandboxConfigurationException.class)
                    .hasMessageContaining("host directories");
            assertThat(manager.session(session)).isEmpty();
            assertThat(ids(Map.of(SandboxLabels.SESSION, session))).isEmpty();
        }
    }

    // ------------------------------------------------------------------ archive tier

    @Nested
    @DisplayName("workdir archives (WORKSPACE_ARCHIVE)")
    class Archives {
        /** A uid-less, gid-less ustar header block for {@link #hostileImportsAreRefused}. */
        private byte[] header(String name, char type, int size, String link) {
            byte[] h = new byte[512];
            put(h, 0, name);
            put(h, 100, "0000644");
            put(h, 108, "0000000");
            put(h, 116, "0000000");
            put(h, 124, String.format("%011o", size));
            put(h, 136, "00000000000");
            h[156] = (byte) type;
            put(h, 157, link);
            put(h, 257, "ustar");
            put(h, 263, "00");
            Arrays.fill(h, 148, 156, (byte) ' ');
            int sum = 0;
            for (byte b : h) {
                sum += b & 0xff;
            }
            put(h, 148, String.format("%06o", sum));
            h[154] = 0;
            return h;
        }

        private long countFiles(Path dir) throws IOException {
            try (var files = Files.walk(dir)) {
                return files.filter(Files::isRegularFile).count();
            }
        }

        private void put(byte[] h, int offset, String value) {
            byte[] b = value.getBytes(StandardCharsets.UTF_8);
            System.arraycopy(b, 0, h, offset, b.length);
        }

        private byte[] tar(byte[]... blocks) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (byte[] b : blocks) {
                out.writeBytes(b);
                out.writeBytes(new byte[(512 - b.length % 512) % 512]);
            }
            out.writeBytes(new byte[1024]);
            return out.toByteArray();
        }

        @Test
        @DisplayName("an archived workdir comes back whole on resume: files, modes, links as links")
        void archiveAndResume() throws IOException {
            requireCapability(DriverCapability.WORKSPACE_ARCHIVE, DriverCapability.REAL_PROCESSES);
            Path objects = workspaceRoot.resolveSibling(workspaceRoot.getFileName() + "-archives");
            try {
                manager.close();
                manager = managerBuilder().archive(dev.sandboxkit.spi.ArchiveStore.directory(objects),
                        Duration.ofHours(1)).build();
                Sandbox sandbox = acquire();
                String script = "mkdir -p d/e && echo one > d/e/f && chmod 600 d/e/f && ln -s d/e/f link"
                        + " && ln -s /nowhere dangling && printf '%s|%s|%s' \"$(cat link)\" \"$(readlink dangling)\""
                        + " \"$(stat -c %a d/e/f)\"";
                ExecResult before = sh(sandbox, script);
                assertSucceeded(before);
                scheduler.advance(TTL.plus(REAPER_INTERVAL));
                assertThat(sandbox.info().state()).isEqualTo(SessionState.SUSPENDED);
                clock.advance(Duration.ofHours(1));

                assertThat(manager.archiveIdle()).isEqualTo(1);
                assertThat(countFiles(objects)).isEqualTo(1);

                ExecResult after = sh(sandbox, "printf '%s|%s|%s' \"$(cat link)\" \"$(readlink dangling)\""
                        + " \"$(stat -c %a d/e/f)\"");
                assertSucceeded(after);
                assertThat(after.stdout()).isEqualTo("one|/nowhere|600");
                assertThat(countFiles(objects)).as("deleted once restored").isZero();
            } finally {
                deleteRecursively(objects);
            }
        }

        @Test
        @DisplayName("a hostile archive is refused: '..', absolute names, writing through a link, devices")
        void hostileImportsAreRefused() throws IOException {
            requireCapability(DriverCapability.WORKSPACE_ARCHIVE);
            Path outside = workspaceRoot.resolve("outside-" + UUID.randomUUID());
            byte[] body = "pwned".getBytes(StandardCharsets.UTF_8);
            List<byte[]> hostile = List.of(
                    tar(header("../" + outside.getFileName() + "/x", '0', body.length, ""), body),
                    tar(header(outside + "/x", '0', body.length, ""), body),
                    tar(header("ln", '2', 0, outside.toString()), header("ln/x", '0', body.length, ""), body),
                    tar(header("dev", '3', 0, "")));
            for (byte[] archive : hostile) {
                String ws = createWorkspace(newSessionId("tck-hostile"));
                Files.createDirectories(outside);
                assertThatThrownBy(() -> driver.importWorkspace(ws, spec(), new java.io.ByteArrayInputStream(archive)))
                        .isInstanceOf(dev.sandboxkit.SandboxException.class);
                try (var left = Files.list(outside)) {
                    assertThat(left.toList()).as("nothing written outside the workdir").isEmpty();
                }
            }
        }
    }

    // ------------------------------------------------------------------ labels

    @Nested
    @DisplayName("labels and ownership")
    class Labels {
        @Test
        @DisplayName("the sandbox carries the managed, session and owner labels with the manager's instance id")
        void managedSessionOwner() {
            Sandbox sandbox = acquire();

            assertThat(driver.list(Map.of(SandboxLabels.SESSION, sandbox.sessionId()))).singleElement()
                    .satisfies(d -> {
                        assertThat(d.id()).isEqualTo(sandbox.info().sandboxId());
                        assertThat(d.labels()).containsEntry(SandboxLabels.MANAGED, "true")
                                .containsEntry(SandboxLabels.SESSION, sandbox.sessionId())
                                .containsEntry(SandboxLabels.OWNER, manager.instanceId());
                        assertThat(d.sessionId()).isEqualTo(sandbox.sessionId());
                        assertThat(d.owner()).isEqualTo(manager.instanceId());
                    });
            assertThat(sandbox.info().owner()).isEqualTo(manager.instanceId());
        }

        @Test
        @DisplayName("a session id with every allowed punctuation character works and is the exact session label")
        void punctuationInSessionId() {
            assertExactSessionLabel(newSessionId("Tck:user@example.com+a=b_c.d"));
        }

        @Test
        @DisplayName("a 128-character session id works and is the exact session label")
        void longestSessionId() {
            String longest = "L" + "x".repeat(119) + UUID.randomUUID().toString().substring(0, 8);
            sessions.add(longest);
            assertExactSessionLabel(longest);
        }

        private void assertExactSessionLabel(String id) {
            String sandboxId = manager.acquire(id, spec()).info().sandboxId();
            assertThat(driver.list(Map.of(SandboxLabels.SESSION, id))).as("listed by session %s", id)
                    .singleElement().satisfies(d -> {
                        assertThat(d.id()).isEqualTo(sandboxId);
                        assertThat(d.sessionId()).isEqualTo(id);
                    });
        }

        @Test
        @DisplayName("the spec's extra labels are on the sandbox too")
        void specLabels() {
            String session = newSessionId("tck-speclabels");
            manager.acquire(session, spec().toBuilder().label("tck.purpose", "conformance").build());

            assertThat(driver.list(Map.of(SandboxLabels.SESSION, session))).singleElement()
                    .satisfies(d -> assertThat(d.labels()).containsEntry("tck.purpose", "conformance"));
            assertThat(ids(Map.of("tck.purpose", "conformance", SandboxLabels.OWNER, context.instanceId())))
                    .hasSize(1);
        }
    }

    // ------------------------------------------------------------------ concurrency

    @Nested
    @DisplayName("concurrency")
    class Concurrency {
        @Test
        @DisplayName("parallel acquires of one session create exactly one sandbox")
        void parallelAcquires() throws Exception {
            String session = newSessionId("tck-race");

            List<String> seen = runConcurrently(8, i -> manager.acquire(session, spec()).info().sandboxId());

            assertThat(new HashSet<>(seen)).hasSize(1);
            assertThat(ids(Map.of(SandboxLabels.SESSION, session))).containsExactly(seen.get(0));
        }

        @Test
        @DisplayName("parallel execs in one sandbox each get their own output and exit code")
        void parallelExecs() throws Exception {
            requireCapability(DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = acquire();
            String script = "echo \"out-$1\"; echo \"err-$1\" >&2; exit $2";

            List<List<String>> failures = runConcurrently(8, t -> {
                List<String> wrong = new ArrayList<>();
                for (int j = 0; j < 5; j++) {
                    String tag = t + "-" + j;
                    int code = (t + j) % 4;
                    ExecResult r = sandbox.exec(ExecRequest.of("/bin/sh", "-c", script, "sh", tag, String.valueOf(code)));
                    if (!r.stdout().equals("out-" + tag + "\n") || !r.stderr().equals("err-" + tag + "\n")
                            || r.exitCode() != code) {
                        wrong.add(tag + " -> " + r + " stdout=" + r.stdout() + " stderr=" + r.stderr());
                    }
                }
                return wrong;
            });

            assertThat(failures.stream().flatMap(List::stream).toList()).isEmpty();
        }
    }

    // ------------------------------------------------------------------ port forwarding

    /**
     * {@link Sandbox#forward(int)}: needs {@link DriverCapability#PORT_FORWARD} and a real shell with BusyBox's
     * {@code httpd} and {@code nc} in the image (the services the tests start inside the sandbox).
     */
    @Nested
    @DisplayName("port forwarding")
    class Forwarding {
        private static final int PORT = 8080;
        private static final String INDEX = "forwarded from the sandbox\n";

        /** Starts httpd on {@link #PORT} serving /workspace/www with an index and a 256 KiB file. */
        private Sandbox withHttpd() {
            requireCapability(DriverCapability.PORT_FORWARD, DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = acquire();
            assertSucceeded(sh(sandbox, "mkdir -p /workspace/www && printf '" + INDEX.replace("\n", "\\n")
                    + "' > /workspace/www/index.html && dd if=/dev/zero bs=1024 count=256 2>/dev/null"
                    + " | tr '\\0' 'x' > /workspace/www/big.txt"));
            assertSucceeded(sh(sandbox, "setsid httpd -p " + PORT + " -h /workspace/www </dev/null >/dev/null 2>&1 &"));
            ExecResult up = sandbox.exec(ExecRequest.shell("i=0; while [ $i -lt 200 ]; do nc 127.0.0.1 " + PORT
                    + " </dev/null >/dev/null 2>&1 && exit 0; i=$((i+1)); sleep 0.05; done; exit 1")
                    .withTimeout(Duration.ofSeconds(30)));
            assertThat(up.exitCode()).as("httpd listening inside the sandbox").isZero();
            return sandbox;
        }

        private String get(java.net.InetSocketAddress at, String path, boolean halfClose) throws IOException {
            try (java.net.Socket s = new java.net.Socket()) {
                s.connect(at, 10_000);
                s.setSoTimeout(60_000);
                s.getOutputStream().write(("GET " + path + " HTTP/1.0\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                if (halfClose) {
                    s.shutdownOutput();
                }
                return new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
            }
        }

        private static String body(String response) {
            int at = response.indexOf("\r\n\r\n");
            assertThat(at).as("an HTTP answer: %s", response).isPositive();
            assertThat(response).startsWith("HTTP/1.").contains(" 200 ");
            return response.substring(at + 4);
        }

        private void assertRefused(java.net.InetSocketAddress at) {
            assertThatThrownBy(() -> {
                try (java.net.Socket s = new java.net.Socket()) {
                    s.connect(at, 5_000);
                }
            }).isInstanceOf(java.net.ConnectException.class);
        }

        /** Past the TTL until reaped: a relay the client just ended stops counting as activity a moment later. */
        private void advanceUntilReaped(Sandbox sandbox) {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            do {
                scheduler.advance(TTL.plus(REAPER_INTERVAL));
                if (sandbox.info().state() == SessionState.SUSPENDED) {
                    return;
                }
                sleep(50);
            } while (System.nanoTime() - until < 0);
        }

        @Test
        @DisplayName("a service inside answers through forward(port) on 127.0.0.1, with and without half-close")
        void answersThroughForward() throws IOException {
            Sandbox sandbox = withHttpd();
            try (dev.sandboxkit.PortForward forward = sandbox.forward(PORT)) {
                assertThat(forward.localAddress().getAddress().isLoopbackAddress()).isTrue();
                assertThat(forward.containerPort()).isEqualTo(PORT);
                assertThat(forward.sessionId()).isEqualTo(sandbox.sessionId());
                assertThat(forward.token()).isEmpty();
                assertThat(body(get(forward.localAddress(), "/", false))).isEqualTo(INDEX);
                assertThat(body(get(forward.localAddress(), "/", true))).isEqualTo(INDEX);
                assertThat(body(get(forward.localAddress(), "/big.txt", true))).isEqualTo("x".repeat(256 * 1024));
            }
        }

        @Test
        @DisplayName("concurrent connections each get their whole answer")
        void concurrentConnections() throws Exception {
            Sandbox sandbox = withHttpd();
            try (dev.sandboxkit.PortForward forward = sandbox.forward(PORT)) {
                List<String> bodies = runConcurrently(8, i -> {
                    try {
                        return body(get(forward.localAddress(), i % 2 == 0 ? "/big.txt" : "/", i % 3 == 0));
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                for (int i = 0; i < bodies.size(); i++) {
                    assertThat(bodies.get(i)).as("body %d", i).isEqualTo(i % 2 == 0 ? "x".repeat(256 * 1024) : INDEX);
                }
            }
        }

        /** Opens a forward, uses it once, ends the sandbox as told, and checks the forward is gone with it. */
        private void assertEndedBy(java.util.function.Consumer<Sandbox> end) throws IOException {
            Sandbox sandbox = withHttpd();
            dev.sandboxkit.PortForward forward = sandbox.forward(PORT);
            assertThat(body(get(forward.localAddress(), "/", false))).isEqualTo(INDEX);

            end.accept(sandbox);

            assertThat(forward.isOpen()).isFalse();
            assertRefused(forward.localAddress());
        }

        @Test
        @DisplayName("the idle reap closes the forward (connecting is refused); an idle forward does not hold the TTL")
        void reapClosesTheForward() throws IOException {
            assertEndedBy(sandbox -> {
                advanceUntilReaped(sandbox);
                assertThat(sandbox.info().state()).isEqualTo(SessionState.SUSPENDED);
            });
        }

        @Test
        @DisplayName("destroy closes the forward: connecting is refused")
        void destroyClosesTheForward() throws IOException {
            assertEndedBy(Sandbox::destroy);
        }

        @Test
        @DisplayName("a connection to a port where nothing listens ends instead of hanging")
        void nothingListening() throws IOException {
            requireCapability(DriverCapability.PORT_FORWARD, DriverCapability.REAL_PROCESSES);
            Sandbox sandbox = acquire();
            try (dev.sandboxkit.PortForward forward = sandbox.forward(9)) {
                try (java.net.Socket s = new java.net.Socket()) {
                    s.connect(forward.localAddress(), 10_000);
                    s.setSoTimeout(30_000); // a hang fails here
                    s.getOutputStream().write("GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    byte[] got;
                    try {
                        got = s.getInputStream().readAllBytes();
                    } catch (java.net.SocketException reset) {
                        got = new byte[0];
                    }
                    assertThat(got).isEmpty();
                }
                assertThat(forward.isOpen()).isTrue();
            }
        }

        @Test
        @DisplayName("beyond loopback needs the opt-in, then each connection must present the token first")
        void beyondLoopbackNeedsToken() throws IOException {
            Sandbox sandbox = withHttpd();
            java.net.InetAddress any = java.net.InetAddress.getByName("0.0.0.0");
            assertThatThrownBy(() -> sandbox.forward(PORT, dev.sandboxkit.ForwardOptions.defaults().withBindAddress(any)))
                    .isInstanceOf(dev.sandboxkit.SandboxConfigurationException.class);
            try (dev.sandboxkit.PortForward forward = sandbox.forward(PORT,
                    dev.sandboxkit.ForwardOptions.defaults().withBindAddress(any).exposeBeyondLoopback())) {
                String token = forward.token().orElseThrow();
                java.net.InetSocketAddress local = new java.net.InetSocketAddress("127.0.0.1",
                        forward.localAddress().getPort());
                try (java.net.Socket s = new java.net.Socket()) {
                    s.connect(local, 10_000);
                    s.setSoTimeout(30_000);
                    s.getOutputStream().write(("not-the-token\nGET / HTTP/1.0\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                    byte[] got;
                    try {
                        got = s.getInputStream().readAllBytes();
                    } catch (java.net.SocketException reset) {
                        got = new byte[0];
                    }
                    assertThat(got).as("answer without the token").isEmpty();
                }
                try (java.net.Socket s = new java.net.Socket()) {
                    s.connect(local, 10_000);
                    s.setSoTimeout(30_000);
                    s.getOutputStream().write((token + "\nGET / HTTP/1.0\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                    assertThat(body(new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1)))
                            .isEqualTo(INDEX);
                }
            }
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
