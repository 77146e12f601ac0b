package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.ComputeCapability;
import dev.sandboxkit.spi.WorkspaceCapability;
import dev.sandboxkit.spi.SandboxLabels;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static dev.sandboxkit.testkit.tck.DriverKit.readFileRequest;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link WorkspaceBackendTck}'s workdir group: create and delete, what survives a reap or a new spec, isolation,
 * the host directory, the files API.
 */
abstract class WorkdirConformance extends KitSupport {
    WorkdirConformance(DriverKit kit) {
        super(kit);
    }

    @Test
    @DisplayName("createWorkspace and deleteWorkspace are idempotent")
    void workspaceIdempotent() {
        String session = newSessionId("tck-ws");
        String first = createWorkspace(session);
        String second = createWorkspace(session);
        assertThat(second).isEqualTo(first);
        if (capabilities.contains(WorkspaceCapability.HOST_WORKSPACE)) {
            assertThat(Path.of(first)).isDirectory();
            assertThat(Path.of(first).toAbsolutePath().normalize()).startsWith(workspaceRoot);
        }

        driver.deleteWorkspace(first);
        driver.deleteWorkspace(first);

        if (capabilities.contains(WorkspaceCapability.HOST_WORKSPACE)) {
            assertThat(Path.of(first)).doesNotExist();
        }
    }

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
        requireCapability(WorkspaceCapability.HOST_WORKSPACE);
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
        if (capabilities.contains(ComputeCapability.REAL_PROCESSES)) {
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
        requireCapability(WorkspaceCapability.FILES);
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
        requireCapability(WorkspaceCapability.FILES, ComputeCapability.REAL_PROCESSES);
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
