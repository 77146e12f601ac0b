package dev.sandboxkit.internal;

import dev.sandboxkit.ExecMode;
import dev.sandboxkit.SandboxSpec;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The exec mode survives the store's encoding, and the default leaves older encodings (fingerprints) alone. */
class SpecCodecExecModeTest {
    private static final SandboxSpec BASE = SandboxSpec.builder().image("img:1").build();

    @Test
    void everyModeRoundTrips() {
        for (ExecMode mode : ExecMode.values()) {
            SandboxSpec spec = BASE.toBuilder().execMode(mode).build();
            SandboxSpec decoded = SpecCodec.parse(SpecCodec.encode(spec));
            assertThat(decoded.execMode()).isEqualTo(mode);
            assertThat(decoded).isEqualTo(spec);
        }
    }

    @Test
    void theDefaultIsAutoAndIsNotWritten() {
        assertThat(BASE.execMode()).isEqualTo(ExecMode.AUTO);
        assertThat(SpecCodec.encode(BASE)).doesNotContain("execMode");
        assertThat(SpecCodec.encode(BASE.toBuilder().execMode(ExecMode.PLAIN).build())).contains("execMode=PLAIN");
        // A spec stored before the option existed decodes to AUTO.
        assertThat(SpecCodec.parse(SpecCodec.encode(BASE)).execMode()).isEqualTo(ExecMode.AUTO);
    }

    @Test
    void theModeIsPartOfTheFingerprint() {
        String auto = SpecCodec.fingerprint(SpecCodec.encode(BASE));
        String plain = SpecCodec.fingerprint(SpecCodec.encode(BASE.toBuilder().execMode(ExecMode.PLAIN).build()));
        assertThat(plain).isNotEqualTo(auto);
    }

    @Test
    void toBuilderKeepsTheMode() {
        SandboxSpec channel = BASE.toBuilder().execMode(ExecMode.CHANNEL).build();
        assertThat(channel.toBuilder().label("a", "b").build().execMode()).isEqualTo(ExecMode.CHANNEL);
    }
}
