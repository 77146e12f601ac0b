package dev.sandboxkit.testkit.tck;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;

/**
 * The conformance kit for the compute half of a driver ({@link dev.sandboxkit.spi.ComputeDriver}): create, exec
 * (stdin, timeouts, kills, process groups, streaming), shell sessions, background processes, terminals, port
 * forwarding, remove and list, and the labels and races around them. Extend it in a test class and return a new
 * driver from {@link #createDriver(dev.sandboxkit.spi.DriverContext)}:
 *
 * <pre>{@code
 * class MyDriverComputeTckTest extends ComputeDriverTck {
 *     @Override
 *     protected SandboxDriver createDriver(DriverContext context) {
 *         return new MyDriver(context);
 *     }
 * }
 * }</pre>
 *
 * <p>The driver is a whole {@link dev.sandboxkit.spi.SandboxDriver}, since every sandbox mounts a workdir; this kit
 * asks of the workspace half only that it creates and deletes workdirs. The rest of that half is
 * {@link WorkspaceBackendTck}'s. How the tests run (a real manager on a manual clock, capabilities, the commands
 * the image needs, clean-up) is described in the {@linkplain dev.sandboxkit.testkit.tck package}.
 */
public abstract class ComputeDriverTck extends DriverKit {

    /** For subclasses. */
    protected ComputeDriverTck() {
    }

    @Nested
    @DisplayName("lifecycle")
    class Lifecycle extends LifecycleConformance {
        Lifecycle() {
            super(ComputeDriverTck.this);
        }
    }

    @Nested
    @DisplayName("exec")
    class Exec extends ExecConformance {
        Exec() {
            super(ComputeDriverTck.this);
        }
    }

    @Nested
    @DisplayName("shell sessions")
    class ShellSessions extends ShellSessionConformance {
        ShellSessions() {
            super(ComputeDriverTck.this);
        }
    }

    @Nested
    @DisplayName("background processes")
    class BackgroundProcesses extends BackgroundProcessConformance {
        BackgroundProcesses() {
            super(ComputeDriverTck.this);
        }
    }

    /** Tagged, so that a driver's terminal conformance can be run alone: {@code -Dgroups=terminals}. */
    @Nested
    @Tag("terminals")
    @DisplayName("terminals (PTY)")
    class Terminals extends TerminalConformance {
        Terminals() {
            super(ComputeDriverTck.this);
        }
    }

    @Nested
    @DisplayName("labels and ownership")
    class Labels extends LabelConformance {
        Labels() {
            super(ComputeDriverTck.this);
        }
    }

    @Nested
    @DisplayName("concurrency")
    class Concurrency extends ConcurrencyConformance {
        Concurrency() {
            super(ComputeDriverTck.this);
        }
    }

    @Nested
    @DisplayName("port forwarding")
    class Forwarding extends ForwardingConformance {
        Forwarding() {
            super(ComputeDriverTck.this);
        }
    }
}
