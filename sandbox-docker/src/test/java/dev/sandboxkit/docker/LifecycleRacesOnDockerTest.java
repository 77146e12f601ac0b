package dev.sandboxkit.docker;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.docker.internal.engine.DockerHost;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.testsupport.Await;
import dev.sandboxkit.testsupport.HousekeepingScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue 13 on the real engine: a reap during an engine outage, destroy racing acquire, a sandbox that kills its
 * own PID 1, and a soak of every lifecycle call at once. Containers are counted by label with the docker CLI,
 * never through the library under test.
 */
@Tag("slow")
@DisplayName("Leaks and races on the real Docker engine")
class LifecycleRacesOnDockerTest {
    private static final SandboxSpec SPEC = DockerTestSupport.spec().build();

    @TempDir
    Path temp;
    private final String fleet = "races-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<SandboxManager> managers = new ArrayList<>();
    /** The managers' housekeeping, counted: a test that asserts a reap did not happen first waits for passes. */
    private final HousekeepingScheduler housekeeping = new HousekeepingScheduler("races-housekeeping");

    @BeforeAll
    static void engine() {
        DockerTestSupport.requireEngine();
    }

    @AfterEach
    void cleanUp() {
        managers.forEach(SandboxManager::close);
        housekeeping.close();
        for (String id : cli("ps", "-aq", "--filter", "label=" + SandboxLabels.FLEET + "=" + fleet)) {
            cli("rm", "-f", id);
        }
    }

    private SandboxManager manager(Duration ttl, Map<String, String> driverProperties) {
        SandboxManager.Builder b = SandboxManager.builder().driver("docker").workspaceRoot(temp.resolve("ws"))
                .fleet(fleet).idleTimeout(ttl).reaperInterval(Duration.ofMillis(100))
                .reconcileInterval(Duration.ofSeconds(2)).scheduler(housekeeping);
        driverProperties.forEach(b::driverProperty);
        SandboxManager m = b.build();
        managers.add(m);
        return m;
    }

    /** Every container of this test's fleet, as session id to container ids, from the docker CLI. */
    private Map<String, List<String>> containersBySession() {
        Map<String, List<String>> out = new HashMap<>();
        for (String line : cli("ps", "-a", "--no-trunc", "--filter", "label=" + SandboxLabels.FLEET + "=" + fleet,
                "--format", "{{.ID}} {{.Label \"" + SandboxLabels.SESSION + "\"}}")) {
            String[] f = line.split(" ", 2);
            out.computeIfAbsent(f.length > 1 ? f[1] : "", k -> new ArrayList<>()).add(f[0]);
        }
        return out;
    }

    private List<String> containersOf(String sessionId) {
        return containersBySession().getOrDefault(sessionId, List.of());
    }

