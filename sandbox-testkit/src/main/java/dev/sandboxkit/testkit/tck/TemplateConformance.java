package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SnapshotId;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.WorkspaceTemplate;
import dev.sandboxkit.spi.ComputeCapability;
import dev.sandboxkit.spi.WorkspaceCapability;
import dev.sandboxkit.spi.SandboxLabels;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@link WorkspaceBackendTck}'s workdir templates group: directory and snapshot templates. */
abstract class TemplateConformance extends KitSupport {
    TemplateConformance(DriverKit kit) {
        super(kit);
    }

    @Test
    @DisplayName("a directory template seeds a new session once; a resume keeps the session's changes")
    void directoryTemplateSeedsOnce() throws IOException {
        requireCapability(WorkspaceCapability.DIRECTORY_TEMPLATES);
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
            if (capabilities.contains(ComputeCapability.REAL_PROCESSES)) {
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
        requireCapability(WorkspaceCapability.SNAPSHOTS);
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
        requireCapability(WorkspaceCapability.SNAPSHOTS);
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
        assumeTrue(!capabilities.contains(WorkspaceCapability.DIRECTORY_TEMPLATES),
                "the driver declares DIRECTORY_TEMPLATES");
        String session = newSessionId("tck-tmpl-unsupported");
        SandboxSpec spec = spec().toBuilder().template(WorkspaceTemplate.directory(workspaceRoot)).build();

        assertThatThrownBy(() -> manager.acquire(session, spec)).isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("host directories");
        assertThat(manager.session(session)).isEmpty();
        assertThat(ids(Map.of(SandboxLabels.SESSION, session))).isEmpty();
    }
}
