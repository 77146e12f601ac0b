package dev.sandboxkit.docker;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ExecResult.Termination;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static dev.sandboxkit.docker.DockerTestSupport.spec;
import static dev.sandboxkit.docker.DockerTestSupport.start;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Execs racing the removal of their container, on both exec paths, with the removal done by this driver
 * ({@code remove}, as reaping, destroy and the lifetime kill do) or behind its back ({@code docker rm -f}
 * from the CLI). Every outcome must be one the SPI allows: the command's own result if it finished first,
 * {@code KILLED} if the container died under it, {@link SandboxNotFoundException} if it never started.
 * Never the runtime's complaint as exit 126, never a {@code SandboxExecException}.
 */
@Tag("slow")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ExecRaceTest extends DriverOnDocker {
    /** A fixed number of rounds, half per remover: the work is the same however loaded the machine is. */
    private static final int ROUNDS = 24;
    /** Bounds rounds that cannot finish; the failure names how many did. */
    private static final Duration DEADLINE = Duration.ofSeconds(90);
    private static final int SHORT_EXECS = 4;
    private static final int PARALLEL = 3;

    @Override
    String tempPrefix() {
        return "sbx-race-";
    }

    enum Remover { DRIVER, CLI }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = ExecMode.class, names = {"PLAIN", "CHANNEL"})
    @DisplayName("execs racing a removal end with their result, KILLED or SandboxNotFoundException")
    void execsRacingRemoval(ExecMode mode) throws Exception {
        SandboxSpec spec = spec().execMode(mode).build();
        Map<String, Integer> tally = new TreeMap<>();
        List<String> wrong = new ArrayList<>();
        long t0 = System.nanoTime();
        long end = t0 + DEADLINE.toNanos();
        // A few rounds at a time: the engine's create and remove dominate, and they overlap well.
        List<Future<List<String>>> rounds = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            Remover remover = round % 2 == 0 ? Remover.DRIVER : Remover.CLI;
            String session = "race-" + mode + "-" + round;
            rounds.add(threads.submit(() -> {
                String id = start(driver, instanceId, session, spec);
                // One warm channel; the concurrent execs open more while the container goes.
                assertThat(driver.exec(id, ExecRequest.of("true")).exitCode()).isZero();
                return race(id, remover).stream().map(o -> remover + " " + o).toList();
            }));
            if (rounds.size() == PARALLEL) {
                collect(rounds, tally, wrong);
                if (System.nanoTime() - end > 0 && round + 1 < ROUNDS) {
                    throw new AssertionError("only " + (round + 1) + " of " + ROUNDS + " rounds within " + DEADLINE
                            + ": " + tally + (wrong.isEmpty() ? "" : ", misclassified " + wrong));
                }
            }
        }
        collect(rounds, tally, wrong);
        System.out.printf("%s: %d rounds in %d ms: %s%n", mode, ROUNDS,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), tally);
        assertThat(wrong).as("misclassified outcomes (%s)", tally).isEmpty();
        // The rounds must really race: some execs ran into the removal.
        assertThat(tally.keySet().stream().filter(k -> !k.endsWith("EXITED")).count()).isPositive();
    }

    private static void collect(List<Future<List<String>>> rounds, Map<String, Integer> tally, List<String> wrong)
            throws Exception {
        for (Future<List<String>> f : rounds) {
            for (String outcome : f.get(120, TimeUnit.SECONDS)) {
                tally.merge(outcome.split(":")[0], 1, Integer::sum);
                if (outcome.contains("WRONG")) {
                    wrong.add(outcome);
                }
            }
        }
        rounds.clear();
    }

    /** One long exec and a few short ones, started at random offsets around the removal. */
    private List<String> race(String id, Remover remover) throws Exception {
        CyclicBarrier go = new CyclicBarrier(SHORT_EXECS + 2);
        List<Future<String>> outcomes = new ArrayList<>();
        outcomes.add(threads.submit(() -> {
            go.await(30, TimeUnit.SECONDS);
            // Long enough that a removal slowed by a loaded engine (seen: over 2 s) still ends it.
            return outcome(id, ExecRequest.shell("echo started; sleep 20"), "started\n", true);
        }));
        for (int i = 0; i < SHORT_EXECS; i++) {
            long offset = ThreadLocalRandom.current().nextLong(0, 50);
            outcomes.add(threads.submit(() -> {
                go.await(30, TimeUnit.SECONDS);
                Thread.sleep(offset);
                return outcome(id, ExecRequest.of("echo", "short"), "short\n", false);
            }));
        }
        long removeAfter = ThreadLocalRandom.current().nextLong(10, 120);
        Future<?> removal = threads.submit(() -> {
            go.await(30, TimeUnit.SECONDS);
            Thread.sleep(removeAfter);
            if (remover == Remover.DRIVER) {
                driver.remove(id);
            } else {
                DockerTestSupport.docker(Path.of("."), "rm", "-f", id);
            }
            return null;
        });
        removal.get(60, TimeUnit.SECONDS);
        List<String> result = new ArrayList<>();
        for (Future<String> f : outcomes) {
            result.add(f.get(60, TimeUnit.SECONDS));
        }
        if (remover == Remover.CLI) {
            driver.remove(id); // lets the driver forget its channel pool, as the engine's sweep would
        }
        return result;
    }

    private String outcome(String id, ExecRequest request, String expectedStdout, boolean mustDie) {
        ExecResult r;
        try {
            r = driver.exec(id, request.withTimeout(Duration.ofSeconds(30)));
        } catch (SandboxNotFoundException e) {
            return "NOT_FOUND";
        } catch (RuntimeException e) {
            return "WRONG: " + e;
        }
        if (r.termination() == Termination.KILLED) {
            return "KILLED";
        }
        if (!mustDie && r.termination() == Termination.EXITED && r.exitCode() == 0
                && r.stdout().equals(expectedStdout)) {
            return "EXITED";
        }
        return "WRONG: " + r + " stdout=" + r.stdout().strip() + " stderr=" + r.stderr().strip();
    }
}
