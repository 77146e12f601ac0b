package dev.sandboxkit.docker;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecStream;
import dev.sandboxkit.FollowResult;
import dev.sandboxkit.ProcessOptions;
import dev.sandboxkit.ProcessOutput;
import dev.sandboxkit.ProcessStatus;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static dev.sandboxkit.docker.DockerTestSupport.context;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue #19's bounded output: a background process writes 1 GiB while the test follows it, in the surefire
 * execution whose JVM has a 64 MiB heap ({@code *LimitsTest}), so anything that buffered the stream in the JVM
 * would fail with {@code OutOfMemoryError}. The sandbox keeps the default window (1 MiB per stream) and every
 * byte is either delivered or counted as dropped.
 */
@Tag("slow")
@DisplayName("Background process output is bounded in the sandbox and in the JVM (1 GiB, 64 MiB heap)")
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class ProcessOutputLimitsTest {
    private static final long GIB = 1L << 30;

    @TempDir
    Path root;
    private DockerSandboxDriver driver;
    private SandboxManager manager;

    @BeforeEach
    void start() {
        DockerTestSupport.requireEngine();
        driver = (DockerSandboxDriver) new DockerDriverProvider().create(context(DockerTestSupport.newInstanceId(),
                root));
        manager = SandboxManager.builder().driver(driver).workspaceRoot(root).build();
    }

    @AfterEach
    void stop() {
        manager.close();
        driver.close();
    }

    @Test
    @DisplayName("1 GiB through follow: delivered + dropped = 1 GiB, the truncation is reported, the sandbox keeps about 1 MiB")
    void oneGibibyte() {
        Sandbox sandbox = manager.acquire("proc-gib", DockerTestSupport.spec().build());
        try {
            SandboxProcess p = sandbox.start(ExecRequest.shell("head -c " + GIB + " /dev/zero; echo done >&2"));
            AtomicLong delivered = new AtomicLong();
            AtomicInteger largestChunk = new AtomicInteger();

            FollowResult r = p.follow((stream, bytes, offset, length) -> {
                if (stream == ExecStream.STDOUT) {
                    delivered.addAndGet(length);
                    largestChunk.accumulateAndGet(length, Math::max);
                }
            });

            assertThat(r.status()).isEqualTo(ProcessStatus.exited(0));
            assertThat(r.nextOffset(ExecStream.STDOUT)).isEqualTo(GIB);
            assertThat(delivered.get() + r.droppedBytes(ExecStream.STDOUT)).isEqualTo(GIB);
            assertThat(r.droppedBytes(ExecStream.STDOUT)).as("the sandbox dropped what was not read in time")
                    .isPositive();
            assertThat(largestChunk.get()).isLessThanOrEqualTo(256 * 1024);
            assertThat(r.nextOffset(ExecStream.STDERR)).isEqualTo(5);

            ProcessOutput tail = p.output(ExecStream.STDOUT, 0, 64 * 1024);
            int retained = ProcessOptions.DEFAULT_RETAINED_BYTES;
            assertThat(tail.endOffset()).isEqualTo(GIB);
            assertThat(tail.firstAvailableOffset()).isBetween(GIB - retained, GIB - retained * 3L / 4);
            assertThat(tail.droppedBytes()).isEqualTo(tail.firstAvailableOffset());
            assertThat(tail.length()).isEqualTo(64 * 1024);
            String kept = sandbox.exec(ExecRequest.shell("du -sk /tmp/.sandboxkit/proc/" + p.id() + "/out | cut -f1"))
                    .stdout().strip();
            assertThat(Integer.parseInt(kept)).as("KiB kept in the sandbox").isLessThanOrEqualTo(retained / 1024 + 8);
            assertThat(p.waitFor(Duration.ZERO)).isEqualTo(ProcessStatus.exited(0));
        } finally {
            sandbox.destroy();
        }
    }
}
