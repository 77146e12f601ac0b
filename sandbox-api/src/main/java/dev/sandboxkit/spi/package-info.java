/**
 * The service-provider interfaces: what a backend driver and a session store implement.
 *
 * <p>Drivers are found with {@link java.util.ServiceLoader} through
 * {@link dev.sandboxkit.spi.SandboxDriverProvider}. Stores are passed to
 * {@link dev.sandboxkit.SandboxManager.Builder#store}. The conformance kits in {@code sandbox-testkit}
 * ({@code SandboxDriverTck}, {@code SessionStoreTck}) define the expected behaviour precisely.
 */
package dev.sandboxkit.spi;
