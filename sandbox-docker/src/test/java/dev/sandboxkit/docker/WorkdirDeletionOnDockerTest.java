package dev.sandboxkit.docker;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static dev.sandboxkit.docker.DockerTestSupport.spec;
import static dev.sandboxkit.docker.DockerTestSupport.start;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Deleting a workdir the container made hostile (issue 13 D), on the real engine, through the driver SPI:
 * trees nested beyond PATH_MAX, a very large tree, and a delete that cannot succeed. The container is
 * removed first, as the engine does before it deletes a workdir.
 */
@Tag("slow")
@DisplayName("Workdir deletion on the real Docker engine")
class WorkdirDeletionOnDockerTest extends DriverOnDocker {
    private static final Duration PLANT_TIMEOUT = Duration.ofMinutes(4);

    @Override
    String tempPrefix() {
        return "sandboxkit-wddel";
    }

    /** Runs a script in /workspace as the sandbox user and requires it to succeed. */
    private String plant(String sandboxId, String script) {
        ExecResult r = driver.exec(sandboxId, ExecRequest.shell("cd /workspace && " + script).withTimeout(PLANT_TIMEOUT));
        assertThat(r.exitCode()).as("planting failed: %s%s", r.stdout(), r.stderr()).isZero();
        return r.stdout();
    }

    @Test
    @DisplayName("a tree past PATH_MAX made as in the issue (14 nested 250-character directories, another such chain moved under it), then a chain thousands deep: deleted")
    void deepTreesBeyondPathMax() {
        String ws = driver.createWorkspace("deep", spec().build());
        String id = start(driver, instanceId, "deep", spec().build());
        String chain14 = ("a".repeat(250) + "/").repeat(14);
        plant(id, "mkdir -p x/" + chain14 + " y/" + chain14 + " && echo f > x/" + chain14 + "f && echo g > y/" + chain14
                + "g && mv y x/" + chain14 + " && ! ls x/" + chain14 + "y/" + chain14 + "g 2>/dev/null");
        // 3,000 levels: each round makes a 1,000-level chain and moves the one made so far to its bottom.
        String chain1000 = "d/".repeat(1000);
        plant(id, "mkdir -p c/" + chain1000 + " && for k in 1 2; do mkdir -p n/" + chain1000 + " && mv c n/" + chain1000
                + " && mv n c || exit 1; done; mkfifo c/" + chain1000 + "fifo");
        driver.remove(id);
        assertThat(Path.of(ws)).exists();

        driver.deleteWorkspace(ws);

        assertThat(Path.of(ws)).doesNotExist();
        assertThat(root.toFile().list()).as("nothing left under the root but the staging directory")
                .doesNotContain("deep");
        driver.deleteWorkspace(ws); // idempotent
    }

    @Test
    @DisplayName("100,000 files: deleted (the time is printed, not asserted)")
    void aHundredThousandFiles() {
        String ws = driver.createWorkspace("many", spec().build());
        String id = start(driver, instanceId, "many", spec().build());
        long t0 = System.nanoTime();
        // 100 directories of 1,000 empty files each, made by busybox (touch with 1,000 names per call).
        plant(id, "names=$(i=0; while [ $i -lt 1000 ]; do echo f$i; i=$((i+1)); done); d=0; while [ $d -lt 100 ]; do "
                + "mkdir $d && (cd $d && touch $names) || exit 1; d=$((d+1)); done; find . -type f | wc -l");
        long t1 = System.nanoTime();
        driver.remove(id);
        assertThat(countFiles(Path.of(ws))).isEqualTo(100_000);

        long t2 = System.nanoTime();
        driver.deleteWorkspace(ws);
        long t3 = System.nanoTime();

        assertThat(Path.of(ws)).doesNotExist();
        System.out.printf("100,000 files: created in %d ms (in the container), deleted in %d ms%n",
                TimeUnit.NANOSECONDS.toMillis(t1 - t0), TimeUnit.NANOSECONDS.toMillis(t3 - t2));
    }

    @Test
    @DisplayName("an entry that cannot be deleted (chattr +i) fails with the workdir, the entry and the errno; once fixed, the delete completes")
    void aFailingDeleteSaysWhereAndWhy() throws Exception {
        String ws = driver.createWorkspace("stuck", spec().build());
        String id = start(driver, instanceId, "stuck", spec().build());
        plant(id, "mkdir -p keep/inner && echo x > keep/inner/stuck && echo y > keep/other && mkdir -p z/z/z");
        driver.remove(id);
        Path stuck = Path.of(ws, "keep/inner/stuck");
        chattr("+i", stuck);
        try {
            assertThatThrownBy(() -> driver.deleteWorkspace(ws)).isExactlyInstanceOf(SandboxException.class)
                    .hasMessageContaining("cannot delete workdir " + ws)
                    .hasMessageContaining(ws + "/keep/inner/stuck")
                    .hasMessageContaining("errno 1 (EPERM");
            assertThat(stuck).exists();
        } finally {
            chattr("-i", stuck);
        }
        driver.deleteWorkspace(ws);
        assertThat(Path.of(ws)).doesNotExist();
    }

    private static long countFiles(Path dir) {
        try (var walk = Files.walk(dir)) {
            return walk.filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)).count();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void chattr(String flag, Path file) throws Exception {
        Process p = new ProcessBuilder("chattr", flag, file.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("chattr %s (needs root and a file system with attributes): %s", flag, out)
                .isZero();
    }
}
