package dev.sandboxkit.internal;

import dev.sandboxkit.spi.ComputeCapability;
import dev.sandboxkit.spi.ComputeDriver;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.WorkspaceCapability;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * The adapter between the single capability set of the unsplit driver SPI ({@code DriverCapability}, declared by
 * {@code SandboxDriver.capabilities()}) and the two sets of its halves. Each old constant has the same name in exactly
 * one of the new enums ({@code LegacyCapabilitiesTest} checks it).
 */
@SuppressWarnings("removal") // the deprecated set is what this class adapts
public final class LegacyCapabilities {
    // Whether a driver class declares capabilities() itself (an old-SPI driver) rather than inheriting the default.
    private static final ClassValue<Boolean> DECLARES_OLD_SET = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
            try {
                Class<?> declaring = type.getMethod("capabilities").getDeclaringClass();
                return declaring != SandboxDriver.class && declaring != ComputeDriver.class;
            } catch (NoSuchMethodException e) {
                return false;
            }
        }
    };

    private LegacyCapabilities() {
    }

    /**
     * Whether a driver declares the old set itself; only then do the new sets derive from it.
     *
     * @param driver the driver
     * @return true if its class (or a superclass) overrides {@code capabilities()}
     */
    public static boolean declaresOldSet(SandboxDriver driver) {
        return DECLARES_OLD_SET.get(driver.getClass());
    }

    /**
     * The compute part of an old set.
     *
     * @param old the old set
     * @return the compute capabilities among it, unmodifiable
     */
    public static Set<ComputeCapability> compute(Set<dev.sandboxkit.spi.DriverCapability> old) {
        return part(ComputeCapability.class, old);
    }

    /**
     * The workspace part of an old set.
     *
     * @param old the old set
     * @return the workspace capabilities among it, unmodifiable
     */
    public static Set<WorkspaceCapability> workspace(Set<dev.sandboxkit.spi.DriverCapability> old) {
        return part(WorkspaceCapability.class, old);
    }

    private static <E extends Enum<E>> Set<E> part(Class<E> type, Set<dev.sandboxkit.spi.DriverCapability> old) {
        Set<E> out = EnumSet.noneOf(type);
        for (E e : EnumSet.allOf(type)) {
            // Constants added after the split have no old counterpart: an old driver cannot declare them.
            oldConstant(e.name()).filter(old::contains).ifPresent(c -> out.add(e));
        }
        return Collections.unmodifiableSet(out);
    }

    /**
     * The old set of both halves' sets, for code that still reads {@code capabilities()}; constants added after
     * the split have no old counterpart and are left out.
     *
     * @param compute   the compute capabilities
     * @param workspace the workspace capabilities
     * @return their union as old constants, unmodifiable
     */
    public static Set<dev.sandboxkit.spi.DriverCapability> old(Set<ComputeCapability> compute,
                                                             Set<WorkspaceCapability> workspace) {
        Set<dev.sandboxkit.spi.DriverCapability> out = EnumSet.noneOf(dev.sandboxkit.spi.DriverCapability.class);
        compute.forEach(c -> oldConstant(c.name()).ifPresent(out::add));
        workspace.forEach(c -> oldConstant(c.name()).ifPresent(out::add));
        return Collections.unmodifiableSet(out);
    }

    private static java.util.Optional<dev.sandboxkit.spi.DriverCapability> oldConstant(String name) {
        for (dev.sandboxkit.spi.DriverCapability c : dev.sandboxkit.spi.DriverCapability.values()) {
            if (c.name().equals(name)) {
                return java.util.Optional.of(c);
            }
        }
        return java.util.Optional.empty();
    }
}
