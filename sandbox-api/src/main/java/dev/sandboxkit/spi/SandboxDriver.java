package dev.sandboxkit.spi;


/**
 * A backend that does both halves: {@link ComputeDriver} (sandboxes) and {@link WorkspaceBackend} (workdirs).
 * Kept so drivers written against the single-interface SPI keep working; new drivers implement the two halves.
 */
public interface SandboxDriver extends ComputeDriver, WorkspaceBackend {

    /**
     * The driver's name, for example {@code docker}.
     *
     * @return name
     */
    @Override
    String name();
}
