package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

/**
 * Both conformance kits on one driver that implements both halves ({@link SandboxDriver}): every test of
 * {@link ComputeDriverTck} and of {@link WorkspaceBackendTck}, as the nested groups {@code compute} and
 * {@code workspace}, on the driver {@link #createDriver(DriverContext)} returns and the {@link #spec()} it gives.
 * It is the single kit of before the SPI split under the same name, so a subclass written for that kit runs every
 * test unchanged. A setting that changes only one half (how execs travel, say) needs only that half's kit again.
 *
 * <pre>{@code
 * class MyDriverTckTest extends SandboxDriverTck {
 *     @Override
 *     protected SandboxDriver createDriver(DriverContext context) {
 *         return new MyDriver(context);
 *     }
 * }
 * }</pre>
 */
public abstract class SandboxDriverTck extends DriverKit {

    /** For subclasses. */
    protected SandboxDriverTck() {
    }

    @Nested
    @DisplayName("compute")
    class Compute extends ComputeDriverTck {
        @Override
        protected SandboxDriver createDriver(DriverContext context) {
            return SandboxDriverTck.this.createDriver(context);
        }

        @Override
        protected SandboxSpec spec() {
            return SandboxDriverTck.this.spec();
        }
    }

    @Nested
    @DisplayName("workspace")
    class Workspace extends WorkspaceBackendTck {
        @Override
        protected SandboxDriver createDriver(DriverContext context) {
            return SandboxDriverTck.this.createDriver(context);
        }

        @Override
        protected SandboxSpec spec() {
            return SandboxDriverTck.this.spec();
        }
    }
}
