package dev.sandboxkit.testkit;

import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SandboxDriverProvider;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A provider for the extension's own tests: hands out fake drivers and keeps them, so a test can look
 * at what the extension left behind after the fixture class has finished. Selected by name only.
 */
public final class SpyDriverProvider implements SandboxDriverProvider {
    static final String NAME = "spy";
    static final List<FakeDriver> CREATED = new CopyOnWriteArrayList<>();

    /** Called by the ServiceLoader. */
    public SpyDriverProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int priority() {
        return Integer.MIN_VALUE;
    }

    @Override
    public Optional<String> unavailableReason(DriverContext context) {
        return Optional.of("test-only, used when selected by name");
    }

    @Override
    public SandboxDriver create(DriverContext context) {
        FakeDriver driver = new FakeDriver(context.clock());
        CREATED.add(driver);
        return driver;
    }
}
