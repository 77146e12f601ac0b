package dev.sandboxkit.tools.internal;

import dev.sandboxkit.SandboxSpec;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

class ModelInstructionsTest {
    private static final SandboxSpec SPEC = SandboxSpec.builder().image("img").build();

    @Test
    void sayWhatPersistsTheIdleTtlAndTheLimits() {
        String text = ModelInstructions.render(SPEC, Duration.ofMinutes(30));
        assertThat(text).contains("/workspace").contains("Only files inside /workspace are kept")
                .contains("After 30 minutes without activity").contains("no network access").contains("fresh shell");
        assertThat(ModelInstructions.render(SPEC, Duration.ofSeconds(90))).contains("After 90 seconds");
        assertThat(ModelInstructions.render(SPEC, Duration.ofMinutes(90))).contains("After 1 hour 30 minutes");
        assertThat(ModelInstructions.render(SPEC.toBuilder().maxLifetime(Duration.ofHours(2)).build(), Duration.ofMinutes(5)))
                .contains("at most 2 hours");
    }

    @Test
    void singleUseSandboxesSayEverythingGoes() {
        assertThat(ModelInstructions.render(SPEC.toBuilder().ephemeral().build(), Duration.ofMinutes(30)))
                .contains("single-use").doesNotContain("restarts it automatically");
    }

    @Test
    void aNetworkWithAProxyIsMentionedAndNeverTheFilesApi() {
        SandboxSpec proxied = SPEC.toBuilder().network("host")
                .proxy(new SandboxSpec.Proxy("http://proxy.invalid:3128", null, null)).build();
        assertThat(ModelInstructions.render(proxied, Duration.ofMinutes(30))).contains("through a proxy")
                .doesNotContain("no network access");
        String text = ModelInstructions.render(SPEC, Duration.ofMinutes(30));
        assertThat(text).contains("collects your results from there").contains("regular files")
                .doesNotContain("SandboxFiles").doesNotContain("files API");
    }
}
