/**
 * The Docker driver: exports only {@link dev.sandboxkit.docker} and provides
 * {@link dev.sandboxkit.spi.SandboxDriverProvider} (named {@code docker}). The engine client, the command channel
 * and the files API ({@code dev.sandboxkit.docker.internal.*}) are not exported.
 */
module dev.sandboxkit.docker {
    requires transitive dev.sandboxkit;
    // docker-java has no module descriptor; these are its Automatic-Module-Names (stable, set by docker-java).
    requires com.github.dockerjava.api;
    requires com.github.dockerjava.core;
    requires com.github.dockerjava.transport;
    requires com.github.dockerjava.transport.zerodep;
    // As automatic modules, docker-java's jars read every module in the graph but bring none in: the explicit modules
    // docker-java-core uses at run time are required here so that they are resolved (none is part of this API).
    requires com.google.common;
    requires org.apache.commons.compress;
    requires org.apache.commons.io;
    requires org.apache.commons.lang3;
    requires com.fasterxml.jackson.databind;
    requires com.sun.jna;
    requires org.slf4j;

    exports dev.sandboxkit.docker;
    // JNA binds LinuxFs's native methods (direct mapping) by reflection.
    opens dev.sandboxkit.docker.internal.files to com.sun.jna;

    provides dev.sandboxkit.spi.SandboxDriverProvider with dev.sandboxkit.docker.DockerDriverProvider;
}