    @Test
    @DisplayName("A: a reap that fails during an engine outage leaks nothing; the session keeps one container, and close leaves none")
    void reapDuringEngineOutage() throws Exception {
        Path engineSocket = Path.of(DockerHost.resolve(DockerTestSupport.context("probe", temp)).socketPath().toString());
        try (UnixSocketProxy proxy = new UnixSocketProxy(temp.resolve("proxy.sock"), engineSocket).start()) {
            SandboxManager m = manager(Duration.ofSeconds(2), Map.of("docker.host", proxy.dockerHost()));
            Sandbox sandbox = m.acquire("outage", SPEC);
            assertThat(sandbox.exec(ExecRequest.shell("echo kept > note.txt")).exitCode()).isZero();
            String first = sandbox.info().sandboxId();

            Path started = Path.of(sandbox.info().workspace()).resolve("started");
            CompletableFuture<Object> inFlight = CompletableFuture.supplyAsync(() -> {
                try {
                    return m.exec("outage", ExecRequest.shell("touch started; sleep 60; echo done"));
                } catch (RuntimeException e) {
                    return e;
                }
            });
            Await.until(Duration.ofSeconds(30), () -> Files.exists(started), () -> "the exec to run");
            proxy.stop();                       // the engine "goes away" for this manager only
            // An exec running when the engine goes away ends with a typed exception (it does not hang); one
            // started during the outage is told to retry; a heartbeat needs no engine.
            assertThat(inFlight.get(30, TimeUnit.SECONDS)).isInstanceOf(SandboxException.class);
            assertThatThrownBy(() -> m.exec("outage", ExecRequest.of("true")))
                    .isInstanceOf(SandboxUnavailableException.class)
                    .satisfies(e -> assertThat(((SandboxException) e).isRetryable()).isTrue());
            m.keepAlive("outage");
            long idleFrom = System.nanoTime();
            // The TTL passes, then the reaper has had its passes: its reap attempts fail.
            Await.until(Duration.ofSeconds(30), () -> System.nanoTime() - idleFrom > Duration.ofSeconds(2).toNanos(),
                    () -> "the TTL to pass");
            housekeeping.awaitPasses(3, Duration.ofMillis(100), Duration.ofSeconds(60)); // the reaper's
            assertThat(m.session("outage").orElseThrow().state()).isEqualTo(SessionState.ACTIVE);
            assertThat(containersOf("outage")).containsExactly(first);
            proxy.start();

            ExecResult r = sandbox.exec(ExecRequest.shell("cat note.txt"));
            assertThat(r.stdout()).isEqualTo("kept\n");
            housekeeping.awaitPasses(1, Duration.ofSeconds(2), Duration.ofSeconds(60)); // a whole reconcile pass
            List<String> now = containersOf("outage");
            String current = m.session("outage").orElseThrow().sandboxId();
            assertThat(now).as("containers of the session other than its current one").allMatch(id -> id.equals(current));

            m.close();
            assertThat(containersOf("outage")).as("containers left after close").isEmpty();
        }
    }

    /** Bounds the rounds of B that cannot finish; its failure names the outcomes so far. */
    private static final Duration RACE_DEADLINE = Duration.ofSeconds(300);

