package dev.sandboxkit.spi;

import dev.sandboxkit.internal.LegacyCapabilities;

import java.util.Set;

/**
 * A backend that does both halves: {@link ComputeDriver} (sandboxes) and {@link WorkspaceBackend} (workdirs), as one
 * object. New drivers may implement the two halves separately.
 *
 * <p>Capabilities: a driver declares {@link #computeCapabilities()} and {@link #workspaceCapabilities()}. A driver
 * written before the SPI was split declares only the deprecated {@link #capabilities()}; both new sets then derive
 * from it (each {@link DriverCapability} constant has the same name in one of {@link ComputeCapability} and
 * {@link WorkspaceCapability}), so it keeps working unchanged for one minor version. A driver overrides either the
 * old method or the new ones, and a subclass of a driver overrides the same ones as its superclass.
 */
@SuppressWarnings("removal") // capabilities(): the old set, kept for one minor version
public interface SandboxDriver extends ComputeDriver, WorkspaceBackend {

    /**
     * The driver's name, for example {@code docker}.
     *
     * @return name
     */
    @Override
    String name();

    /**
     * Both halves' capabilities as constants of the old single set, for code written before the SPI was split.
     * Default: the union of {@link #computeCapabilities()} and {@link #workspaceCapabilities()}, each constant by its
     * name.
     *
     * @return the capabilities
     * @deprecated declare and read {@link #computeCapabilities()} and {@link #workspaceCapabilities()}; goes in the
     *             next minor version
     */
    @Override
    @Deprecated(since = "0.1.0", forRemoval = true)
    default Set<DriverCapability> capabilities() {
        return LegacyCapabilities.old(computeCapabilities(), workspaceCapabilities());
    }

    /**
     * {@inheritDoc}
     *
     * <p>Default, for a driver that overrides only the deprecated {@link #capabilities()}: the compute constants of
     * that set; for one that overrides neither, none.
     */
    @Override
    default Set<ComputeCapability> computeCapabilities() {
        return LegacyCapabilities.declaresOldSet(this) ? LegacyCapabilities.compute(capabilities()) : Set.of();
    }

    /**
     * {@inheritDoc}
     *
     * <p>Default, for a driver that overrides only the deprecated {@link #capabilities()}: the workspace constants of
     * that set; for one that overrides neither, none.
     */
    @Override
    default Set<WorkspaceCapability> workspaceCapabilities() {
        return LegacyCapabilities.declaresOldSet(this) ? LegacyCapabilities.workspace(capabilities()) : Set.of();
    }
}
