package dev.sandboxkit.testkit;

import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SandboxDriverProvider;

import java.util.Optional;

/**
 * Makes the {@link FakeDriver} selectable by name ({@code driver("fake")} or {@code -Dsandboxkit.driver=fake}).
 * It is never picked automatically, so a test that expects Docker cannot silently get the fake.
 */
public final class FakeDriverProvider implements SandboxDriverProvider {

    /** Creates the provider; called by {@link java.util.ServiceLoader}. */
    public FakeDriverProvider() {
    }

    @Override
    public String name() {
        return "fake";
    }

    @Override
    public int priority() {
        return Integer.MIN_VALUE;
    }

    @Override
    public Optional<String> unavailableReason(DriverContext context) {
        return Optional.of("only used when selected by name");
    }

    @Override
    public SandboxDriver create(DriverContext context) {
        return new FakeDriver(context.clock());
    }
}
