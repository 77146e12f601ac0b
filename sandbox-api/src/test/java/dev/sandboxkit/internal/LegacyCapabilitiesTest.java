package dev.sandboxkit.internal;

import dev.sandboxkit.spi.ComputeCapability;
import dev.sandboxkit.spi.DriverCapability;
import dev.sandboxkit.spi.WorkspaceCapability;
import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

@SuppressWarnings("removal") // the deprecated set is what the adapter maps
class LegacyCapabilitiesTest {

    @Test
    void everyOldConstantHasOneNameSakeInExactlyOneHalf() {
        for (DriverCapability old : DriverCapability.values()) {
            boolean compute = EnumSet.allOf(ComputeCapability.class).stream().anyMatch(c -> c.name().equals(old.name()));
            boolean workspace = EnumSet.allOf(WorkspaceCapability.class).stream()
                    .anyMatch(c -> c.name().equals(old.name()));
            assertThat(compute ^ workspace).as(old + " is in exactly one half").isTrue();
        }
    }

    @Test
    void theFullOldSetSplitsAndJoinsBackWhole() {
        Set<DriverCapability> all = EnumSet.allOf(DriverCapability.class);
        Set<ComputeCapability> compute = LegacyCapabilities.compute(all);
        Set<WorkspaceCapability> workspace = LegacyCapabilities.workspace(all);

        assertThat(compute.size() + workspace.size()).isEqualTo(all.size());
        assertThat(LegacyCapabilities.old(compute, workspace)).isEqualTo(all);
    }

    @Test
    void constantsWithoutAnOldCounterpartAreLeftOutNotRefused() {
        // Every constant of both halves, including any added after the split: none may make the adapter throw.
        Set<DriverCapability> old = LegacyCapabilities.old(EnumSet.allOf(ComputeCapability.class),
                EnumSet.allOf(WorkspaceCapability.class));

        assertThat(old).isEqualTo(EnumSet.allOf(DriverCapability.class));
        assertThat(LegacyCapabilities.compute(EnumSet.noneOf(DriverCapability.class))).isEmpty();
    }
}