    @Test
    @DisplayName("B: 20 rounds of destroy racing acquire: one container per session at most, typed retryable errors, a live workdir")
    void destroyRacingAcquire() throws Exception {
        SandboxManager m = manager(Duration.ofMinutes(5), Map.of());
        ExecutorService pool = Executors.newFixedThreadPool(2);
        AtomicBoolean sampling = new AtomicBoolean(true);
        List<String> violations = new CopyOnWriteArrayList<>();
        Thread sampler = sampler(sampling, violations, 0);
        Random random = new Random(13);
        List<String> outcomes = new ArrayList<>();
        try {
            // 20 rounds, and on until one acquire won over the destroy (a new session): the race's main outcome.
            Await.repeatUntil(RACE_DEADLINE, () -> outcomes.size() >= 20 && outcomes.contains("new"),
                    () -> outcomes.size() + " rounds: " + outcomes + " (wanted 20 rounds, one new session)", () -> {
                int round = outcomes.size();
                String id = "race-" + round;
                m.acquire(id, SPEC).exec(ExecRequest.shell("echo old > old.txt"));
                long delay = random.nextInt(161);
                Future<?> destroy = pool.submit(() -> m.destroy(id));
                Future<Sandbox> acquire = pool.submit(() -> {
                    Thread.sleep(delay);
                    return m.acquire(id, SPEC);
                });
                destroy.get(60, TimeUnit.SECONDS);
                Sandbox acquired;
                try {
                    acquired = acquire.get(60, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    assertThat(e.getCause()).as("round %d: a failed acquire", round).isInstanceOf(SandboxException.class);
                    assertThat(((SandboxException) e.getCause()).isRetryable()).as("round %d: %s", round, e.getCause())
                            .isTrue();
                    outcomes.add("retryable");
                    return;
                }
                SessionInfo info = m.session(id).orElseThrow();
                if (info.state() == SessionState.DESTROYED) {
                    // The acquire saw the old session, which the destroy then removed: its handle is dead.
                    assertThat(containersOf(id)).isEmpty();
                    outcomes.add("old");
                    try {
                        acquired.exec(ExecRequest.of("true"));
                        throw new AssertionError("round " + round + ": a destroyed session still ran a command");
                    } catch (SandboxNotFoundException expected) {
                        // the handle's session is gone
                    }
                } else {
                    assertThat(info.state()).isEqualTo(SessionState.ACTIVE);
                    assertThat(Files.isDirectory(Path.of(info.workspace()), LinkOption.NOFOLLOW_LINKS))
                            .as("round %d: the workdir of the surviving session exists", round).isTrue();
                    ExecResult ls = acquired.exec(ExecRequest.shell("ls -A /workspace; echo ok > new.txt && cat new.txt"));
                    assertThat(ls.exitCode()).as("round %d: %s", round, ls).isZero();
                    assertThat(ls.stdout()).as("round %d: a new session starts empty", round).isEqualTo("ok\n");
                    assertThat(containersOf(id)).containsExactly(info.sandboxId());
                    outcomes.add("new");
                }
                m.destroy(id);
            });
        } finally {
            sampling.set(false);
            sampler.join(10_000);
            pool.shutdownNow();
        }
        System.out.println("destroy racing acquire: " + outcomes);
        assertThat(violations).as("moments with two containers for one session").isEmpty();
    }

    @Test
    @DisplayName("D: a workdir of 100,000 files with an undeletable entry stays DESTROYING until the janitor can finish; then nothing is left and the id starts empty")
    void undeletableWorkdir() throws Exception {
        SandboxManager m = manager(Duration.ofMinutes(5), Map.of());
        Sandbox sandbox = m.acquire("stuck", SPEC);
        ExecResult made = sandbox.exec(ExecRequest.shell(
                "for d in $(seq 1 100); do mkdir d$d && (cd d$d && seq 1 1000 | xargs touch); done; "
                        + "echo secret > secret.txt; find . -type f | wc -l").withTimeout(Duration.ofMinutes(5)));
        assertThat(made.stdout().trim()).isEqualTo("100001");
        Path workdir = Path.of(sandbox.info().workspace());
        Path pinned = workdir.resolve("d50/500");
        chattr("+i", pinned); // as root: unlink fails with EPERM, as a real undeletable entry would
        try {
            assertThatThrownBy(() -> m.destroy("stuck")).isInstanceOf(SandboxException.class)
                    .hasMessageContaining("d50");
            assertThat(m.session("stuck").orElseThrow().state()).isEqualTo(SessionState.DESTROYING);
            assertThat(containersOf("stuck")).as("the container goes even if the workdir stays").isEmpty();
            assertThatThrownBy(() -> sandbox.exec(ExecRequest.of("true"))).isInstanceOf(SandboxNotFoundException.class);
            assertThatThrownBy(() -> m.acquire("stuck", SPEC)).isInstanceOf(SandboxException.class)
                    .satisfies(e -> assertThat(((SandboxException) e).isRetryable()).isTrue());
            m.reconcile();
            assertThat(m.session("stuck").orElseThrow().state()).isEqualTo(SessionState.DESTROYING);
        } finally {
            chattr("-i", pinned);
        }
        m.reconcile(); // the janitor finishes the destroy
        assertThat(m.session("stuck").orElseThrow().state()).isEqualTo(SessionState.DESTROYED);
        assertThat(Files.exists(workdir, LinkOption.NOFOLLOW_LINKS)).as("workdir after the janitor").isFalse();
        ExecResult fresh = m.acquire("stuck", SPEC).exec(ExecRequest.shell("ls -A /workspace | wc -l"));
        assertThat(fresh.stdout().trim()).isEqualTo("0");
    }

    private static void chattr(String flag, Path file) throws Exception {
        Process p = new ProcessBuilder("chattr", flag, file.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as("chattr %s %s: %s", flag, file, out).isZero();
    }

    @Test
    @DisplayName("E: a sandbox that kills its own PID 1 leaves no exited container behind, after exec, destroy and close")
    void killsItsOwnInit() {
        SandboxManager m = manager(Duration.ofMinutes(5), Map.of());
        Sandbox sandbox = m.acquire("suicide", SPEC);
        String dead = sandbox.info().sandboxId();
        sandbox.exec(ExecRequest.shell("kill -9 -1"));

        ExecResult r = sandbox.exec(ExecRequest.shell("echo alive"));
        assertThat(r.stdout()).isEqualTo("alive\n");
        assertThat(containersOf("suicide")).doesNotContain(dead).hasSize(1);

        m.destroy("suicide");
        m.close();
        assertThat(containersOf("suicide")).as("containers of the session, in any state").isEmpty();
    }

    /** The soak's calls, all threads together: a fixed amount of work, however slowly the machine does it. */
    private static final int SOAK_CALLS = 600;
    /** Bounds a soak that cannot finish; its failure says how many calls were made. */
    private static final Duration SOAK_DEADLINE = Duration.ofSeconds(300);

    @Test
    @DisplayName("soak: 32 threads make 600 calls over 10 sessions with a 2 s TTL and never see two containers for one session")
    void soak() throws Exception {
        SandboxManager m = manager(Duration.ofSeconds(2), Map.of());
        AtomicBoolean sampling = new AtomicBoolean(true);
        List<String> violations = new CopyOnWriteArrayList<>();
        Map<String, AtomicInteger> unexpected = new ConcurrentHashMap<>();
        AtomicInteger budget = new AtomicInteger(SOAK_CALLS);
        AtomicInteger calls = new AtomicInteger();
        AtomicInteger retryable = new AtomicInteger();
        Thread sampler = sampler(sampling, violations, 1_000);
        ExecutorService pool = Executors.newFixedThreadPool(32);
        List<Future<?>> workers = new ArrayList<>();
        long end = System.nanoTime() + SOAK_DEADLINE.toNanos();
        for (int t = 0; t < 32; t++) {
            Random random = new Random(t);
            workers.add(pool.submit(() -> {
                while (System.nanoTime() - end < 0 && budget.getAndDecrement() > 0) {
                    String id = "soak-" + random.nextInt(10);
                    int op = random.nextInt(100);
                    try {
                        if (op < 40) {
                            m.acquire(id, SPEC).exec(ExecRequest.shell("echo x >> log.txt"));
                        } else if (op < 60) {
                            m.exec(id, ExecRequest.of("true"));
                        } else if (op < 75) {
                            m.keepAlive(id);
                        } else if (op < 90) {
                            m.release(id);
                            Thread.sleep(random.nextInt(2500)); // let idle reaping happen
                        } else {
                            m.destroy(id);
                        }
                        calls.incrementAndGet();
                    } catch (SandboxNotFoundException expected) {
                        calls.incrementAndGet(); // exec/keepAlive of a destroyed or never-created session
                    } catch (SandboxException e) {
                        if (e.isRetryable()) {
                            retryable.incrementAndGet();
                        } else {
                            unexpected.computeIfAbsent(e.toString(), k -> new AtomicInteger()).incrementAndGet();
                        }
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }));
        }
        try {
            for (Future<?> w : workers) {
                w.get(SOAK_DEADLINE.plusSeconds(60).toSeconds(), TimeUnit.SECONDS);
            }
        } finally {
            sampling.set(false);
            sampler.join(10_000);
            pool.shutdownNow();
        }
        System.out.println("soak: " + calls + " calls done, " + retryable + " told to retry, "
                + violations.size() + " violations");
        assertThat(violations).as("samples with two containers for one session").isEmpty();
        assertThat(unexpected).as("non-retryable failures").isEmpty();
        assertThat(calls.get() + retryable.get()).as("calls made within %s (%d told to retry)", SOAK_DEADLINE,
                retryable.get()).isEqualTo(SOAK_CALLS);
        m.close();
        assertThat(containersBySession()).as("containers left after close").isEmpty();
    }

    /** Samples the fleet's containers every {@code pauseMillis} (0: back to back); a session seen twice is a violation. */
    private Thread sampler(AtomicBoolean sampling, List<String> violations, long pauseMillis) {
        Thread t = new Thread(() -> {
            while (sampling.get()) {
                containersBySession().forEach((session, ids) -> {
                    if (ids.size() > 1) {
                        violations.add(session + " had " + ids);
                    }
                });
                try {
                    Thread.sleep(pauseMillis);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "container-sampler");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static List<String> cli(String... args) {
        String out = DockerTestSupport.docker(Path.of("."), args);
        return Arrays.stream(out.split("\n")).map(String::trim).filter(s -> !s.isEmpty()).toList();
    }
}
