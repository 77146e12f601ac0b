/**
 * The service-provider interfaces: what a backend driver and a session store implement.
 *
 * <p>Drivers are found with {@link java.util.ServiceLoader} through
 * {@link dev.sandboxkit.spi.SandboxDriverProvider}. Stores are passed to
 * {@link dev.sandboxkit.SandboxManager.Builder#store}. The conformance kits in {@code sandbox-testkit}
 * ({@code ComputeDriverTck}, {@code WorkspaceBackendTck}, {@code SessionStoreTck}) define the expected behaviour
 * precisely.
 *
 * <p>Nullness: the package is {@code @NullMarked} (JSpecify): a type is non-null unless it is annotated
 * {@code @Nullable}, and the build checks that with NullAway.
 */
@NullMarked
package dev.sandboxkit.spi;

import org.jspecify.annotations.NullMarked;
