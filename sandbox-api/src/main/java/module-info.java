/**
 * The sandboxkit API ({@link dev.sandboxkit}) and the driver and store SPIs ({@link dev.sandboxkit.spi}), the only
 * exported packages. The lifecycle engine ({@code dev.sandboxkit.internal}) is not exported.
 *
 * <p>Drivers are found through {@link java.util.ServiceLoader}: a driver module {@code provides}
 * {@link dev.sandboxkit.spi.SandboxDriverProvider} (on the class path, a {@code META-INF/services} file does the same).
 */
module dev.sandboxkit {
    // The @NullMarked / @Nullable annotations on the API: needed to compile against it, not to run it.
    requires static transitive org.jspecify;
    requires org.slf4j;
    requires com.github.benmanes.caffeine;

    exports dev.sandboxkit;
    exports dev.sandboxkit.spi;

    uses dev.sandboxkit.spi.SandboxDriverProvider;
}
