package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.spi.ComputeCapability;
import dev.sandboxkit.spi.SandboxLabels;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link ComputeDriverTck}'s concurrency group: parallel acquires and execs. */
abstract class ConcurrencyConformance extends KitSupport {
    ConcurrencyConformance(DriverKit kit) {
        super(kit);
    }

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
        requireCapability(ComputeCapability.REAL_PROCESSES);
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
