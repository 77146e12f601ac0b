package dev.sandboxkit.internal;

import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.testkit.ManualClock;
import dev.sandboxkit.testkit.ManualScheduler;
import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFileException.Reason;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.WorkspaceCapability;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The engine's side of the files API, with the fake driver (which has none): paths are validated before
 * anything else, sessions are looked up, drivers without the API say so, limits are configured once.
 */
class FilesApiEngineTest {
    private final ManualClock clock = new ManualClock();
    private final ManualScheduler scheduler = new ManualScheduler(clock);
    private final FakeDriver driver = new FakeDriver(clock);
    private final SandboxManager manager = SandboxManager.builder().driver(driver).clock(clock).scheduler(scheduler)
            .build();

    @AfterEach
    void close() {
        manager.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"..", "../x", "a/../b", "a/..", "/etc/passwd", "/", "/workspace/..", "/workspacex", "a\0b"})
    @DisplayName("'..', NUL and absolute paths outside /workspace are refused before the session or driver is consulted")
    void invalidPaths(String path) {
        SandboxFiles files = manager.files("no-such-session");
        assertThatThrownBy(() -> files.readBytes(path)).isInstanceOfSatisfying(SandboxFileException.class,
                e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_PATH));
        assertThatThrownBy(() -> files.uploadTar(path, java.io.InputStream.nullInputStream()))
                .isInstanceOf(SandboxFileException.class);
    }

    @Test
    @DisplayName("an unknown session is 'not found'; a driver without the API answers UNSUPPORTED, naming itself")
    void sessionsAndUnsupportedDrivers() {
        assertThat(driver.workspaceCapabilities()).doesNotContain(WorkspaceCapability.FILES);
        assertThatThrownBy(() -> manager.files("nobody").list("")).isInstanceOf(SandboxNotFoundException.class);
        manager.acquire("s", SandboxSpec.builder().image("img").build());
        assertThatThrownBy(() -> manager.files("s").list("/workspace")).isInstanceOfSatisfying(
                SandboxFileException.class, e -> {
                    assertThat(e.reason()).isEqualTo(Reason.UNSUPPORTED);
                    assertThat(e).hasMessageContaining("fake");
                });
        manager.destroy("s");
        assertThatThrownBy(() -> manager.files("s").list("")).isInstanceOf(SandboxNotFoundException.class);
        assertThatThrownBy(() -> manager.files("bad/id")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("the workdir itself cannot be written or deleted")
    void workdirItself() {
        SandboxFiles files = manager.files("whatever");
        assertThatThrownBy(() -> files.write("/workspace", new byte[0])).isInstanceOfSatisfying(
                SandboxFileException.class, e -> assertThat(e.reason()).isEqualTo(Reason.IS_A_DIRECTORY));
        assertThatThrownBy(() -> files.deleteRecursively(".")).isInstanceOfSatisfying(
                SandboxFileException.class, e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_PATH));
    }

    @Test
    @DisplayName("file limits are validated and set once")
    void limits() {
        assertThatThrownBy(() -> new FileLimits(0, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new FileLimits(1, -1)).isInstanceOf(IllegalArgumentException.class);
        SandboxManager.Builder b = SandboxManager.builder().fileLimits(10, 10);
        assertThatThrownBy(() -> b.fileLimits(20, 20)).isInstanceOf(IllegalStateException.class);
        assertThat(FileLimits.DEFAULT.maxFileBytes()).isEqualTo(1L << 30);
    }
}
