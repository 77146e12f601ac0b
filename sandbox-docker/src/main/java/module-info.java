/**
 * The Docker driver: exports only {@link dev.sandboxkit.docker} and provides
 * {@link dev.sandboxkit.spi.SandboxDriverProvider} (named {@code docker}). The engine client, the command channel
 * and the files API ({@code dev.sandboxkit.docker.internal.*}) are not exported.
 */
module dev.sandboxkit.docker {
    requires transitive dev.sandboxkit;
    requires com.fasterxml.jackson.databind;
    requires com.sun.jna;
    requires org.slf4j;

    exports dev.sandboxkit.docker;
    // JNA binds LinuxFs's native methods (direct mapping) by reflection.
    opens dev.sandboxkit.docker.internal.files to com.sun.jna;

    provides dev.sandboxkit.spi.SandboxDriverProvider with dev.sandboxkit.docker.DockerDriverProvider;
}
