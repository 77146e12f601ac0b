package dev.sandboxkit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.spi.SandboxDriverProvider;
import java.lang.module.ModuleDescriptor;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The build runs these tests on the module path (sandbox-testkit's pom sets {@code sandboxkit.test.modulePath}): the
 * testkit and sandbox-api are then named modules with the descriptors that are published, and the fake driver is
 * found through the testkit's {@code provides}, not a {@code META-INF/services} file.
 */
class ModuleDescriptorTest {

    @Test
    void testkitIsANamedModuleThatProvidesTheFakeDriver() {
        assumeTrue(Boolean.getBoolean("sandboxkit.test.modulePath"), "only in the module-path test run");
        Module module = FakeDriver.class.getModule();
        assertThat(module.isNamed()).as("sandbox-testkit's tests must run on the module path").isTrue();
        ModuleDescriptor descriptor = module.getDescriptor();
        assertThat(descriptor.name()).isEqualTo("dev.sandboxkit.testkit");
        assertThat(descriptor.exports().stream().map(ModuleDescriptor.Exports::source).collect(Collectors.toSet()))
                .containsExactlyInAnyOrder("dev.sandboxkit.testkit", "dev.sandboxkit.testkit.tck");
        assertThat(descriptor.provides()).singleElement().satisfies(p -> {
            assertThat(p.service()).isEqualTo(SandboxDriverProvider.class.getName());
            assertThat(p.providers()).containsExactly(FakeDriverProvider.class.getName());
        });

        Module api = SandboxManager.class.getModule();
        assertThat(api.isNamed()).as("sandbox-api on the module path").isTrue();
        assertThat(api.getName()).isEqualTo("dev.sandboxkit");
        assertThat(api.getDescriptor().exports().stream().map(ModuleDescriptor.Exports::source))
                .containsExactlyInAnyOrder("dev.sandboxkit", "dev.sandboxkit.spi");

        // Found by sandbox-api's ServiceLoader through this module's `provides` (no services file is read here).
        try (SandboxManager manager = SandboxManager.builder().driver("fake").build()) {
            assertThat(manager.driverName()).isEqualTo("fake");
        }
    }
}
