package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.spi.DriverCapability;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.testkit.FakeDriver;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fake driver against the conformance kit. It runs no processes, so it does not declare
 * {@link DriverCapability#REAL_PROCESSES} and the shell-level tests are skipped; its in-memory workdir
 * ({@link dev.sandboxkit.testkit.FakeExec#files()}) is exercised through the kit's write and read commands,
 * which are scripted here the way a user would script them.
 *
 * <p>Both kits ({@link SandboxDriverTck}): the fake has one variant. The kits' test count per driver is this class's
 * minus its own test.
 */
@DisplayName("FakeDriver conformance")
class FakeDriverTckTest extends SandboxDriverTck {

    @Override
    protected SandboxDriver createDriver(DriverContext context) {
        return new FakeDriver(context.clock())
                .when(e -> isWriteFileCommand(e.command()), e -> {
                    e.files().put(e.command().get(5), e.command().get(4).getBytes(StandardCharsets.UTF_8));
                    return FakeDriver.result(0, "", "");
                })
                .when(e -> e.command().size() == 2 && e.command().get(0).equals("cat"), e -> {
                    byte[] content = e.files().get(e.command().get(1));
                    return content == null
                            ? FakeDriver.result(1, "", "cat: can't open '" + e.command().get(1) + "': No such file\n")
                            : FakeDriver.result(0, new String(content, StandardCharsets.UTF_8), "");
                });
    }

    @Test
    @DisplayName("the fake never claims to run real processes")
    void honestCapabilities() {
        try (FakeDriver fake = new FakeDriver()) {
            assertThat(fake.capabilities()).doesNotContain(DriverCapability.REAL_PROCESSES,
                    DriverCapability.KILL_PROCESS_GROUP, DriverCapability.HOST_WORKSPACE);
        }
    }
}
