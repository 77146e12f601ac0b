package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SnapshotId;
import dev.sandboxkit.WorkspaceTemplate;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A spec's template: validated, compared, kept by the store's encoding and part of the fingerprint. */
class SpecCodecTemplateTest {
    private static final SandboxSpec BASE = SandboxSpec.builder().image("img:1").build();

    @Test
    void bothKindsRoundTrip() {
        for (WorkspaceTemplate t : new WorkspaceTemplate[] {WorkspaceTemplate.directory(Path.of("/srv/seed dir/ä=%")),
                WorkspaceTemplate.snapshot(new SnapshotId("snap-0a1b"))}) {
            SandboxSpec spec = BASE.toBuilder().template(t).build();
            SandboxSpec decoded = SpecCodec.parse(SpecCodec.encode(spec));
            assertThat(decoded.template()).isEqualTo(t);
            assertThat(decoded).isEqualTo(spec).hasSameHashCodeAs(spec);
        }
    }

    @Test
    void noTemplateIsNotWrittenAndTheTemplateIsInTheFingerprint() {
        assertThat(SpecCodec.encode(BASE)).doesNotContain("template");
        String none = SpecCodec.fingerprint(SpecCodec.encode(BASE));
        String dir = SpecCodec.fingerprint(SpecCodec.encode(
                BASE.toBuilder().template(WorkspaceTemplate.directory(Path.of("/a"))).build()));
        String otherDir = SpecCodec.fingerprint(SpecCodec.encode(
                BASE.toBuilder().template(WorkspaceTemplate.directory(Path.of("/b"))).build()));
        String snap = SpecCodec.fingerprint(SpecCodec.encode(
                BASE.toBuilder().template(WorkspaceTemplate.snapshot(new SnapshotId("snap-a"))).build()));
        assertThat(java.util.Set.of(none, dir, otherDir, snap)).hasSize(4);
    }

    @Test
    void directoriesAreAbsoluteAndNormalized() {
        assertThatThrownBy(() -> WorkspaceTemplate.directory(Path.of("relative/dir")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("absolute");
        WorkspaceTemplate t = WorkspaceTemplate.directory(Path.of("/srv/x/../seed"));
        assertThat(t.directory()).isEqualTo(Path.of("/srv/seed"));
        assertThat(t.snapshot()).isNull();
        assertThat(t).isEqualTo(WorkspaceTemplate.directory(Path.of("/srv/seed")));
        SandboxSpec spec = BASE.toBuilder().template(t).build();
        assertThat(spec.toBuilder().build().template()).isEqualTo(t);
        assertThat(spec.toString()).contains("template=directory /srv/seed");
        assertThat(spec.toBuilder().template(null).build()).isEqualTo(BASE);
    }
}
