package dev.sandboxkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sandboxkit.spi.SandboxDriverProvider;
import java.lang.module.ModuleDescriptor;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The build runs these tests on the module path (sandbox-api's pom sets {@code sandboxkit.test.modulePath}): the
 * classes must then come from the named module {@code dev.sandboxkit} with the descriptor that is published, so a
 * missing or broken {@code module-info.java} fails here.
 */
class ModuleDescriptorTest {

    @Test
    void apiIsANamedModuleThatExportsOnlyTheApiAndTheSpi() {
        assumeTrue(Boolean.getBoolean("sandboxkit.test.modulePath"), "only in the module-path test run");
        Module module = SandboxManager.class.getModule();
        assertThat(module.isNamed()).as("sandbox-api's tests must run on the module path").isTrue();
        ModuleDescriptor descriptor = module.getDescriptor();
        assertThat(descriptor.name()).isEqualTo("dev.sandboxkit");
        assertThat(descriptor.isOpen()).isFalse();
        assertThat(descriptor.isAutomatic()).isFalse();
        assertThat(descriptor.exports()).allMatch(e -> !e.isQualified());
        assertThat(descriptor.exports().stream().map(ModuleDescriptor.Exports::source).collect(Collectors.toSet()))
                .containsExactlyInAnyOrder("dev.sandboxkit", "dev.sandboxkit.spi");
        assertThat(descriptor.opens()).isEmpty();
        assertThat(descriptor.uses()).containsExactly(SandboxDriverProvider.class.getName());
    }
}
